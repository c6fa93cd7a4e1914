//! `summary/db-microbench.html`: the page of a `dbbench` results file, in the summary's
//! style (tables and inline SVG charts, nothing fetched). Every number on it comes from the
//! results file; every verdict is drawn by the workspace's method (`bookstore-stats`).
//!
//! One module per section, each turning the results into a typed context — the statistics
//! through `bookstore_stats`, the numbers formatted — that the template of the same name
//! in `templates/` writes, with the section's prose; `format` holds what they share.

mod batch;
mod bulk;
mod crud;
mod format;
mod method;
mod tasks;

use std::collections::BTreeMap;

use bookstore_report::charts::Legend;
use serde::Serialize;

use crate::measure::Access;
use crate::results::DbBenchResults;

const PAGE: &str = include_str!("../../templates/db-microbench.html");

/// The templates the page imports, by the names it imports them under.
const SECTIONS: [(&str, &str); 6] = [
    ("cells.html", include_str!("../../templates/cells.html")),
    ("crud.html", include_str!("../../templates/crud.html")),
    ("bulk.html", include_str!("../../templates/bulk.html")),
    ("batch.html", include_str!("../../templates/batch.html")),
    ("tasks.html", include_str!("../../templates/tasks.html")),
    ("method.html", include_str!("../../templates/method.html")),
];

#[derive(Debug, Serialize)]
struct Page {
    title: &'static str,
    run: bookstore_record::RunInfo,
    legend: Vec<Legend>,
    crud: crud::Crud,
    bulk: bulk::Bulk,
    batch: batch::Batch,
    tasks: tasks::Tasks,
    /// The run's settings, every value formatted.
    settings: BTreeMap<String, serde_json::Value>,
    method: method::Method,
    skipped: Vec<String>,
}

/// The page of `results`.
pub fn render(results: &DbBenchResults) -> anyhow::Result<String> {
    let mut environment = bookstore_report::page::page_environment("db-microbench.html", PAGE)?;
    for (name, source) in SECTIONS {
        environment.add_template(name, source)?;
    }
    let settings = method::settings(results);
    let named = environment.get_template("method.html")?.undeclared_variables(true);
    let page = Page {
        title: "Database access without HTTP: sqlx on tasks, diesel on threads",
        run: results.run.clone(),
        legend: Access::ALL
            .iter()
            .map(|a| Legend {
                colour: format::access_colour(*a),
                label: format::access_label(*a).to_owned(),
            })
            .collect(),
        crud: crud::context(results),
        bulk: bulk::context(results),
        batch: batch::context(results),
        tasks: tasks::context(results),
        method: method::context(results, method::unlisted(&settings, &named)),
        settings,
        skipped: results.skipped.clone(),
    };
    Ok(environment.get_template("db-microbench.html")?.render(minijinja::value::Serde(&page))?)
}
