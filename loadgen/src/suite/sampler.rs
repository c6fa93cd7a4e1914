//! What is read beside the load at the window's edges: the CPU counters of the server,
//! PostgreSQL and the client, and what the database's backends were doing meanwhile.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::Connection;

use crate::engine::WindowHooks;
use crate::procfs;
use crate::results::{BackendWaits, CpuSeconds};

/// Reads CPU counters at the window's edges.
pub(crate) struct CpuSampler {
    server_pid: Option<u32>,
    postgres_pid: Option<u32>,
    start: (Option<f64>, Option<f64>, f64),
    end: (Option<f64>, Option<f64>, f64),
    /// When the window opened, by the wall clock (shards compare theirs).
    pub(crate) window_started_unix_seconds: f64,
}

impl CpuSampler {
    pub(crate) fn new(server_pid: Option<u32>, postgres_pid: Option<u32>) -> Self {
        Self {
            server_pid,
            postgres_pid,
            start: (None, None, 0.0),
            end: (None, None, 0.0),
            window_started_unix_seconds: 0.0,
        }
    }

    fn read(&self) -> (Option<f64>, Option<f64>, f64) {
        (
            self.server_pid.and_then(procfs::cpu_seconds),
            self.postgres_pid.and_then(procfs::tree_cpu_seconds),
            procfs::own_cpu_seconds(),
        )
    }

    /// CPU time each spent over the window.
    pub(crate) fn seconds(&self) -> CpuSeconds {
        let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        CpuSeconds {
            server: delta(self.start.0, self.end.0),
            postgres: delta(self.start.1, self.end.1),
            client: self.end.2 - self.start.2,
        }
    }
}

impl WindowHooks for CpuSampler {
    fn measure_started(&mut self) {
        self.start = self.read();
        self.window_started_unix_seconds = super::shard::unix_seconds(std::time::SystemTime::now());
    }
    fn measure_ended(&mut self) {
        self.end = self.read();
    }
}

/// `pg_stat_activity` sampled through the window: what the database's client backends (a
/// stack's pooled connections) were doing. On its own thread and connection, opened before
/// the window; at one query every [`WAIT_SAMPLE_INTERVAL`] its cost is a few hundred
/// microseconds of PostgreSQL's CPU per second.
pub(crate) struct WaitSampler {
    /// Says "start" to the thread (dropped unsent: it closes its connection and ends).
    start: Option<std::sync::mpsc::Sender<()>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Tally>>,
    tally: Option<Tally>,
}

/// Between two samples.
pub(crate) const WAIT_SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

/// Observations counted so far.
#[derive(Debug, Default)]
struct Tally {
    samples: u64,
    observations: BTreeMap<String, u64>,
}

impl WaitSampler {
    /// A sampler of database `database` at `url`, connected before the window (its thread
    /// keeps the connection on a runtime of its own); `None` when it cannot connect: the
    /// window is measured without it.
    pub(crate) fn connect(url: &str, database: &str) -> Option<Self> {
        let (url, database) = (url.to_owned(), database.to_owned());
        let (connected_tx, connected) = std::sync::mpsc::channel::<bool>();
        let (start, started) = std::sync::mpsc::channel::<()>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut tally = Tally::default();
            let Some(runtime) = sampler_runtime() else {
                let _ = connected_tx.send(false);
                return tally;
            };
            runtime.block_on(async {
                let Ok(mut connection) = sqlx::PgConnection::connect(&url).await else {
                    let _ = connected_tx.send(false);
                    return;
                };
                let _ = connected_tx.send(true);
                if started.recv().is_ok() {
                    sample(&mut connection, &database, &stopped, &mut tally).await;
                }
                let _ = connection.close().await;
            });
            tally
        });
        if !connected.recv().unwrap_or(false) {
            let _ = thread.join();
            return None;
        }
        Some(Self { start: Some(start), stop, thread: Some(thread), tally: None })
    }

    /// What was seen, once the window has ended.
    pub(crate) fn waits(&self) -> Option<BackendWaits> {
        let tally = self.tally.as_ref().filter(|t| t.samples > 0)?;
        let total: u64 = tally.observations.values().sum();
        Some(BackendWaits {
            samples: tally.samples,
            interval_ms: WAIT_SAMPLE_INTERVAL.as_millis() as u64,
            mean_backends: total as f64 / tally.samples as f64,
            shares: tally
                .observations
                .iter()
                .map(|(what, n)| (what.clone(), *n as f64 / total.max(1) as f64))
                .collect(),
        })
    }
}

/// A backend's `state`, `wait_event_type` and `wait_event`.
type ActivityRow = (Option<String>, Option<String>, Option<String>);

/// Samples every [`WAIT_SAMPLE_INTERVAL`] until `stop`.
async fn sample(
    connection: &mut sqlx::PgConnection,
    database: &str,
    stop: &AtomicBool,
    tally: &mut Tally,
) {
    let mut next = tokio::time::Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let rows: Result<Vec<ActivityRow>, _> = sqlx::query_as(
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity
                 WHERE datname = $1 AND backend_type = 'client backend'
                 AND pid <> pg_backend_pid()",
        )
        .bind(database)
        .fetch_all(&mut *connection)
        .await;
        let Ok(rows) = rows else { return };
        tally.samples += 1;
        for (state, kind, event) in rows {
            let what = activity(state.as_deref(), kind.as_deref(), event.as_deref());
            *tally.observations.entry(what).or_default() += 1;
        }
        next += WAIT_SAMPLE_INTERVAL;
        tokio::time::sleep_until(next).await;
    }
}

fn sampler_runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().ok()
}

/// What one backend was doing, as [`BackendWaits::shares`] names it.
pub(crate) fn activity(state: Option<&str>, wait_type: Option<&str>, wait: Option<&str>) -> String {
    match (state, wait_type, wait) {
        (Some("active"), Some(kind), Some(event)) => format!("{kind}:{event}"),
        (Some("active"), ..) => "running".to_owned(),
        (Some(other), ..) => other.to_owned(),
        (None, ..) => "unknown".to_owned(),
    }
}

impl WindowHooks for WaitSampler {
    fn measure_started(&mut self) {
        if let Some(start) = self.start.take() {
            let _ = start.send(());
        }
    }

    fn measure_ended(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.start = None;
        if let Some(thread) = self.thread.take() {
            self.tally = thread.join().ok();
        }
    }
}

impl Drop for WaitSampler {
    /// A window that failed before its end: the thread closes its connection and ends.
    fn drop(&mut self) {
        self.measure_ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_is_named_by_its_state_or_while_active_by_its_wait() {
        let lock = activity(Some("active"), Some("Lock"), Some("transactionid"));
        assert_eq!(lock, "Lock:transactionid");
        assert_eq!(activity(Some("active"), None, None), "running");
        assert_eq!(activity(Some("idle"), Some("Client"), Some("ClientRead")), "idle");
        let open = activity(Some("idle in transaction"), Some("Client"), Some("ClientRead"));
        assert_eq!(open, "idle in transaction");
    }
}
