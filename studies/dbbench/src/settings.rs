//! What a run sweeps, in one record: [`Settings`] is at once the flags of `dbbench run`
//! (clap), the `settings` of the results file (serde, field by field as `DBBENCH.md`
//! describes them) and the page's list of settings, which shows any field it has no row of
//! its own for under the field's name. A setting added here is therefore a flag, a field
//! of the results and a line of the page without being written anywhere else.

use clap::builder::RangedU64ValueParser;
use serde::{Deserialize, Serialize};

use crate::dimensions::Database;

// Each default has a shorter one under `--quick`; the help says it as `[quick: …]` and a
// test checks that what it says is what `--quick` sets.
/// What a run sweeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Parser)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// A short sweep: every setting marked [quick: …] takes that value unless given.
    #[arg(long)]
    pub quick: bool,
    /// Rounds: every cell is measured this many times, the styles (or libraries) compared
    /// side by side in each round, their order rotating [quick: 2].
    #[arg(long, default_value = "3", default_value_if("quick", "true", "2"),
        value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Connections per pool of the CRUD benchmark and the batch job, comma-separated
    /// [quick: 10,30].
    #[arg(long, value_delimiter = ',', default_value = "10,30,60",
        default_value_if("quick", "true", "10,30"), value_parser = clap::value_parser!(u32).range(1..))]
    pub pool_sizes: Vec<u32>,
    /// Parallel workers of the CRUD benchmark, comma-separated [quick: 1,8].
    #[arg(long, value_delimiter = ',', default_value = "1,4,8,14",
        default_value_if("quick", "true", "1,8"), value_parser = at_least_one())]
    pub crud_workers: Vec<usize>,
    /// Unmeasured time before each CRUD window [quick: 0.1].
    #[arg(long, default_value = "0.2", default_value_if("quick", "true", "0.1"),
        value_parser = seconds)]
    pub crud_warmup_seconds: f64,
    /// Each CRUD window [quick: 0.3].
    #[arg(long, default_value = "0.5", default_value_if("quick", "true", "0.3"),
        value_parser = window_seconds)]
    pub crud_window_seconds: f64,
    /// Users the CRUD operations work on, refilled before every operation [quick: 2000].
    #[arg(long, default_value = "10000", default_value_if("quick", "true", "2000"),
        value_parser = clap::value_parser!(i64).range(1..))]
    pub crud_users: i64,
    /// Orders of each of those users.
    #[arg(long, default_value = "10", value_parser = clap::value_parser!(i64).range(1..))]
    pub crud_orders_per_user: i64,
    /// Rows per bulk insert, comma-separated [quick: 1000,10000].
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000",
        default_value_if("quick", "true", "1000,10000"), value_parser = at_least_one())]
    pub bulk_rows: Vec<usize>,
    /// Source rows of the batch job, comma-separated [quick: 1000,10000].
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000",
        default_value_if("quick", "true", "1000,10000"), value_parser = at_least_one())]
    pub batch_rows: Vec<usize>,
    /// Partitions the batch job processes at once, comma-separated [quick: 1,4].
    #[arg(long, value_delimiter = ',', default_value = "1,4,8",
        default_value_if("quick", "true", "1,4"), value_parser = at_least_one())]
    pub batch_parallelism: Vec<usize>,
    /// Tasks of threads against tasks.
    #[arg(long, default_value = "10000", value_parser = at_least_one())]
    pub tasks: usize,
    /// Each task's wait.
    #[arg(long, default_value = "100")]
    pub task_wait_ms: u64,
    /// Tasks of the blocking-inside-async variants (fewer: they run serially by design)
    /// [quick: 20].
    #[arg(long, default_value = "40", default_value_if("quick", "true", "20"),
        value_parser = at_least_one())]
    pub blocking_tasks: usize,
    /// Workers of the small runtime those run on.
    #[arg(long, default_value = "2", value_parser = at_least_one())]
    pub small_runtime_workers: usize,
    /// Connections of the diesel pool the database variants of threads against tasks
    /// query through.
    #[arg(long, default_value = "30", value_parser = clap::value_parser!(u32).range(1..))]
    pub task_query_pool: u32,
    /// `throwaway`, `container` or `existing`: where PostgreSQL came from. Not a flag: the
    /// run sets it from `--database-url` and `--db-provider`.
    #[arg(skip)]
    pub database: String,
    /// Databases of the bulk and batch sections, comma-separated: MariaDB and SQLite when
    /// built in (features `mariadb`, `sqlite`), else said in the results.
    #[arg(long, value_delimiter = ',', value_enum, default_value = "postgres,mariadb,sqlite")]
    pub databases: Vec<Database>,
}

