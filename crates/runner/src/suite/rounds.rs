//! The suite's run: the database and the parties prepared once, then the blocks of
//! windows, each planned (`plan`) before it runs and run one window at a time
//! (`window`); the results file written as they come in.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::sampler::BackendSampler;
use super::{SuiteOptions, shard};
use crate::harness::database;
use crate::harness::placement::{self, Tier};
use crate::suite::extend::Spent;
use crate::suite::plan;
use crate::suite::progress::Progress;
use crate::suite::state::Suite;
use bookstore_record::environment::now_rfc3339;
use bookstore_record::results::RunResults;
use bookstore_record::warnings::{MIN_ROUNDS, Warning, WarningKind};

impl<'a> Suite<'a> {
    /// The whole run: database, stacks, rounds, results.
    pub(crate) fn run(
        options: &'a SuiteOptions,
        stop: Arc<AtomicBool>,
    ) -> anyhow::Result<RunResults> {
        let client_cpus = options.placement.as_ref().and_then(|p| p.cpus(Tier::Client));
        let Some(cpus) = client_cpus else { return Self::run_placed(options, stop, None) };
        let before = placement::affinity(std::process::id()).map_err(anyhow::Error::msg)?;
        // Every thread of this process, until the run ends however it ends.
        let _give_back = placement::GiveBack(before.clone());
        let got = placement::pin_own_threads(cpus).map_err(anyhow::Error::msg)?;
        Self::run_placed(options, stop, Some((got, before)))
    }

    /// The run, the client already placed where `client` says (with the CPUs it had
    /// before: what the tiers not named get, rather than inherit the client's).
    fn run_placed(
        options: &'a SuiteOptions,
        stop: Arc<AtomicBool>,
        client: Option<(placement::TierCpusOf, Vec<usize>)>,
    ) -> anyhow::Result<RunResults> {
        let logs = options.output.with_extension("logs");
        std::fs::create_dir_all(&logs)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
        let max_connections = options.database_connections();
        let mut database = database::BenchDatabase::open(
            options.database_url.as_deref(),
            options.db_provider,
            options.measurement.durable,
            max_connections,
        )?;
        let results = super::prepare::new_results(options, &mut database);
        let backends = BackendSampler::connect(&database.maintenance_url());
        let mut suite = Suite {
            options,
            database,
            results,
            progress: Progress::new(options.total_windows()),
            stop,
            logs,
            prepared: Vec::new(),
            processes: Vec::new(),
            relays: Vec::new(),
            responder: None,
            db_ceiling_url: None,
            backends,
            started: std::time::Instant::now(),
            spent: Spent::default(),
            saved: None,
            ceiling_relays: Vec::new(),
            unplaced: None,
        };
        if let Some((client, before)) = client {
            suite.record_placement(Tier::Client, client);
            suite.unplaced = Some(before);
        }
        let place_db = options.placement.as_ref().is_some_and(|p| p.cpus(Tier::Db).is_some());
        match suite.database.postgres_pid() {
            Some(postgres) => suite.place(Tier::Db, postgres).map_err(anyhow::Error::msg)?,
            None if place_db => anyhow::bail!(
                "--cpus db=…: PostgreSQL runs where the suite cannot see its processes (a container); place it there"
            ),
            None => {}
        }
        suite.calibrate_relays()?;
        if !suite.database.statements_available() {
            suite.progress.note("pg_stat_statements is not available on this server: SQL statements per request are not measured");
        }
        if options.total_rounds() < MIN_ROUNDS {
            let rounds = options.total_rounds();
            suite.results.warnings.push(Warning::from(WarningKind::FewRounds { rounds }));
        }
        suite.save_now()?;
        if let Err(error) = suite.prepare_stacks().and_then(|()| suite.measure()) {
            // What was measured before the failure stays in the file.
            suite.save_now()?;
            return Err(error);
        }
        suite.progress.finish();
        // Stop what the run started before the results say it is over.
        suite.processes.clear();
        suite.responder = None;
        suite.results.run.status = bookstore_record::RunStatus::ended(suite.stopped());
        suite.results.run.finished_at = Some(now_rfc3339());
        suite.results.run.wall_seconds = Some(suite.started.elapsed().as_secs_f64());
        suite.save_now()?;
        Ok(suite.results)
    }

    /// The blocks: per scenario, its closed-loop rounds (every party once per round, in the
    /// groups of `--schedule`, the order rotating), more rounds for its families still open
    /// (`extend`), then its fixed-load rounds, each block planned before it runs.
    fn measure(&mut self) -> anyhow::Result<()> {
        if self.options.shard.is_some() {
            return self.measure_on_schedule();
        }
        let mut turn = 0;
        for scenario in self.options.scenarios.clone() {
            let groups = self.options.round_groups(scenario, self.prepared.len());
            let rounds = self.options.total_rounds();
            let before = self.spent;
            let schedule = self.options.measurement.schedule;
            self.run_block(&plan::closed_block(scenario, &groups, rounds, schedule, &mut turn))?;
            let block = Spent {
                windows: self.spent.windows - before.windows,
                seconds: self.spent.seconds - before.seconds,
            };
            self.extend(scenario, &groups, block, &mut turn)?;
            if self.stopped() {
                return Ok(());
            }
            // The cap on the open loop's connections: as many as the closed loop ever held.
            let Some(&cap) = self.options.measurement.concurrency.iter().max() else { continue };
            for offer in self.offers(scenario) {
                let stacks = self.prepared.len();
                self.run_block(&plan::offered_block(
                    scenario, stacks, cap, offer, rounds, schedule, &mut turn,
                ))?;
            }
        }
        Ok(())
    }

    /// The rounds of a shard: like [`Self::measure`] without ceilings, each window in its
    /// slot of the schedule every shard shares.
    fn measure_on_schedule(&mut self) -> anyhow::Result<()> {
        if let Some(shard) = self.options.shard {
            let ready_by = shard.setup_start(0, self.options.slot_timing());
            if let Ok(late) = std::time::SystemTime::now().duration_since(ready_by) {
                anyhow::bail!(
                    "shard {} of {} was ready {:.1} s after the first setup began ({:.1} s before --start-at): its stack checks could have written during the other shards' measurement; start again with a later --start-at",
                    shard.index,
                    shard.count,
                    late.as_secs_f64(),
                    shard::SETUP.as_secs_f64()
                );
            }
        }
        let schedule = plan::shard_schedule(
            &self.options.scenarios,
            &self.options.measurement.concurrency,
            self.options.total_rounds(),
            self.options.stacks.len(),
            &self.prepared,
        );
        self.run_block(&schedule)
    }
}
