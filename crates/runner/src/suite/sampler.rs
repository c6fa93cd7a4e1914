//! What is read beside the load at the window's edges: the CPU counters of the server,
//! PostgreSQL and the client, and what the database's backends were doing meanwhile.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;

use bookstore_client::engine::WindowHooks;
use bookstore_client::procfs;
use bookstore_record::results::{BackendWaits, CpuSeconds};

/// Reads CPU counters at the window's edges.
pub(crate) struct CpuSampler {
    server_pid: Option<u32>,
    postgres_pid: Option<u32>,
    relay_pid: Option<u32>,
    start: Reading,
    end: Reading,
    /// When the window opened, by the wall clock (shards compare theirs).
    pub(crate) window_started_unix_seconds: f64,
    /// The server's threads when the window closed.
    pub(crate) server_threads: Option<u64>,
}

/// CPU seconds so far: server, PostgreSQL, this process, relay.
type Reading = (Option<f64>, Option<f64>, f64, Option<f64>);

impl CpuSampler {
    pub(crate) fn new(
        server_pid: Option<u32>,
        postgres_pid: Option<u32>,
        relay_pid: Option<u32>,
    ) -> Self {
        Self {
            server_pid,
            postgres_pid,
            relay_pid,
            start: (None, None, 0.0, None),
            end: (None, None, 0.0, None),
            window_started_unix_seconds: 0.0,
            server_threads: None,
        }
    }

    fn read(&self) -> Reading {
        (
            self.server_pid.and_then(procfs::cpu_seconds),
            self.postgres_pid.and_then(procfs::tree_cpu_seconds),
            procfs::own_cpu_seconds(),
            self.relay_pid.and_then(procfs::cpu_seconds),
        )
    }

    /// CPU time each spent over the window.
    pub(crate) fn seconds(&self) -> CpuSeconds {
        let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        CpuSeconds {
            server: delta(self.start.0, self.end.0),
            postgres: delta(self.start.1, self.end.1),
            client: self.end.2 - self.start.2,
            relay: delta(self.start.3, self.end.3),
        }
    }
}

impl WindowHooks for CpuSampler {
    fn measure_started(&mut self) {
        self.start = self.read();
        self.window_started_unix_seconds =
            crate::suite::shard::unix_seconds(std::time::SystemTime::now());
    }
    fn measure_ended(&mut self) {
        self.end = self.read();
        self.server_threads = self.server_pid.and_then(procfs::threads);
    }
}

/// `pg_stat_activity` sampled through each window: what the database's client backends (a
/// stack's pooled connections) were doing. One thread and one connection for the whole run
/// (to the maintenance database, so that its queries are not counted among a cell's
/// statements): a window costs two channel messages, and one query every
/// [`WAIT_SAMPLE_INTERVAL`] — a few hundred microseconds of PostgreSQL's CPU per second.
pub(crate) struct BackendSampler {
    jobs: Option<std::sync::mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One window's sampling, as the thread receives it.
struct Job {
    database: String,
    /// The window opened (dropped unsent: it failed before, nothing to sample).
    start: std::sync::mpsc::Receiver<()>,
    stop: Arc<tokio::sync::Notify>,
    reply: std::sync::mpsc::Sender<Tally>,
}

/// Between two samples.
pub(crate) const WAIT_SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

/// Observations counted so far.
#[derive(Debug, Default)]
struct Tally {
    samples: u64,
    observations: BTreeMap<String, u64>,
}

impl BackendSampler {
    /// The sampler, connected to the database at `url`; `None` when it cannot connect (the
    /// windows are then measured without it).
    pub(crate) fn connect(url: &str) -> Option<Self> {
        let url = url.to_owned();
        let (connected_tx, connected) = std::sync::mpsc::channel::<bool>();
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let thread = std::thread::spawn(move || {
            let Some(runtime) = sampler_runtime() else {
                let _ = connected_tx.send(false);
                return;
            };
            let Ok(mut connection) = runtime.block_on(sqlx::PgConnection::connect(&url)) else {
                let _ = connected_tx.send(false);
                return;
            };
            let _ = connected_tx.send(true);
            let mut alive = true;
            while let Ok(job) = queue.recv() {
                let mut tally = Tally::default();
                if alive && job.start.recv().is_ok() {
                    let sampled = sample(&mut connection, &job.database, &job.stop, &mut tally);
                    alive = runtime.block_on(sampled);
                }
                let _ = job.reply.send(tally);
            }
            let _ = runtime.block_on(connection.close());
        });
        if !connected.recv().unwrap_or(false) {
            let _ = thread.join();
            return None;
        }
        Some(Self { jobs: Some(jobs), thread: Some(thread) })
    }

    /// The hooks of one window on database `database`.
    pub(crate) fn window(&self, database: &str) -> WaitWindow {
        let (start_tx, start) = std::sync::mpsc::channel();
        let (reply, replies) = std::sync::mpsc::channel();
        let stop = Arc::new(tokio::sync::Notify::new());
        let job = Job { database: database.to_owned(), start, stop: Arc::clone(&stop), reply };
        let queued = self.jobs.as_ref().is_some_and(|jobs| jobs.send(job).is_ok());
        WaitWindow { start: queued.then_some(start_tx), stop, replies, tally: None }
    }
}

impl Drop for BackendSampler {
    fn drop(&mut self) {
        self.jobs = None; // the thread's queue ends: it closes its connection
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One window's sampling ([`BackendSampler::window`]).
pub(crate) struct WaitWindow {
    start: Option<std::sync::mpsc::Sender<()>>,
    stop: Arc<tokio::sync::Notify>,
    replies: std::sync::mpsc::Receiver<Tally>,
    tally: Option<Tally>,
}

impl WaitWindow {
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

/// Samples every [`WAIT_SAMPLE_INTERVAL`] until `stop`; `false` if the connection failed.
async fn sample(
    connection: &mut sqlx::PgConnection,
    database: &str,
    stop: &tokio::sync::Notify,
    tally: &mut Tally,
) -> bool {
    let mut next = tokio::time::Instant::now();
    loop {
        let rows: Result<Vec<ActivityRow>, _> = sqlx::query_as(
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity
             WHERE datname = $1 AND backend_type = 'client backend'
             AND pid <> pg_backend_pid()",
        )
        .bind(database)
        .fetch_all(&mut *connection)
        .await;
        let Ok(rows) = rows else { return false };
        tally.samples += 1;
        for (state, kind, event) in rows {
            let what = activity(state.as_deref(), kind.as_deref(), event.as_deref());
            *tally.observations.entry(what).or_default() += 1;
        }
        next += WAIT_SAMPLE_INTERVAL;
        // A stop while querying left a permit: the window's end is not missed.
        tokio::select! {
            () = tokio::time::sleep_until(next) => {}
            () = stop.notified() => return true,
        }
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

impl Drop for WaitWindow {
    /// A window that failed after it opened: the thread stops sampling it.
    fn drop(&mut self) {
        self.stop.notify_one();
    }
}

impl WindowHooks for WaitWindow {
    fn measure_started(&mut self) {
        if let Some(start) = self.start.take() {
            let _ = start.send(());
        }
    }

    fn measure_ended(&mut self) {
        self.stop.notify_one();
        self.tally = self.replies.recv().ok();
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
