//! Threads against tasks, after the JVM's virtual-thread demonstration: 10,000 tasks that
//! each wait 100 ms took 5,124 ms on a pool of 200 threads and 108 ms on virtual threads —
//! and a blocking call inside `synchronized` pinned the carrier thread. Here: a fixed pool
//! of 200 OS threads, tokio tasks, and tokio's `spawn_blocking`; then the pinning analog —
//! a blocking call (`std::thread::sleep`, or a blocking diesel query) inside async tasks on
//! a small runtime, next to the same work done right. Wall time, and the most tasks that
//! were ever waiting at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use diesel::RunQueryDsl;
use serde::{Deserialize, Serialize};

use crate::measure::{self, DieselPool};

/// One way of running the tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// A fixed pool of [`OS_THREADS`] OS threads, each task a `std::thread::sleep`.
    OsThreadPool,
    /// tokio tasks on a runtime with one worker per CPU, each a `tokio::time::sleep`.
    TokioTasks,
    /// tokio's blocking pool (up to [`BLOCKING_THREADS`]), each task a `std::thread::sleep`.
    SpawnBlocking,
    /// The mistake: `std::thread::sleep` inside async tasks — each blocks a worker.
    BlockingSleepInAsync,
    /// The same tasks with `tokio::time::sleep`.
    AsyncSleep,
    /// The mistake with a database: a blocking diesel `pg_sleep` inside async tasks.
    BlockingQueryInAsync,
    /// The same query handed to `spawn_blocking`.
    BlockingQueryOffloaded,
}

impl Variant {
    /// Its name in results (the serde name) and, with spaces, on the page.
    pub fn name(self) -> &'static str {
        match self {
            Variant::OsThreadPool => "os_thread_pool",
            Variant::TokioTasks => "tokio_tasks",
            Variant::SpawnBlocking => "spawn_blocking",
            Variant::BlockingSleepInAsync => "blocking_sleep_in_async",
            Variant::AsyncSleep => "async_sleep",
            Variant::BlockingQueryInAsync => "blocking_query_in_async",
            Variant::BlockingQueryOffloaded => "blocking_query_offloaded",
        }
    }

    /// Whether it needs the database.
    pub fn uses_database(self) -> bool {
        matches!(self, Variant::BlockingQueryInAsync | Variant::BlockingQueryOffloaded)
    }
}

/// The JVM demonstration's thread pool size.
pub const OS_THREADS: usize = 200;
/// tokio's default limit on blocking threads.
pub const BLOCKING_THREADS: usize = 512;

/// What a run showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// From the first task's start to the last one's end.
    pub wall: Duration,
    /// The most tasks waiting at the same moment.
    pub max_concurrency: usize,
    /// Threads that did the waiting (OS pool, runtime workers, or the blocking pool's cap).
    pub threads: usize,
}

/// Counts tasks in their wait, keeping the maximum.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl InFlight {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
    }
    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Runs `tasks` tasks of `wait` each in the `variant` way. `small_runtime_workers` is the
