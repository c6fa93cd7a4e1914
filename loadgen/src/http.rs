//! `loadgen http`: load one URL, or one scenario against one stack — the mode used to
//! calibrate the client and to look at one thing closely. Its window is judged as the
//! suite's are: the scenario's outcome checks and validation, the same warnings and gates.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use crate::engine::{self, ErrorKind, LoadPlan, Outcome, Picker, Response, WindowHooks, Workload};
use crate::results::{Cell, LoadMode, OpenLoop};
use crate::scenario::Scenario;

/// What `loadgen http` loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `GET` of the URL; any 2xx with a complete body is a success.
    Get,
    /// A scenario's requests against the URL's host, judged by its checks (no restore and
    /// no audit: those need the suite's database).
    Scenario(Scenario),
}

/// One window against `url` under `plan`, with `validate_every` as in the suite: the cell
/// as the suite would record it, its warnings included.
pub fn measure(
    url: &str,
    target: Target,
    plan: &LoadPlan,
    validate_every: u64,
) -> anyhow::Result<Cell> {
    let (addr, get) = RawGet::new(url)?;
    let (name, workload): (&str, Arc<dyn Workload>) = match target {
        Target::Get => ("http", Arc::new(get)),
        Target::Scenario(scenario) => {
            let path = url::Url::parse(url)?.path().to_owned();
            if !matches!(path.as_str(), "" | "/") {
                anyhow::bail!(
                    "--scenario takes the stack's address only (http://host:port), not {url}: the scenario makes its own paths"
                );
            }
            (scenario.name(), Arc::new(scenario.workload(&addr.to_string())))
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
    cell.warnings = crate::warnings::window_warnings(&cell, &report);
    Ok(cell)
}

/// Reads the client's CPU time at the window's edges.
struct ClientCpu {
    start: f64,
    end: f64,
}

impl WindowHooks for ClientCpu {
    fn measure_started(&mut self) {
        self.start = crate::procfs::own_cpu_seconds();
    }
    fn measure_ended(&mut self) {
        self.end = crate::procfs::own_cpu_seconds();
    }
}

/// `GET <path>` over and over; any 2xx with a complete body is a success.
#[derive(Debug)]
pub struct RawGet {
    request: Vec<u8>,
}

impl RawGet {
    /// The address and the workload of `url` (`http://host:port/path?query`).
    pub fn new(url: &str) -> anyhow::Result<(SocketAddr, Self)> {
        let parsed =
            url::Url::parse(url).map_err(|e| anyhow::anyhow!("invalid --url {url}: {e}"))?;
        if parsed.scheme() != "http" {
            anyhow::bail!("invalid --url {url}: only http:// is supported");
        }
        let host =
            parsed.host_str().ok_or_else(|| anyhow::anyhow!("invalid --url {url}: no host"))?;
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()
            .map_err(|e| anyhow::anyhow!("cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| anyhow::anyhow!("cannot resolve {host}"))?;
        let mut target = parsed.path().to_owned();
        if let Some(query) = parsed.query() {
            target.push('?');
            target.push_str(query);
        }
        let request = format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n").into_bytes();
        Ok((addr, Self { request }))
    }
}

impl Workload for RawGet {
    fn request(&self, _: usize) -> &[u8] {
        &self.request
    }

    fn picker(&self, _: usize, _: usize) -> Picker {
        Picker::Fixed(0)
    }

    fn classify(&self, _: usize, response: &Response<'_>) -> Outcome {
        if (200..300).contains(&response.status) {
            Outcome::Ok
        } else {
            Outcome::Error(ErrorKind::Status)
        }
    }

    fn validate(&self, _: usize, _: &Response<'_>) -> Result<(), String> {
        Ok(())
    }
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
    fn the_request_keeps_path_and_query() {
        let (addr, get) = RawGet::new("http://127.0.0.1:8081/api/books?limit=5").unwrap();
        assert_eq!(addr, "127.0.0.1:8081".parse().unwrap());
        assert_eq!(get.request, b"GET /api/books?limit=5 HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n");
    }

    #[test]
    fn other_schemes_and_garbage_are_refused() {
        assert!(RawGet::new("https://127.0.0.1/").is_err());
        assert!(RawGet::new("not a url").is_err());
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
