//! One window of a round, run and recorded: the HTTP ceiling's, a database ceiling's or a
//! stack's, with its audit, CPU, memory and statements, and the warnings it raised.

use bookstore_record::results::StackStatus;
use std::sync::Arc;
use std::time::Duration;

use crate::harness::placement::Tier;
use crate::harness::server::ServerProcess;
use crate::suite::options::RESPONDER;
use crate::suite::plan::PlannedWindow;
use crate::suite::plan::{DbClients, Offer, Window};
use crate::suite::running::{DB_CEILING_DATABASE, Target};
use crate::suite::sampler::CpuSampler;
use crate::suite::state::{Suite, UNJUSTIFIED_REFUSAL};
use crate::suite::{ceiling, shard};
use bookstore_client::engine::{self, LiveCounter, LoadReport};
use bookstore_client::scenario::{self, Scenario};
use bookstore_record::results::{Cell, IdleHeld, LoadMode, OpenLoop, ShardPart, SqlStats};
use bookstore_record::warnings::{self, Warning, WarningKind};

impl Suite<'_> {
    /// Runs one planned window: the party's window at its concurrency, in its round.
    pub(crate) fn run_window(&mut self, window: &PlannedWindow) -> anyhow::Result<()> {
        let PlannedWindow { scenario, round, party, offer, slot } = *window;
        match party {
            Window::HttpCeiling(concurrency) => self.http_ceiling(scenario, concurrency, round),
            Window::DbCeiling { driver, clients, db_latency } => {
                self.db_ceiling(scenario, round, driver, clients, db_latency)
            }
            Window::Stack(stack, concurrency) => {
                self.stack_window(stack, scenario, concurrency, round, slot, offer)
            }
        }
    }

    /// The responder's window beside the stacks' at `concurrency`.
    pub(crate) fn http_ceiling(
        &mut self,
        scenario: Scenario,
        concurrency: u32,
        round: u32,
    ) -> anyhow::Result<()> {
        if self.running.responder.is_none() {
            let binary = self.options.bin_dir.join(RESPONDER);
            let args = vec!["--threads".to_owned(), self.options.tuning.workers.to_string()];
            let log = self.logs.join("responder.log");
            let mut responder = ServerProcess::start(RESPONDER, &binary, &args, &[], log)
                .map_err(anyhow::Error::msg)?;
            responder
                .wait_ready("/health")
                .map_err(|e| anyhow::anyhow!("the responder did not start: {e}"))?;
            self.place(Tier::Server, responder.pid()).map_err(anyhow::Error::msg)?;
            self.running.responder = Some(responder);
        }
        let responder = self.running.responder.as_ref().expect("started above");
        let target = Target {
            addr: responder.addr(),
            pid: Some(responder.pid()),
            relay_pid: None,
            database: None,
        };
        let label = format!("ceiling http  {scenario}  c={concurrency}  round {}", round + 1);
        let at = WindowAt { label: &label, scenario, concurrency, round, slot: None, offer: None };
        let cell = self.http_cell(at, &target)?;
        self.ledger.results.ceilings.http.push(cell);
        Ok(())
    }

    /// The database ceiling's window through `driver`: one client per pooled connection,
    /// whatever the stacks' concurrency — a stack can never have more than `pool_max`
    /// statements in flight, and more clients than connections mostly measure the pool's
    /// queue (which made this "ceiling" lower than the stacks it bounds: 183 vs 211
    /// aggregate reports/s at 256 clients, 270 at 32) — or as many clients as the stacks
    /// have connections at one concurrency.
    ///
    /// A pool-size window does not depend on the stacks' concurrency, so it is measured
    /// once per round and recorded beside each concurrency of the round: one cell per
    /// concurrency, the same measurement (the same `started_seconds`).
    ///
    /// With a `db_latency`, its pool reaches the database through a relay adding that round
    /// trip (one per latency, started at its first window and kept to the end of the run).
    pub(crate) fn db_ceiling(
        &mut self,
        scenario: Scenario,
        round: u32,
        driver: ceiling::Driver,
        clients: DbClients,
        db_latency: Option<Duration>,
    ) -> anyhow::Result<()> {
        let name = DB_CEILING_DATABASE;
        let direct = match &self.running.db_ceiling_url {
            Some(url) => url.clone(),
            None => {
                let url = self.running.database.fresh(name)?;
                self.running.db_ceiling_url = Some(url.clone());
                url
            }
        };
        let (url, relay_pid) = match db_latency {
            None => (direct, None),
            Some(latency) => self.ceiling_relay(&direct, latency)?,
        };
        let pool = self.options.tuning.pool_max;
        let (concurrency, beside) = match clients {
            DbClients::Pool => (pool, self.options.measurement.concurrency.clone()),
            DbClients::Stacks(concurrency) => (concurrency, vec![concurrency]),
        };
        let beside_text: Vec<String> = beside.iter().map(u32::to_string).collect();
        let workers = self.options.client_workers.max(1).min(pool as usize);
        let per_thread_pool = pool.div_ceil(workers as u32);
        if scenario.writes() {
            self.running.database.restore(name)?;
        }
        let relayed =
            db_latency.map_or(String::new(), |l| format!(" +{}", humantime::format_duration(l)));
        let label = format!(
            "ceiling db {}{relayed}  {scenario}  c={concurrency} (beside {})  round {}",
            driver.name(),
            beside_text.join(", "),
            round + 1
        );
        let load = Arc::new(bookstore_client::scenario::ScenarioLoad::new(scenario, "ceiling"));
        let live = Arc::new(LiveCounter::new(workers));
        let mut plan = self.options.plan(concurrency, &self.stop, &live);
        plan.workers = workers;
        let mut sampler = CpuSampler::new(None, self.running.database.postgres_pid(), relay_pid);
        self.running.database.reset_statements(name);
        let ticker = self.progress.running(label.clone(), live);
        let started = self.ledger.began.elapsed().as_secs_f64();
        let pool = ceiling::StorePool { url, per_thread: per_thread_pool };
        let report = ceiling::run(driver, &plan, pool, scenario, Arc::clone(&load), &mut sampler)
            .map_err(|e| {
            anyhow::anyhow!("the {} database ceiling could not open its pool: {e}", driver.name())
        })?;
        drop(ticker);
        let at = WindowAt { label: &label, scenario, concurrency, round, slot: None, offer: None };
        let mut cell = self.finish_cell(at, &report, &sampler, None, Some((name, &load)))?;
        cell.driver = Some(driver.name().to_owned());
        cell.db_latency_us = db_latency.map(|l| l.as_micros() as u64);
        cell.started_seconds = Some(started);
        for concurrency in beside {
            let mut cell = cell.clone();
            cell.beside_concurrency = Some(concurrency);
            self.ledger.results.ceilings.db.push(cell);
        }
        Ok(())
    }

    /// The URL of the database ceiling's database through a relay adding `latency`, and
    /// the relay's process id: started at the first window that needs it.
    fn ceiling_relay(
        &mut self,
        direct: &str,
        latency: Duration,
    ) -> anyhow::Result<(String, Option<u32>)> {
        if let Some((_, url, pid)) =
            self.running.ceiling_relays.iter().find(|(l, _, _)| *l == latency)
        {
            return Ok((url.clone(), Some(*pid)));
        }
        let name = format!("ceiling.db{}", humantime::format_duration(latency)).replace(' ', "");
        let (url, pid) = self
            .start_relay(&name, direct, latency)
            .map_err(|e| anyhow::anyhow!("the database ceiling's relay: {e}"))?;
        self.running.ceiling_relays.push((latency, url.clone(), pid));
        Ok((url, Some(pid)))
    }

    /// One window of a stack: a shard's in its `slot`, with its share of the connections;
    /// with an `offer`, the open loop of the fixed-load phase (`concurrency` its cap).
    pub(crate) fn stack_window(
        &mut self,
        prepared: usize,
        scenario: Scenario,
        concurrency: u32,
        round: u32,
        slot: Option<u64>,
        offer: Option<Offer>,
    ) -> anyhow::Result<()> {
        let stack = self.running.prepared[prepared].clone();
        if self.ledger.results.stacks[stack.index].status != StackStatus::Measured {
            return Ok(()); // crashed in an earlier window
        }
        let name = self.ledger.results.stacks[stack.index].name.clone();
        if let Some(exit) = self.running.servers[prepared].as_mut().and_then(ServerProcess::exited)
        {
            return self.stack_failed(stack.index, StackStatus::Crashed, exit);
        }
        let load = match offer {
            None => format!("c={concurrency}"),
            Some(offer) => format!("{:.0} req/s", offer.rate_rps),
        };
        let label = format!("{name}  {scenario}  {load}  round {}", round + 1);
        let pid = self.running.servers[prepared].as_ref().map(ServerProcess::pid);
        let target = Target {
            addr: stack.addr,
            pid,
            relay_pid: stack.relay_pid,
            database: Some(&stack.database),
        };
        let at = WindowAt { label: &label, scenario, concurrency, round, slot, offer };
        let idle = match stack.idle_connections {
            Some(count) => Some(hold_idle(stack.addr, count, pid)?),
            None => None,
        };
        let mut cell = self.http_cell(at, &target)?;
        cell.db_latency_us = self.ledger.results.stacks[stack.index].db_latency_us;
        if let Some((connections, mut held)) = idle {
            let status = connections.close();
            held.dropped = status.dropped;
            held.pings = status.pings;
            if held.refused > 0 || held.dropped > 0 {
                let (asked, refused, dropped) = (held.asked, held.refused, held.dropped);
                cell.warnings.push(WarningKind::IdleNotHeld { asked, refused, dropped }.into());
            }
            cell.idle = Some(held);
        }
        let exit = self.running.servers[prepared].as_mut().and_then(ServerProcess::exited);
        if let Some(exit) = &exit {
            cell.warnings.push(Warning::from(WarningKind::ServerCrashed { detail: exit.clone() }));
        }
        let stack_results = &mut self.ledger.results.stacks[stack.index];
        match offer {
            None => stack_results.cells.push(cell),
            Some(_) => stack_results.equal_load.push(cell),
        }
        match exit {
            Some(exit) => self.stack_failed(stack.index, StackStatus::Crashed, exit),
            None => Ok(()),
        }
    }

    /// One window of HTTP load; a shard's in its `slot`, with its share of the connections.
    fn http_cell(&mut self, at: WindowAt<'_>, target: &Target<'_>) -> anyhow::Result<Cell> {
        let WindowAt { label, scenario, concurrency, slot, offer, .. } = at;
        let coordinates = self.options.coordinates();
        let timing = self.options.slot_timing();
        let schedule = self.options.shard.zip(slot);
        if let (true, Some((shard, slot))) = (coordinates, schedule) {
            // Right before the slot: the other shards' previous window has drained.
            shard::wait_until(shard.setup_start(slot, timing), &self.stop);
        }
        if let (true, true, Some(database)) = (coordinates, scenario.writes(), target.database) {
            self.running.database.restore(database)?;
        }
        let load = Arc::new(bookstore_client::scenario::ScenarioLoad::new(
            scenario,
            &target.addr.to_string(),
        ));
        if let Some(pid) = target.pid {
            bookstore_client::procfs::reset_peak_rss(pid);
        }
        let waits = match (coordinates, target.database) {
            (true, Some(database)) => {
                self.running.database.reset_statements(database);
                self.running.backends.as_ref().map(|sampler| sampler.window(database))
            }
            _ => None,
        };
        let connections = self.options.shard.map_or(concurrency, |s| s.connections(concurrency));
        let late = schedule
            .map(|(shard, slot)| shard::wait_until(shard.slot_start(slot, timing), &self.stop));
        let live = Arc::new(LiveCounter::new(self.options.client_workers));
        let mut plan = self.options.plan(connections, &self.stop, &live);
        if let Some(offer) = offer {
            // An open loop keeps to its clock: its warm-up has no burst to wait out, and the
            // stack has just served this scenario in the closed rounds, so half the warm-up
            // only opens the connections the rate needs (half of every fixed-load window's
            // warm-up off the run's time).
            plan.rate_rps = Some(offer.rate_rps);
            plan.arrivals = self.options.arrivals;
            plan.settle = None;
            plan.warmup /= 2;
            plan.duration = self.options.measurement.fixed_load_window();
        }
        let postgres = target.database.and(self.running.database.postgres_pid());
        let mut samplers = (CpuSampler::new(target.pid, postgres, target.relay_pid), waits);
        let ticker = self.progress.running(label.to_owned(), live);
        let started = self.ledger.began.elapsed().as_secs_f64();
        let workload: Arc<dyn engine::Workload> = load.clone();
        let report = engine::run_http(
            &plan,
            target.addr,
            workload,
            self.options.validate_every,
            &mut samplers,
        )
        .map_err(anyhow::Error::msg)?;
        drop(ticker);
        let (sampler, waits) = samplers;
        if let (true, Some((shard, slot))) = (coordinates, schedule) {
            // The other shards' drains, before reading what the database holds.
            shard::wait_until(shard.drained(slot, timing), &self.stop);
        }
        let database = target.database.filter(|_| coordinates).map(|name| (name, &*load));
        let mut cell = self.finish_cell(at, &report, &sampler, target.pid, database)?;
        cell.started_seconds = Some(started);
        cell.backend_waits = waits.and_then(|w| w.waits());
        if let (Some((shard, _)), Some(late)) = (schedule, late) {
            cell.shards.push(ShardPart {
                shard: shard.index,
                connections,
                window_started_unix_seconds: sampler.window_started_unix_seconds,
                late_seconds: late.as_secs_f64(),
                throughput_rps: cell.throughput_rps,
                goodput_rps: cell.goodput_rps,
                client_cpu_seconds: cell.cpu_seconds.client,
            });
            cell.warnings = warnings::window_warnings(&cell, &report);
        }
        Ok(cell)
    }

    /// Adds what the server side shows to what the client measured: CPU, memory, the SQL
    /// statements and, for writes, the audit — of `database`, loaded with `load`.
    fn finish_cell(
        &mut self,
        at: WindowAt<'_>,
        report: &LoadReport,
        sampler: &CpuSampler,
        server_pid: Option<u32>,
        database: Option<(&str, &scenario::ScenarioLoad)>,
    ) -> anyhow::Result<Cell> {
        let WindowAt { label, scenario, concurrency, round, offer, .. } = at;
        let mode = offer.map_or(LoadMode::Closed, |o| LoadMode::Open { rate_rps: o.rate_rps });
        let mut cell = Cell::from_report(scenario.name(), concurrency, round, mode, report);
        if let Some(offer) = offer {
            let arrivals = self.options.arrivals;
            cell.open_loop =
                Some(OpenLoop::of(offer.rate_rps, offer.fraction, arrivals, concurrency, report));
        }
        cell.cpu_seconds = sampler.seconds();
        cell.server_peak_rss_bytes = server_pid.and_then(bookstore_client::procfs::peak_rss_bytes);
        cell.server_threads = sampler.server_threads;
        if let Some((database, load)) = database {
            cell.sql = self.running.database.statements(database).map(|stats| {
                let requests = cell.requests_total();
                SqlStats {
                    statements_per_request: if requests > 0 {
                        stats.statements as f64 / requests as f64
                    } else {
                        0.0
                    },
                    requests,
                    ..stats
                }
            });
            if scenario.writes() {
                let acknowledged = cell.warmup_counts.ok + cell.counts.ok + cell.drained_counts.ok;
                let refused = Refusals::of(report, load);
                // A shard's acknowledgements are part of the whole: `loadgen merge` adds
                // them up and judges rows = acknowledged.
                let whole_load = self.options.shard.is_none();
                let audit = self.running.database.audit(
                    database,
                    scenario,
                    acknowledged,
                    &refused.books,
                    whole_load,
                )?;
                let mut outcome = audit;
                outcome.audit.unjustified_refusals =
                    refused.count_unjustified(&mut cell, &outcome.unjustified_books);
                if outcome.audit.unjustified_refusals > 0 {
                    // The failure line counts refusals, not books.
                    let line = bookstore_fixture::audit::refusals_failure(
                        &outcome.unjustified_books,
                        outcome.audit.unjustified_refusals,
                    );
                    outcome.audit.failures.retain(|f| !f.contains("out_of_stock refusal"));
                    outcome.audit.failures.extend(line);
                }
                cell.audit = Some(outcome.audit);
            }
        }
        cell.warnings = warnings::window_warnings(&cell, report);
        self.progress.finished(label, &cell);
        Ok(cell)
    }
}

