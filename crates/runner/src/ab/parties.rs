//! What every question is run with, and what it does with its parties: each block a fresh
//! process of every party the run starts, on a fresh clone of the seeded database; the
//! contract checked before the first window; one window, its database restored first for
//! a write.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bookstore_client::engine::LoadPlan;
use bookstore_record::environment::Build;
use bookstore_record::results::Cell;
use bookstore_registry::Tuning;

use crate::ab::side::Side;
use crate::harness::database::BenchDatabase;
use crate::harness::server::ServerProcess;
use crate::http::{Target, measure};
use crate::suite::resume::{self, Header, Opened, environment_differs, settings_differ};

/// A question's journal opened ([`resume::open`]) by `harness` for `results`, as `kind`:
/// refused where its build, machine or settings (`parts`), or its parties and request
/// (`same`), are not this question's.
pub(crate) fn open_journal<H: Header, W: serde::de::DeserializeOwned, S: serde::Serialize>(
    kind: &str,
    (harness, resume): (&Harness, Option<&Path>),
    results: &H,
    parts: impl Fn(&H) -> (&bookstore_record::Environment, &S),
    same: impl Fn(&H, &H) -> bool,
) -> anyhow::Result<Opened<H, W>> {
    let differs = |header: &H| {
        let ((then_machine, then), (now_machine, now)) = (parts(header), parts(results));
        environment_differs(then_machine, now_machine)
            .or_else(|| settings_differ(then, now))
            .or_else(|| {
                (!same(header, results))
                    .then(|| "its parties or request differ; give the command that began it".into())
            })
    };
    resume::open(kind, &harness.output, results, resume, differs, ("loadgen ab", "blocks"))
}

/// How a question's parties are started and measured, and where its record goes.
pub struct Harness {
    /// What a stack the run starts is started with.
    pub tuning: Tuning,
    /// Where the stacks' binaries are.
    pub bin_dir: PathBuf,
    /// Client threads.
    pub client_workers: usize,
    /// Fully validate one accepted response in this many per connection.
    pub validate_every: u64,
    /// An existing PostgreSQL server instead of a throwaway one (its user needs CREATEDB).
    pub database_url: Option<String>,
    /// Where a throwaway server comes from.
    pub db_provider: bookstore_fixture::Provider,
    /// The results file, rewritten after every block.
    pub output: PathBuf,
    /// The workspace (its build settings, for the record).
    pub workspace: PathBuf,
    /// The command line, for the record (its secrets redacted there).
    pub command_line: Vec<String>,
    /// What the measuring binary was built from.
    pub build: Build,
    /// Set to stop after the current window (Ctrl-C).
    pub stop: Arc<AtomicBool>,
}

impl Harness {
    /// The database the parties run on: a throwaway server (or the one given), with room
    /// for `parties` pools.
    pub(crate) fn database(&self, parties: usize) -> anyhow::Result<BenchDatabase> {
        let connections = parties as u32 * self.tuning.pool_max + 20;
        BenchDatabase::open(self.database_url.as_deref(), self.db_provider, false, connections)
    }

    /// The run's id: the results file's stem.
    pub(crate) fn id(&self) -> String {
        match bookstore_record::document::stem(&self.output) {
            stem if stem.is_empty() => bookstore_record::environment::file_stamp(),
            stem => stem,
        }
    }

    /// The command line as the record keeps it.
    pub(crate) fn recorded_command_line(&self) -> Vec<String> {
        use bookstore_domain::store::redact_credentials;
        self.command_line.iter().map(|a| redact_credentials(a).into_owned()).collect()
    }

    /// Where the parties' logs go: beside the results file.
    pub(crate) fn logs(&self) -> anyhow::Result<PathBuf> {
        let logs = bookstore_record::document::beside(&self.output, "logs");
        std::fs::create_dir_all(&logs)?;
        Ok(logs)
    }
}

/// What a party runs on during one block.
pub(crate) struct Running {
    pub(crate) url: String,
    /// Its process, when the run started it (stopped when dropped).
    pub(crate) process: Option<ServerProcess>,
    /// Its database, when the run gave it one (restored before a write window).
    pub(crate) database: Option<String>,
}

/// The parties of block `block`: a fresh process of each the run starts, each on a fresh
/// clone of the seeded database (its state as seeded, whatever the last process left).
pub(crate) fn start(
    harness: &Harness,
    parties: &[(String, Side)],
    mut database: Option<&mut BenchDatabase>,
    block: usize,
    logs: &Path,
) -> anyhow::Result<Vec<Running>> {
    let mut running = Vec::with_capacity(parties.len());
    for (index, (label, side)) in parties.iter().enumerate() {
        let name = format!("ab_{index}");
        let entry = match side {
            Side::Url(url) => {
                let database =
                    database.as_deref().and_then(|d| d.target_database().ok().map(str::to_owned));
                Running { url: url.clone(), process: None, database }
            }
            side => {
                let database =
                    database.as_deref_mut().expect("a database for a side the run starts");
                let url = database.fresh(&name)?;
                let process = side
                    .start(
                        &format!("{label}-{block}"),
                        &harness.bin_dir,
                        &harness.tuning,
                        &url,
                        logs,
                    )
                    .map_err(|e| anyhow::anyhow!("{label}: did not start: {e}"))?;
                let addr = process.as_ref().map(|p| p.addr()).expect("a side the run starts");
                Running { url: format!("http://{addr}"), process, database: Some(name) }
            }
        };
        running.push(entry);
    }
    Ok(running)
}

/// Before the first window: each party answers the scenario as the contract says.
pub(crate) fn check_contract(
    request: &Target,
    labels: &[&str],
    running: &[Running],
) -> anyhow::Result<()> {
    let Target::Scenario(scenario) = request else { return Ok(()) };
    for (label, side) in labels.iter().zip(running) {
        let addr = side
            .url
            .trim_start_matches("http://")
            .parse()
            .map_err(|e| anyhow::anyhow!("{}: {e}", side.url))?;
        for check in crate::harness::contract::validate_stack(addr, &[*scenario]) {
            if !check.passed {
                anyhow::bail!(
                    "{label} ({}) does not keep the contract at {}: {}",
                    side.url,
                    check.scenario,
                    check.problem.unwrap_or_default()
                );
            }
        }
    }
    Ok(())
}

/// One window of `side` under `plan`, its database restored first for a write scenario.
pub(crate) fn window(
    harness: &Harness,
    request: &Target,
    path: &str,
    plan: &LoadPlan,
    side: &Running,
    database: Option<&mut BenchDatabase>,
) -> anyhow::Result<Cell> {
    if let (Target::Scenario(scenario), Some(database), Some(name)) =
        (request, database, &side.database)
        && scenario.writes()
    {
        database.restore(name)?;
    }
    let url = format!("{}{path}", side.url);
    measure(&url, request, plan, harness.validate_every)
}

/// What both are asked, as the record names it: a scenario's name, or the one request's
/// method and path.
pub(crate) fn request_name(request: &Target, path: &str) -> String {
    let name = match request {
        Target::Scenario(scenario) => scenario.name().to_owned(),
        Target::Request(spec) => {
            let method = spec
                .method
                .clone()
                .unwrap_or_else(|| if spec.body.is_some() { "POST" } else { "GET" }.into());
            method.to_ascii_uppercase()
        }
    };
    if path.is_empty() { name } else { format!("{name} {path}") }
}
