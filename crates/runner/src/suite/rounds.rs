//! The suite's run: the database and the parties prepared once, then the blocks of
//! windows, each planned (`plan`) before it runs and run one window at a time
//! (`window`); the results file written as they come in.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::harness::database;
use crate::harness::placement::{self, Tier};
use crate::suite::ledger::{Ledger, Spent};
use crate::suite::plan;
use crate::suite::progress::Progress;
use crate::suite::running::Running;
use crate::suite::sampler::BackendSampler;
use crate::suite::state::Suite;
use crate::suite::{SuiteOptions, shard};
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
        let logs = bookstore_record::document::beside(&options.output, "logs");
        std::fs::create_dir_all(&logs)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
        let max_connections = options.database_connections();
        let mut database = database::BenchDatabase::open(
            options.database_url.as_deref(),
            options.db_provider,
            options.measurement.durable,
            max_connections,
        )?;
        let results = crate::suite::prepare::new_results(options, &mut database);
        let backends = BackendSampler::connect(&database.maintenance_url());
        let mut suite = Suite {
            options,
            progress: Progress::new(options.total_windows()),
            stop,
            logs,
            running: Running::new(database, backends),
            ledger: Ledger::new(results, options.output.clone()),
        };
        if let Some((client, before)) = client {
            suite.record_placement(Tier::Client, client);
            suite.running.unplaced = Some(before);
        }
        let place_db = options.placement.as_ref().is_some_and(|p| p.cpus(Tier::Db).is_some());
        match suite.running.database.postgres_pid() {
            Some(postgres) => suite.place(Tier::Db, postgres).map_err(anyhow::Error::msg)?,
            None if place_db => anyhow::bail!(
                "--cpus db=…: PostgreSQL runs where the suite cannot see its processes (a container); place it there"
            ),
            None => {}
        }
        suite.calibrate_relays()?;
        if !suite.running.database.statements_available() {
            suite.progress.note("pg_stat_statements is not available on this server: SQL statements per request are not measured");
        }
        if options.total_rounds() < MIN_ROUNDS {
            let rounds = options.total_rounds();
            suite.ledger.results.warnings.push(Warning::from(WarningKind::FewRounds { rounds }));
        }
        suite.check_resume()?;
        suite.ledger.save_now()?;
        let measured = suite
            .prepare_stacks()
            .and_then(|()| suite.open_journal())
            .and_then(|()| suite.measure());
        if let Err(error) = measured {
            // What was measured before the failure stays in the file (and in the journal,
            // to resume from).
            suite.ledger.save_now()?;
            return Err(error);
        }
        suite.progress.finish();
        // Stop what the run started before the results say it is over.
        suite.running.servers.clear();
        suite.running.responder = None;
        suite.ledger.results.run.status = bookstore_record::RunStatus::ended(suite.stopped());
        suite.ledger.results.run.finished_at = Some(now_rfc3339());
        suite.ledger.results.run.wall_seconds = Some(suite.ledger.began.elapsed().as_secs_f64());
        suite.ledger.save_now()?;
        Ok(suite.ledger.results)
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
            let groups = self.options.round_groups(scenario, self.running.prepared.len());
            let rounds = self.options.total_rounds();
            let before = self.ledger.spent;
            let schedule = self.options.measurement.schedule;
            self.run_block(&plan::closed_block(scenario, &groups, 0..rounds, schedule, &mut turn))?;
            let block = Spent {
                windows: self.ledger.spent.windows - before.windows,
                seconds: self.ledger.spent.seconds - before.seconds,
            };
            // A tail question spends its time on the fixed-load rounds instead.
            if self.options.measurement.tail_question.is_none() {
                self.extend(scenario, &groups, block, &mut turn)?;
            }
            if self.stopped() {
                return Ok(());
            }
            // The cap on the open loop's connections: as many as the closed loop ever held.
            let Some(&cap) = self.options.measurement.concurrency.iter().max() else { continue };
            for offer in self.offers(scenario) {
                let stacks = self.running.prepared.len();
                let started = std::time::Instant::now();
                self.run_block(&plan::offered_block(
                    scenario,
                    stacks,
                    cap,
                    offer,
                    0..rounds,
                    schedule,
                    &mut turn,
                ))?;
                let per_round = started.elapsed().as_secs_f64() / f64::from(rounds);
                self.ask_tails(scenario, cap, offer, per_round, &mut turn)?;
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
            &self.running.prepared,
        );
        self.run_block(&schedule)
    }
}