/// runtime of the blocking-inside-async variants (the JVM's carrier threads); `pool` is
/// needed by the database variants, with `wait` as the query's `pg_sleep`.
pub fn run(
    variant: Variant,
    tasks: usize,
    wait: Duration,
    small_runtime_workers: usize,
    pool: Option<&DieselPool>,
) -> anyhow::Result<Outcome> {
    let in_flight = Arc::new(InFlight::default());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = Instant::now();
    let threads = match variant {
        Variant::OsThreadPool => {
            let next = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..OS_THREADS.min(tasks) {
                    scope.spawn(|| {
                        while next.fetch_add(1, Ordering::Relaxed) < tasks {
                            in_flight.enter();
                            std::thread::sleep(wait);
                            in_flight.leave();
                        }
                    });
                }
            });
            OS_THREADS
        }
        Variant::TokioTasks | Variant::AsyncSleep | Variant::BlockingSleepInAsync => {
            let workers = if variant == Variant::TokioTasks { cpus } else { small_runtime_workers };
            let blocking = variant == Variant::BlockingSleepInAsync;
            measure::runtime_with(workers).block_on(spawn_all(
                tasks,
                &in_flight,
                move |flight| async move {
                    flight.enter();
                    if blocking {
                        std::thread::sleep(wait);
                    } else {
                        tokio::time::sleep(wait).await;
                    }
                    flight.leave();
                    Ok(())
                },
            ))?;
            workers
        }
        Variant::SpawnBlocking => {
            measure::runtime().block_on(spawn_all(
                tasks,
                &in_flight,
                move |flight| async move {
                    tokio::task::spawn_blocking(move || {
                        flight.enter();
                        std::thread::sleep(wait);
                        flight.leave();
                    })
                    .await
                    .map_err(|e| e.to_string())
                },
            ))?;
            BLOCKING_THREADS
        }
        Variant::BlockingQueryInAsync | Variant::BlockingQueryOffloaded => {
            let pool =
                pool.ok_or_else(|| anyhow::anyhow!("{} needs a database", variant.name()))?.clone();
            let offload = variant == Variant::BlockingQueryOffloaded;
            let wait_ms = wait.as_millis() as i64;
            let query = move |flight: Arc<InFlight>, pool: DieselPool| -> Result<(), String> {
                let mut conn = pool.get().map_err(|e| e.to_string())?;
                flight.enter();
                let result = bookstore_diesel_sql::CachedSql::new(
                    "SELECT pg_sleep($1 / 1000.0)",
                    &[wait_ms],
                )
                .execute(&mut conn);
                flight.leave();
                result.map(|_| ()).map_err(|e| e.to_string())
            };
            measure::runtime_with(small_runtime_workers).block_on(spawn_all(
                tasks,
                &in_flight,
                move |flight| {
                    let pool = pool.clone();
                    async move {
                        if offload {
                            tokio::task::spawn_blocking(move || query(flight, pool))
                                .await
                                .map_err(|e| e.to_string())?
                        } else {
                            query(flight, pool)
                        }
                    }
                },
            ))?;
            // Offloaded, the blocking pool's threads wait (as many as the connection pool
            // lets through); not offloaded, the runtime's workers.
            if offload { BLOCKING_THREADS } else { small_runtime_workers }
        }
    };
    Ok(Outcome { wall: started.elapsed(), max_concurrency: in_flight.max(), threads })
}

/// Spawns `tasks` tasks of `task` and waits for all; the first failure.
async fn spawn_all<F, Fut>(tasks: usize, in_flight: &Arc<InFlight>, task: F) -> anyhow::Result<()>
where
    F: Fn(Arc<InFlight>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let handles: Vec<_> = (0..tasks).map(|_| tokio::spawn(task(Arc::clone(in_flight)))).collect();
    for handle in handles {
        handle.await?.map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Timing-free checks: how many tasks were ever waiting at once is decided by the
    // threads that can wait, not by the machine's speed.

    #[test]
    fn tasks_wait_all_at_once_and_a_thread_pool_only_as_many_as_its_threads() {
        let wait = Duration::from_millis(50);
        let tasks = run(Variant::TokioTasks, 300, wait, 2, None).unwrap();
        assert_eq!(tasks.max_concurrency, 300);
        let threads = run(Variant::OsThreadPool, 300, wait, 2, None).unwrap();
        assert_eq!(threads.max_concurrency, OS_THREADS);
    }

    #[test]
    fn a_blocking_call_inside_async_tasks_holds_the_runtime_to_its_workers() {
        let wait = Duration::from_millis(20);
        let blocked = run(Variant::BlockingSleepInAsync, 6, wait, 2, None).unwrap();
        assert!(blocked.max_concurrency <= 2, "{blocked:?}");
        let right = run(Variant::AsyncSleep, 6, wait, 2, None).unwrap();
        assert_eq!(right.max_concurrency, 6);
    }
}
