//! Before the rounds: the results document begun, every stack given its database,
//! started, checked against the contract and kept running (or, for stacks someone else
//! started, checked where they run).

use bookstore_record::results::StackStatus;
use std::time::Duration;

use bookstore_domain::store::redact_credentials;
use bookstore_registry::stacks::StackInfo;

use crate::harness::database;
use crate::harness::placement::{self, Tier};
use crate::harness::server::{self, ServerProcess};
use crate::suite::options::{RELAY, RELAY_CALIBRATION_SAMPLES, SuiteOptions, parity};
use crate::suite::running::PreparedStack;
use crate::suite::state::Suite;
use bookstore_record::results::{
    Ceilings, RelayCalibration, RunInfo, RunResults, SCHEMA, SCHEMA_VERSION, Settings, ShardInfo,
    StackResults,
};
use bookstore_record::warnings::{Warning, WarningKind};

impl Suite<'_> {
    /// Gives every stack its database, starts it, checks it against the contract, and
    /// keeps it running.
    pub(crate) fn prepare_stacks(&mut self) -> anyhow::Result<()> {
        if let Some(addresses) = self.options.running.clone() {
            return self.prepare_running(&addresses);
        }
        // The stacks, then the variants: each a party of its own, under its label.
        let parties: Vec<(String, StackInfo, Option<crate::suite::Variant>)> = self
            .options
            .stacks
            .iter()
            .map(|s| (s.identity.service.to_owned(), *s, None))
            .chain(
                self.options.variants.iter().map(|v| (v.label.clone(), v.stack, Some(v.clone()))),
            )
            .collect();
        for (label, stack, variant) in parties {
            if self.stopped() {
                break;
            }
            let database = format!("bench_{}", label.replace(|c: char| !c.is_alphanumeric(), "_"));
            let mut url = self.running.database.fresh(&database)?;
            let mut relay_pid = None;
            let mut args = stack.args(&self.options.tuning);
            if let Some(variant) = &variant {
                args = variant.apply(&args);
            }
            let name = label.as_str();
            let index = self.add_stack(name, None);
            if stack.kind == bookstore_registry::stacks::Kind::Composed {
                let entry = &mut self.ledger.results.stacks[index];
                entry.launch =
                    std::iter::once(stack.binary.to_owned()).chain(stack.launch_args()).collect();
            }
            if let Some(variant) = &variant {
                let entry = &mut self.ledger.results.stacks[index];
                entry.variant_of = Some(stack.identity.service.to_owned());
                entry.args = variant.args.clone();
                entry.db_latency_us = variant.db_latency.map(|l| l.as_micros() as u64);
                entry.idle_connections = variant.idle_connections;
            }
            if let Some(latency) = variant.as_ref().and_then(|v| v.db_latency) {
                match self.start_relay(name, &url, latency) {
                    Ok((relayed, pid)) => (url, relay_pid) = (relayed, Some(pid)),
                    Err(error) => {
                        self.stack_failed(
                            index,
                            StackStatus::Failed,
                            format!("its database relay: {error}"),
                        )?;
                        continue;
                    }
                }
            }
            let binary = self.options.bin_dir.join(stack.binary);
            // In the environment, not the arguments: those are visible to every user in `ps`.
            let env = [("DATABASE_URL", url.as_str())];
            let log = self.logs.join(format!("{name}.log"));
            let started =
                ServerProcess::start(name, &binary, &args, &env, log).and_then(|mut server| {
                    server.wait_ready("/health/db").map(|ready| (server, ready))
                });
            let (server, ready) = match started {
                Ok(started) => started,
                Err(error) => {
                    self.stack_failed(
                        index,
                        StackStatus::Failed,
                        format!("did not start: {error}"),
                    )?;
                    continue;
                }
            };
            // Placed once ready: its runtime's threads exist, and threads it starts later
            // (a blocking pool's) inherit their creator's CPUs.
            self.place(Tier::Server, server.pid()).map_err(anyhow::Error::msg)?;
            self.ledger.results.stacks[index].ready_ms = Some(ready.as_millis() as u64);
            let idle_connections = variant.as_ref().and_then(|v| v.idle_connections);
            // A party measured with idle connections is checked with them held, as its
            // windows will run.
            let held = match idle_connections {
                Some(count) => {
                    let (connections, held) =
                        crate::suite::window::hold_idle(server.addr(), count, Some(server.pid()))?;
                    if held.refused > 0 {
                        let why = format!(
                            "refused {} of {count} idle connections (see its log and its open-files limit)",
                            held.refused
                        );
                        self.stack_failed(index, StackStatus::Failed, why)?;
                        continue;
                    }
                    Some(connections)
                }
                None => None,
            };
            let context = idle_connections
                .map_or(String::new(), |n| format!("with {n} idle connections held, "));
            if !self.check_contract(index, server.addr(), &context)? {
                continue;
            }
            let with = idle_connections
                .map_or(String::new(), |n| format!(" with {n} idle connections held"));
            drop(held);
            self.progress.note(&format!(
                "{name}: ready in {} ms, contract check passed{with}",
                ready.as_millis()
            ));
            self.running.prepared.push(PreparedStack {
                index,
                database,
                addr: server.addr(),
                relay_pid,
                idle_connections,
            });
            self.running.servers.push(Some(server));
        }
        Ok(())
    }

    /// The stacks someone else started: checked against the contract where they run, on
    /// their database restored to the seed first (the checks read seeded rows).
    fn prepare_running(&mut self, addresses: &[std::net::SocketAddr]) -> anyhow::Result<()> {
        let database = self.running.database.target_database()?.to_owned();
        for (stack, &address) in self.options.stacks.iter().zip(addresses) {
            if self.stopped() {
                break;
            }
            let name = stack.identity.service;
            let index = self.add_stack(name, Some(address));
            if let Err(why) = server::wait_answering(address, "/health/db") {
                self.stack_failed(index, StackStatus::Failed, format!("at {address}: {why}"))?;
                continue;
            }
            if self.options.coordinates() {
                self.running.database.restore(&database)?;
            }
            if stack.kind == bookstore_registry::stacks::Kind::Foreign {
                // A server of one's own: every check the contract allows over HTTP first.
                let failures =
                    crate::harness::contract::foreign_failures(address, &self.options.scenarios);
                if !failures.is_empty() {
                    let why = format!(
                        "at {address}: refused, it does not keep the contract: {}",
                        failures.join("; ")
                    );
                    self.stack_failed(index, StackStatus::Failed, why)?;
                    continue;
                }
                if self.options.coordinates() {
                    self.running.database.restore(&database)?;
                }
            }
            if !self.check_contract(index, address, &format!("at {address}: "))? {
                continue;
            }
            self.progress.note(&format!("{name} at {address}: contract check passed"));
            self.running.prepared.push(PreparedStack {
                index,
                database: database.clone(),
                addr: address,
                relay_pid: None,
                idle_connections: None,
            });
            self.running.servers.push(None);
        }
        Ok(())
    }

    /// Measures the database latency relay — the `db-relay` binary the parties run, in front
    /// of an echo server on loopback — at each round trip they ask for, before anything else
    /// runs; recorded in the results.
    pub(crate) fn calibrate_relays(&mut self) -> anyhow::Result<()> {
        for latency in self.options.db_latencies() {
            let echo = bookstore_relay::EchoServer::start()?;
            let relay = self
                .spawn_relay("calibration", echo.addr(), latency)
                .map_err(|e| anyhow::anyhow!("the database relay for calibration: {e}"))?;
            let calibration = bookstore_relay::measure(
                echo.addr(),
                relay.addr(),
                latency,
                RELAY_CALIBRATION_SAMPLES,
            )
            .map_err(|e| anyhow::anyhow!("calibrating the database relay: {e}"))?;
            self.progress.note(&format!(
                "database relay asked for {latency:?}: adds {:.0} µs at the median, {:.0} µs at p99 here",
                calibration.added_p50.as_secs_f64() * 1e6,
                calibration.added_p99.as_secs_f64() * 1e6
            ));
            self.ledger.results.db_relay_calibration.push(RelayCalibration {
                round_trip_us: calibration.target.as_micros() as u64,
                samples: calibration.samples,
                added_p50_us: calibration.added_p50.as_secs_f64() * 1e6,
                added_p99_us: calibration.added_p99.as_secs_f64() * 1e6,
            });
        }
        Ok(())
    }

    /// Starts `db-relay` (from the binaries' directory) in front of the database of `url`,
    /// adding `latency` to each round trip, kept running to the end of the run; the URL
    /// through it, and its process id.
    pub(crate) fn start_relay(
        &mut self,
        name: &str,
        url: &str,
        latency: Duration,
    ) -> Result<(String, u32), String> {
        let relay = self.spawn_relay(name, bookstore_relay::url_address(url)?, latency)?;
        let relayed = bookstore_relay::url_through(url, relay.addr())?;
        let pid = relay.pid();
        self.running.relays.push(relay);
        Ok((relayed, pid))
    }

    /// A `db-relay` process forwarding to `upstream` with `latency` added, listening (and
    /// placed, with `--cpus`).
    fn spawn_relay(
        &mut self,
        name: &str,
        upstream: std::net::SocketAddr,
        latency: Duration,
    ) -> Result<ServerProcess, String> {
        let binary = self.options.bin_dir.join(RELAY);
        let args = [
            "run".to_owned(),
            "--upstream".to_owned(),
            upstream.to_string(),
            "--round-trip".to_owned(),
            format!("{}us", latency.as_micros()),
        ];
        let log = self.logs.join(format!("{name}.relay.log"));
        let mut relay = ServerProcess::start(&format!("{name} relay"), &binary, &args, &[], log)?;
        relay.wait_listening()?;
        self.place(Tier::Relay, relay.pid())?;
        Ok(relay)
    }

    /// Pins `pid` and its descendants to the CPUs `--cpus` gives `tier`, if any — the first
    /// process of a tier records what the kernel reported back — or, for a tier not named
    /// while the client is placed, to every CPU the client had before (a child inherits its
    /// parent's CPUs).
    pub(crate) fn place(&mut self, tier: Tier, pid: u32) -> Result<(), String> {
        match self.options.placement.as_ref().and_then(|p| p.cpus(tier)) {
            Some(cpus) => {
                let got = placement::pin(pid, cpus)?;
                self.record_placement(tier, got);
            }
            None => {
                if let Some(anywhere) = &self.running.unplaced {
                    placement::pin(pid, anywhere)?;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn record_placement(&mut self, tier: Tier, got: placement::TierCpusOf) {
        let recorded = &mut self.ledger.results.settings.cpu_placement;
        if !recorded.iter().any(|t| t.tier == tier.name()) {
            recorded.push(got.record(tier));
        }
    }

    /// A stack's entry in the results, `measured` until something says otherwise; its index.
    fn add_stack(&mut self, name: &str, address: Option<std::net::SocketAddr>) -> usize {
        self.ledger.results.stacks.push(StackResults {
            name: name.to_owned(),
            status: StackStatus::Measured,
            failure: None,
            ready_ms: None,
            address: address.map(|a| a.to_string()),
            variant_of: None,
            args: Vec::new(),
            db_latency_us: None,
            idle_connections: None,
            launch: Vec::new(),
            validation: Vec::new(),
            cells: Vec::new(),
            equal_load: Vec::new(),
        });
        self.ledger.results.stacks.len() - 1
    }

    /// The contract check of stack `index` at `addr`, recorded; a failing stack is marked
    /// `failed` (the reason prefixed with `context`). Whether it passed.
    fn check_contract(
        &mut self,
        index: usize,
        addr: std::net::SocketAddr,
        context: &str,
    ) -> anyhow::Result<bool> {
        let validation = crate::harness::contract::validate_stack(addr, &self.options.scenarios);
        let failed: Vec<String> = validation
            .iter()
            .filter(|v| !v.passed)
            .map(|v| format!("{}: {}", v.scenario, v.problem.as_deref().unwrap_or("")))
            .collect();
        self.ledger.results.stacks[index].validation = validation;
        if failed.is_empty() {
            return Ok(true);
        }
        let why = format!("{context}does not meet the contract: {}", failed.join("; "));
        self.stack_failed(index, StackStatus::Failed, why)?;
        Ok(false)
    }
}

/// The results document as it starts: environment, settings, no cells yet.
pub(crate) fn new_results(
    options: &SuiteOptions,
    database: &mut database::BenchDatabase,
) -> RunResults {
    let environment = bookstore_record::environment::capture(
        options.build,
        &options.workspace,
        database.describe(),
    );
    let id = bookstore_record::document::stem(&options.output);
    let shards: Vec<ShardInfo> = options
        .shard
        .iter()
        .map(|shard| ShardInfo {
            index: shard.index,
            count: shard.count,
            start_at_unix_seconds: shard.start_at_unix_seconds,
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_owned()),
            cpu_model: environment.cpu_model.clone(),
            cpu_count: environment.cpu_count,
            run_id: id.clone(),
        })
        .collect();
    let warnings = options
        .shard
        .iter()
        .map(|shard| {
            Warning::from(WarningKind::ShardOnly { index: shard.index, count: shard.count })
        })
        .collect();
    let settle = options.settle_limits();
    RunResults {
        schema: SCHEMA.to_owned(),
        schema_version: SCHEMA_VERSION,
        // `--database-url` may carry a password; results are shared.
        run: RunInfo::running(
            id,
            options.command_line.iter().map(|arg| redact_credentials(arg).into_owned()).collect(),
        ),
        shards,
        environment,
        settings: Settings {
            stacks: options
                .stacks
                .iter()
                .map(|s| s.identity.service.to_owned())
                .chain(options.variants.iter().map(|v| v.label.clone()))
                .collect(),
            scenarios: options.scenarios.iter().map(|s| s.name().to_owned()).collect(),
            measurement: options.measurement.clone(),
            warmup_max_seconds: settle.map(|(warmup, _)| warmup.as_secs_f64()),
            window_max_seconds: settle.map(|(_, window)| window.as_secs_f64()),
            pool_max: options.tuning.pool_max,
            server_workers: options.tuning.workers,
            blocking_threads: options.tuning.blocking_threads,
            client_workers: options.client_workers,
            database: database.kind().to_owned(),
            parity: parity(),
            rates: options.equal_load_rates().to_vec(),
            arrivals: (!options.equal_load_rates().is_empty()).then_some(options.arrivals),
            cpu_placement: Vec::new(),
            objectives: options.objectives.clone(),
        },
        ceilings: Ceilings::default(),
        stacks: Vec::new(),
        warnings,
        db_relay_calibration: Vec::new(),
    }
}
