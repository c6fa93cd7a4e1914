//! `loadgen http`: load one URL, or one scenario against one stack — the mode used to
//! calibrate the client and to look at one thing closely. Its window is judged as the
//! suite's are: the scenario's outcome checks and validation, the same warnings and gates.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;

use bookstore_client::engine::{self, LoadPlan, WindowHooks, Workload};
use bookstore_client::raw::{RawRequest, RequestSpec};
use bookstore_client::scenario::Scenario;
use bookstore_record::results::{Cell, LoadMode, OpenLoop};

/// What `loadgen http` loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One request, sent over and over; any 2xx with a complete body is a success.
    Request(RequestSpec),
    /// A scenario's requests against the URL's host, judged by its checks (no restore and
    /// no audit: those need the suite's database).
    Scenario(Scenario),
}

/// One window against `url` under `plan`, with `validate_every` as in the suite: the cell
/// as the suite would record it, its warnings included.
pub fn measure(
    url: &str,
    target: &Target,
    plan: &LoadPlan,
    validate_every: u64,
) -> anyhow::Result<Cell> {
    let (name, addr, workload): (&str, SocketAddr, Arc<dyn Workload>) = match target {
        Target::Request(spec) => {
            let (addr, request) = RawRequest::new(url, spec).map_err(anyhow::Error::msg)?;
            ("http", addr, Arc::new(request))
        }
        Target::Scenario(scenario) => {
            let (addr, _) =
                RawRequest::new(url, &RequestSpec::default()).map_err(anyhow::Error::msg)?;
            let path = url::Url::parse(url)?.path().to_owned();
            if !matches!(path.as_str(), "" | "/") {
                anyhow::bail!(
                    "--scenario takes the stack's address only (http://host:port), not {url}: the scenario makes its own paths"
                );
            }
            (
                scenario.name(),
                addr,
                Arc::new(bookstore_client::scenario::ScenarioLoad::new(
                    *scenario,
                    &addr.to_string(),
                )),
            )
        }
    };
    check_reachable(addr, Duration::from_secs(5))?;
    let mut cpu = ClientCpu { start: 0.0, end: 0.0 };
    let report = engine::run_http(plan, addr, workload, validate_every, &mut cpu)
        .map_err(anyhow::Error::msg)?;
    let connections = plan.connections as u32;
    let mode = plan.rate_rps.map_or(LoadMode::Closed, |rate_rps| LoadMode::Open { rate_rps });
    let mut cell = Cell::from_report(name, connections, 0, mode, &report);
    cell.cpu_seconds.client = cpu.end - cpu.start;
    if let Some(rate) = plan.rate_rps {
        cell.open_loop = Some(OpenLoop::of(rate, None, plan.arrivals, connections, &report));
    }
    cell.warnings = bookstore_record::warnings::window_warnings(&cell, &report);
    if plan.requests.is_some() {
        // A counted window ends as its last requests drain, with fewer and fewer in flight:
        // that is its nature, not a client that could not keep up.
        cell.warnings.retain(|w| {
            !matches!(w.kind, bookstore_record::warnings::WarningKind::InFlightLow { .. })
        });
    }
    Ok(cell)
}

/// Reads the client's CPU time at the window's edges.
struct ClientCpu {
    start: f64,
    end: f64,
}

impl WindowHooks for ClientCpu {
    fn measure_started(&mut self) {
        self.start = bookstore_client::procfs::own_cpu_seconds();
    }
    fn measure_ended(&mut self) {
        self.end = bookstore_client::procfs::own_cpu_seconds();
    }
}

/// Percentiles shown by `loadgen http`, with their column titles.
const PERCENTILES: [(&str, f64); 5] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999)];
/// Rows of the text histogram, and the width of its longest bar.
const HISTOGRAM_ROWS: usize = 8;
const BAR_WIDTH: usize = 40;

/// `latency` as a percentile table (p50 … p99.99 and max) and a text histogram of
/// logarithmically spaced buckets from the fastest answer to the slowest.
pub fn latency_table(latency: &Histogram<u64>) -> Vec<String> {
    let label = |us: u64| bookstore_record::latency_label(us as f64);
    let titles = PERCENTILES.iter().map(|(title, _)| *title).chain(["max"]);
    let values =
        PERCENTILES.iter().map(|(_, q)| latency.value_at_quantile(*q)).chain([latency.max()]);
    let mut lines = vec![
        titles.map(|t| format!("{t:>9}")).collect::<String>(),
        values.map(|v| format!("{:>9}", label(v))).collect::<String>(),
    ];
    let (low, high) = (latency.min().max(1) as f64, latency.max().max(1) as f64);
    let rows = if high > low { HISTOGRAM_ROWS } else { 1 };
    let step = (high / low).ln() / rows as f64;
    let row_of = |us: u64| {
        let at = if step > 0.0 { ((us.max(1) as f64 / low).ln() / step).floor() } else { 0.0 };
        (at.max(0.0) as usize).min(rows - 1)
    };
    let mut counts = vec![0_u64; rows];
    for value in latency.iter_recorded() {
        counts[row_of(value.value_iterated_to())] += value.count_at_value();
    }
    let edge = |row: usize| (low * (step * row as f64).exp()) as u64;
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    for (row, count) in counts.into_iter().enumerate() {
        let bar = "█".repeat((count as f64 / most as f64 * BAR_WIDTH as f64).ceil() as usize);
        let to = if row + 1 == rows { latency.max() } else { edge(row + 1) };
        lines.push(format!("{:>9} – {:<9} {bar} {count}", label(edge(row)), label(to)));
    }
    lines
}

/// Fails within `timeout` with a clear message when nothing listens at `addr`.
pub fn check_reachable(addr: SocketAddr, timeout: Duration) -> anyhow::Result<()> {
    std::net::TcpStream::connect_timeout(&addr, timeout)
        .map(drop)
        .map_err(|e| anyhow::anyhow!("cannot connect to {addr}: {e} (is the server running?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_table_has_every_percentile_and_a_histogram_that_holds_every_answer() {
        let mut latency = Histogram::<u64>::new(3).unwrap();
        for us in (1..=10_000).map(|i| 100 + i / 10) {
            latency.record(us).unwrap();
        }
        latency.record(50_000).unwrap();
        let lines = latency_table(&latency);
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
        );
        assert!(lines[1].ends_with("50 ms"), "{}", lines[1]);
        let counted: u64 = lines[2..]
            .iter()
            .map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(counted, 10_001, "{lines:#?}");
        assert!(lines.len() - 2 <= HISTOGRAM_ROWS);
        assert!(lines.last().unwrap().ends_with(" 1"), "the slowest answer alone: {lines:#?}");
    }

    #[test]
    fn an_unreachable_target_fails_fast_and_says_so() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let started = std::time::Instant::now();
        let error =
            check_reachable(SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(5))
                .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(error.to_string().contains("cannot connect"), "{error}");
    }
}