impl Settings {
    /// The settings `dbbench run` measures with when given `flags` (flags of this record
    /// only, such as `--quick`).
    pub fn from_flags(flags: &[&str]) -> Result<Self, clap::Error> {
        <Self as clap::Parser>::try_parse_from(
            std::iter::once("dbbench run").chain(flags.iter().copied()),
        )
    }
}

fn at_least_one() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..)
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("{text} is not a number of seconds (0 or more)")),
    }
}

fn window_seconds(text: &str) -> Result<f64, String> {
    let value = seconds(text)?;
    if value > 0.0 { Ok(value) } else { Err("a window of 0 s measures nothing".to_owned()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_full_and_quick_sweeps_are_the_ones_the_results_record() {
        let full = Settings::from_flags(&[]).unwrap();
        let kept = include_str!("../../../summary/results/dbbench-2026-12-01T16-20-01Z.json");
        let kept: serde_json::Value = serde_json::from_str(kept).unwrap();
        let recorded: Settings = serde_json::from_value(kept["settings"].clone()).unwrap();
        assert_eq!(Settings { database: recorded.database.clone(), ..full }, recorded);
        let quick = Settings::from_flags(&["--quick"]).unwrap();
        let expected = serde_json::json!({
            "quick": true, "rounds": 2, "pool_sizes": [10, 30], "crud_workers": [1, 8],
            "crud_warmup_seconds": 0.1, "crud_window_seconds": 0.3, "crud_users": 2000,
            "crud_orders_per_user": 10, "bulk_rows": [1000, 10000],
            "batch_rows": [1000, 10000], "batch_parallelism": [1, 4], "tasks": 10000,
            "task_wait_ms": 100, "blocking_tasks": 20, "small_runtime_workers": 2,
            "task_query_pool": 30, "database": "", "databases": ["postgres", "mariadb", "sqlite"]
        });
        assert_eq!(serde_json::to_value(&quick).unwrap(), expected);
        let given = Settings::from_flags(&["--quick", "--rounds", "5", "--databases", "sqlite"]);
        let given = given.unwrap();
        assert_eq!((given.rounds, given.databases), (5, vec![Database::Sqlite]));
    }

    #[test]
    fn the_help_says_what_quick_sets() {
        let full = serde_json::to_value(Settings::from_flags(&[]).unwrap()).unwrap();
        let quick = serde_json::to_value(Settings::from_flags(&["--quick"]).unwrap()).unwrap();
        let as_flag = |value: &serde_json::Value| match value {
            serde_json::Value::Array(items) => {
                items.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
            }
            other => other.to_string(),
        };
        for arg in Settings::command().get_arguments() {
            let id = arg.get_id().as_str();
            let (Some(full), Some(quick)) = (full.get(id), quick.get(id)) else { continue };
            if id == "quick" {
                continue;
            }
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let said = help.split("[quick: ").nth(1).and_then(|rest| rest.split(']').next());
            match said {
                Some(said) => assert_eq!(said, as_flag(quick), "--{id}"),
                None => assert_eq!(full, quick, "--{id} changes under --quick: say so"),
            }
        }
    }

    #[test]
    fn a_count_or_a_window_of_nothing_is_refused() {
        for flags in [["--pool-sizes", "0"], ["--crud-window-seconds", "0"], ["--tasks", "0"]] {
            assert!(Settings::from_flags(&flags).is_err(), "{flags:?}");
        }
        assert!(Settings::from_flags(&["--crud-warmup-seconds", "-1"]).is_err());
    }
}