/// What a window loads and where it sits: the label its progress line shows, the scenario
/// at a concurrency (an open loop's cap), its round, a shard's slot and, with an offer, the
/// fixed-load phase's rate.
#[derive(Clone, Copy)]
struct WindowAt<'a> {
    label: &'a str,
    scenario: Scenario,
    concurrency: u32,
    round: u32,
    slot: Option<u64>,
    offer: Option<Offer>,
}

/// The refusals of a window, by book.
struct Refusals {
    /// Each refused book with the quantity asked for.
    books: Vec<(i64, i32)>,
    /// Per refused book: refusals in the warm-up, the window and the drain.
    counts: Vec<(i64, [u64; 3])>,
}

impl Refusals {
    fn of(report: &LoadReport, load: &scenario::ScenarioLoad) -> Self {
        let mut counts: Vec<(i64, [u64; 3])> = Vec::new();
        for (&pick, phases) in &report.rejected_picks {
            let Some(book) = load.book_id(pick) else { continue };
            match counts.iter_mut().find(|(b, _)| *b == book) {
                Some((_, mine)) => mine.iter_mut().zip(phases).for_each(|(m, t)| *m += t),
                None => counts.push((book, *phases)),
            }
        }
        let books = counts.iter().map(|(book, _)| (*book, scenario::CHECKOUT_QUANTITY)).collect();
        Self { books, counts }
    }

