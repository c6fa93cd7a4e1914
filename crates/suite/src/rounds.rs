//! The suite's orchestration: stacks prepared once, then blocks of rounds.
//!
//! A block is one scenario at one concurrency. Its parties (every stack that passed the
//! contract check, and the scenario's ceiling) each measure one window per round; the order
//! of the parties rotates by one from round to round (over the whole run), so each is
//! measured first, in the middle and last equally often and the machine's drift falls on
//! all of them alike. Windows of one round are what the report pairs.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::sampler::BackendSampler;
use super::{SuiteOptions, shard};
use crate::progress::Progress;
use crate::state::{Suite, Window, rotated};
use bookstore_client::scenario::Scenario;
use bookstore_harness::database;
use bookstore_harness::placement::{self, Tier};
use bookstore_record::results::RunResults;
use bookstore_record::warnings::{MIN_ROUNDS, Warning, WarningKind};
use bookstore_report::environment::now_rfc3339;

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
            options.durable,
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
        suite.results.run.status = if suite.stopped() { "interrupted" } else { "complete" }.into();
        suite.results.run.finished_at = Some(now_rfc3339());
        suite.results.run.wall_seconds = Some(suite.started.elapsed().as_secs_f64());
        suite.save_now()?;
        Ok(suite.results)
    }

    /// The blocks: per scenario and concurrency, every party once per round, the order
    /// rotating.
    fn measure(&mut self) -> anyhow::Result<()> {
        if self.options.shard.is_some() {
            return self.measure_on_schedule();
        }
        let mut turn = 0;
        for scenario in self.options.scenarios.clone() {
            self.closed_rounds(scenario, &mut turn)?;
            if self.stopped() {
                return Ok(());
            }
            self.equal_load(scenario, &mut turn)?;
        }
        Ok(())
    }

    /// The closed-loop rounds of `scenario`: in each, every window of
    /// [`SuiteOptions::round_windows`], in an order that rotates from round to round.
    fn closed_rounds(&mut self, scenario: Scenario, turn: &mut usize) -> anyhow::Result<()> {
        let windows = self.options.round_windows(scenario, self.prepared.len());
        for round in 0..self.options.total_rounds() {
            for window in rotated(&windows, turn) {
                if self.stopped() {
                    return Ok(());
                }
                match window {
                    Window::HttpCeiling(concurrency) => {
                        self.http_ceiling(scenario, concurrency, round)?
                    }
                    Window::DbCeiling { driver, clients, db_latency } => {
                        self.db_ceiling(scenario, round, driver, clients, db_latency)?
                    }
                    Window::Stack(stack, concurrency) => {
                        self.stack_window(stack, scenario, concurrency, round, None, None)?
                    }
                }
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
        let stacks = self.options.stacks.len();
        let mut turn = 0;
        for scenario in self.options.scenarios.clone() {
            for concurrency in self.options.concurrency.clone() {
                for round in 0..self.options.total_rounds() {
                    let mut order: Vec<usize> = (0..stacks).collect();
                    order.rotate_left(turn as usize % stacks.max(1));
                    for stack in order {
                        if self.stopped() {
                            return Ok(());
                        }
                        // Stacks that failed here keep their slots (other shards may measure them).
                        let Some(prepared) = self.prepared.iter().position(|p| p.index == stack)
                        else {
                            continue;
                        };
                        let slot = shard::slot(turn, stack, stacks);
                        self.stack_window(
                            prepared,
                            scenario,
                            concurrency,
                            round,
                            Some(slot),
                            None,
                        )?;
                    }
                    turn += 1;
                }
            }
        }
        Ok(())
    }
}
