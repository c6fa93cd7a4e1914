//! The method and environment section: the settings, the machine, the databases, the
//! caveats; what `templates/method.html` writes.
//!
//! The settings reach the template as they are in the results, every value formatted
//! ([`settings`]); the template writes a row for the fields it names, and any field it
//! does not name is listed under its own name ([`unlisted`]) — so a setting added to
//! [`Settings`](crate::settings::Settings) is on the page without being written here.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::dimensions::Database;
use crate::results::DbBenchResults;

/// Fields of the settings the page does not list: the databases asked for are the ones the
/// bulk and batch sections show, or that "Not run" names.
const NOT_LISTED: [&str; 1] = ["databases"];

/// The method section's context.
#[derive(Debug, Serialize)]
pub(super) struct Method {
    /// Settings the template does not name, by name, with their values.
    unlisted: Vec<(String, Value)>,
    command: String,
    wall_seconds: Option<String>,
    cpu: String,
    kernel: String,
    postgres: String,
    postgres_settings: String,
    rustc: String,
    release_profile: String,
    commit: String,
    /// The other databases the run used, in its order.
    databases: Vec<OtherDatabase>,
    /// The false discovery rate of every family of comparisons, in percent.
    false_discovery_rate_percent: String,
}

/// The settings of `results`, each field a value as the page writes it: numbers and lists
/// of them as text, strings and flags as they are.
pub(super) fn settings(results: &DbBenchResults) -> BTreeMap<String, Value> {
    let Value::Object(fields) =
        serde_json::to_value(&results.settings).expect("settings serialize")
    else {
        unreachable!("the settings are a struct")
    };
    fields.into_iter().map(|(name, value)| (name, formatted(value))).collect()
}

fn formatted(value: Value) -> Value {
    fn text(value: &Value) -> String {
        match value {
            Value::Number(n) if n.is_f64() => n.as_f64().unwrap_or_default().to_string(),
            Value::Array(items) => {
                format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(", "))
            }
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    match value {
        Value::Bool(_) | Value::String(_) => value,
        other => Value::String(text(&other)),
    }
}

#[derive(Debug, Serialize)]
struct OtherDatabase {
    database: Database,
    label: &'static str,
    /// Its version and settings.
    about: String,
}

/// The fields of `settings` that `named` (the template's variables, `settings.<field>`)
/// does not name, and that are not [`NOT_LISTED`].
pub(super) fn unlisted(
    settings: &BTreeMap<String, Value>,
    named: &HashSet<String>,
) -> Vec<(String, Value)> {
    settings
        .iter()
        .filter(|(name, _)| {
            !named.contains(&format!("settings.{name}")) && !NOT_LISTED.contains(&name.as_str())
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// The section's context; `unlisted` the settings the template does not name.
pub(super) fn context(results: &DbBenchResults, unlisted: Vec<(String, Value)>) -> Method {
    let e = &results.environment;
    let pairs = |settings: &BTreeMap<String, String>| {
        settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
    };
    Method {
        unlisted,
        command: results.run.command_line.join(" "),
        wall_seconds: results.run.wall_seconds.map(|s| format!("{s:.0}")),
        cpu: format!("{} × {}", e.cpu_count, e.cpu_model.clone().unwrap_or_default()),
        kernel: e.kernel.clone().unwrap_or_default(),
        postgres: e.postgres_version.clone().unwrap_or_default(),
        postgres_settings: pairs(&e.postgres_settings),
        rustc: e.rustc.clone().unwrap_or_default(),
        release_profile: e.release_profile.clone(),
        commit: e.git_commit.clone().unwrap_or_default(),
        databases: results
            .databases
            .iter()
            .filter(|d| d.database != Database::Postgres)
            .map(|d| OtherDatabase {
                database: d.database,
                label: d.database.label(),
                about: format!("{}; {}", d.version, pairs(&d.settings)),
            })
            .collect(),
        false_discovery_rate_percent: (bookstore_stats::FALSE_DISCOVERY_RATE * 100.0).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_the_template_does_not_name_is_listed_by_its_name() {
        let settings: BTreeMap<String, Value> = [
            ("rounds".to_owned(), formatted(serde_json::json!(3))),
            ("pool_sizes".to_owned(), formatted(serde_json::json!([10, 30]))),
            ("crud_window_seconds".to_owned(), formatted(serde_json::json!(1.0))),
            ("databases".to_owned(), formatted(serde_json::json!(["postgres"]))),
        ]
        .into();
        let named: HashSet<String> = ["settings.rounds".to_owned()].into();
        let listed = unlisted(&settings, &named);
        assert_eq!(
            listed,
            [
                ("crud_window_seconds".to_owned(), Value::from("1")),
                ("pool_sizes".to_owned(), Value::from("[10, 30]"))
            ]
        );
    }
}