    /// Moves the refusals of `unjustified` books from the rejected to the errors of `cell`:
    /// a refusal with the stock in hand is a wrong answer, not a business outcome. How many
    /// there were, in all phases.
    fn count_unjustified(&self, cell: &mut Cell, unjustified: &[i64]) -> u64 {
        let mut moved = 0;
        for (book, [warmup, window, drain]) in &self.counts {
            if !unjustified.contains(book) {
                continue;
            }
            moved += warmup + window + drain;
            for (counts, n) in [
                (&mut cell.warmup_counts, *warmup),
                (&mut cell.counts, *window),
                (&mut cell.drained_counts, *drain),
            ] {
                counts.rejected -= n;
                counts.errors += n;
                if n > 0 {
                    *counts.errors_by_kind.entry(UNJUSTIFIED_REFUSAL.to_owned()).or_default() += n;
                }
            }
        }
        moved
    }
}

/// How often each idle connection pings its server: half the stacks' client timeout
/// (`--client-timeout-ms`, 10 s by default), which closes a connection idle for longer.
pub(crate) const IDLE_PING_EVERY: Duration = Duration::from_secs(5);
/// How long an idle connection's connect may take before it counts as refused.
const IDLE_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens `count` idle connections to `addr` and reads the server (`pid`) with them open.
pub(crate) fn hold_idle(
    addr: std::net::SocketAddr,
    count: u64,
    pid: Option<u32>,
) -> anyhow::Result<(bookstore_client::idle::IdleConnections, IdleHeld)> {
    use bookstore_client::procfs;
    let connections = bookstore_client::idle::IdleConnections::open(
        addr,
        count,
        IDLE_PING_EVERY,
        IDLE_CONNECT_TIMEOUT,
    )
    .map_err(anyhow::Error::msg)?;
    let status = connections.status();
    let held = IdleHeld {
        asked: count,
        held: status.held,
        refused: status.refused,
        dropped: status.dropped,
        pings: status.pings,
        opening_seconds: connections.opening.as_secs_f64(),
        server_rss_bytes: pid.and_then(procfs::rss_bytes),
        server_threads: pid.and_then(procfs::threads),
        server_fds: pid.and_then(procfs::open_fds),
    };
    Ok((connections, held))
}
