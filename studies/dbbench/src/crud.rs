//! The CRUD microbenchmark, after a JMH benchmark of Exposed/JDBC: single insert, find by
//! id, single update, a users/orders join, and a 100-row batch insert, each measured with
//! `workers` workers in a closed loop over a pool of `pool` connections, for each
//! [`Access`] style. Throughput and latency come from the window after a short warm-up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use bookstore_diesel_sql::CachedSql;

use crate::data::Rng;
use crate::measure::{self, Access, DieselPool};
use crate::schema::{orders, users};

/// One operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `INSERT` one user.
    Insert,
    /// `SELECT` one user by key.
    FindById,
    /// `UPDATE` one order by key.
    Update,
    /// One user with the count and sum of their orders (`JOIN … GROUP BY`).
    Join,
    /// `INSERT` 100 orders in one statement.
    BatchInsert100,
}

impl Op {
    /// All five, in the order they are measured (the join before the inserts grow the table).
    pub const ALL: [Op; 5] = [Op::FindById, Op::Join, Op::Update, Op::Insert, Op::BatchInsert100];

    /// Its name in results (the serde name) and, with spaces, on the page.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::FindById => "find_by_id",
            Op::Update => "update",
            Op::Join => "join",
            Op::BatchInsert100 => "batch_insert_100",
        }
    }

    /// Rows written or read per operation, for rows/s.
    pub fn rows(self) -> u64 {
        if self == Op::BatchInsert100 { 100 } else { 1 }
    }
}

/// The data the operations work on.
#[derive(Debug, Clone, Copy)]
pub struct Population {
    /// Users `1..=users` exist.
    pub users: i64,
    /// Orders `1..=orders` exist.
    pub orders: i64,
}

/// One cell's measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Operations completed in the window.
    pub ops: u64,
    /// Operations that failed in the window.
    pub errors: u64,
    /// The first error, if any.
    pub first_error: Option<String>,
    /// The window's length ([`Timing::window`]): what `ops` is divided by for a rate.
    pub window: Duration,
    /// Latency of the window's operations.
    pub latency_us: Histogram<u64>,
}

/// What one worker saw.
struct WorkerTally {
    ops: u64,
    errors: u64,
    first_error: Option<String>,
    latency_us: Histogram<u64>,
}

impl WorkerTally {
    fn new() -> Self {
        Self { ops: 0, errors: 0, first_error: None, latency_us: measure::histogram() }
    }

    fn count(&mut self, started: Instant, measuring: bool, outcome: Result<(), String>) {
        if !measuring {
            return;
        }
        match outcome {
            Ok(()) => {
                self.ops += 1;
                measure::record(&mut self.latency_us, started.elapsed());
            }
            Err(error) => {
                self.errors += 1;
                self.first_error.get_or_insert(error);
            }
        }
    }
}

/// The window: from `warmup` after the start to `warmup + window`.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Unmeasured time first.
    pub warmup: Duration,
    /// The measured window, after `warmup`.
    pub window: Duration,
}

fn finish(tallies: Vec<WorkerTally>, window: Duration) -> Measured {
    let mut measured =
        Measured { ops: 0, errors: 0, first_error: None, window, latency_us: measure::histogram() };
    for tally in tallies {
        measured.ops += tally.ops;
        measured.errors += tally.errors;
        if measured.first_error.is_none() {
            measured.first_error = tally.first_error;
        }
        measured.latency_us.add(&tally.latency_us).expect("same bounds");
    }
    measured
}

/// `workers` tokio tasks in a closed loop over `call` (given a fresh random seed each time).
fn task_loop<F, Fut>(
    runtime: &tokio::runtime::Runtime,
    workers: usize,
    timing: Timing,
    call: F,
) -> Measured
where
    F: Fn(u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let start = Instant::now();
    let (measure_from, end) = (start + timing.warmup, start + timing.warmup + timing.window);
    let tallies = runtime.block_on(async {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let call = call.clone();
                tokio::spawn(async move {
                    let mut rng = Rng::new(worker as u64 + 1);
                    let mut tally = WorkerTally::new();
                    loop {
                        let started = Instant::now();
                        if started >= end {
                            break;
                        }
                        let outcome = call(rng.next_u64()).await;
                        tally.count(started, started >= measure_from, outcome);
                    }
                    tally
                })
            })
            .collect();
        let mut tallies = Vec::new();
        for handle in handles {
            tallies.push(handle.await.expect("a worker task panicked"));
        }
        tallies
    });
    finish(tallies, timing.window)
}

/// `workers` OS threads in a closed loop over `call`.
fn thread_loop<F>(workers: usize, timing: Timing, call: F) -> Measured
where
    F: Fn(u64) -> Result<(), String> + Sync,
{
    let start = Instant::now();
    let (measure_from, end) = (start + timing.warmup, start + timing.warmup + timing.window);
    let tallies = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let call = &call;
                scope.spawn(move || {
                    let mut rng = Rng::new(worker as u64 + 1);
                    let mut tally = WorkerTally::new();
                    loop {
                        let started = Instant::now();
                        if started >= end {
                            break;
                        }
                        let outcome = call(rng.next_u64());
                        tally.count(started, started >= measure_from, outcome);
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a worker thread panicked")).collect()
    });
    finish(tallies, timing.window)
}

/// Runs one cell: `op` by `workers` workers in the `access` style over `pools`.
pub fn run(
    access: Access,
    pools: &Pools,
    op: Op,
    workers: usize,
    population: Population,
    timing: Timing,
) -> Measured {
    match access {
        Access::SqlxTasks => {
            let pool = pools.sqlx.clone();
            task_loop(&pools.runtime, workers, timing, move |seed| {
                let pool = pool.clone();
                async move { sqlx_op(&pool, op, &mut Rng::new(seed), population).await }
            })
        }
        Access::DieselSpawnBlocking => {
            let pool = pools.diesel.clone();
            task_loop(&pools.runtime, workers, timing, move |seed| {
                let pool = pool.clone();
                async move {
                    tokio::task::spawn_blocking(move || {
                        let mut conn = pool.get().map_err(|e| e.to_string())?;
                        diesel_op(&mut conn, op, &mut Rng::new(seed), population)
                    })
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
                }
            })
        }
        Access::DieselThreads => thread_loop(workers, timing, |seed| {
            let mut conn = pools.diesel.get().map_err(|e| e.to_string())?;
            diesel_op(&mut conn, op, &mut Rng::new(seed), population)
        }),
    }
}

/// A pool of each kind, of the same size, and the runtime.
pub struct Pools {
    /// The async runtime (one worker per CPU).
    pub runtime: Arc<tokio::runtime::Runtime>,
    /// sqlx's pool.
    pub sqlx: sqlx::PgPool,
    /// diesel's pool.
    pub diesel: DieselPool,
}

impl Pools {
    /// Both pools with `size` connections each, every connection open.
    pub fn open(
        runtime: Arc<tokio::runtime::Runtime>,
        url: &str,
        size: u32,
    ) -> anyhow::Result<Self> {
        let sqlx = runtime.block_on(measure::sqlx_pool(url, size))?;
        let diesel = measure::diesel_pool(url, size).map_err(anyhow::Error::msg)?;
        Ok(Self { runtime, sqlx, diesel })
    }
}

const JOIN_SQL: &str = "SELECT u.id, u.name, count(o.id) AS orders, coalesce(sum(o.amount_cents), 0)::bigint AS total_cents
     FROM users u JOIN orders o ON o.user_id = u.id WHERE u.id = $1 GROUP BY u.id, u.name";

async fn sqlx_op(
    pool: &sqlx::PgPool,
    op: Op,
    rng: &mut Rng,
    population: Population,
) -> Result<(), String> {
    let result = match op {
        Op::Insert => sqlx::query("INSERT INTO users (name, email) VALUES ($1, $2)")
            .bind(format!("new user {}", rng.next_u64() % 1_000_000))
            .bind("new@example.com")
            .execute(pool)
            .await
            .map(|_| ()),
        Op::FindById => sqlx::query_as::<_, (i64, String, String)>(
            "SELECT id, name, email FROM users WHERE id = $1",
        )
        .bind(rng.one_to(population.users))
        .fetch_one(pool)
        .await
        .map(|_| ()),
        Op::Update => sqlx::query(
            "UPDATE orders SET status = $2, amount_cents = amount_cents + 1 WHERE id = $1",
        )
        .bind(rng.one_to(population.orders))
        .bind("paid")
        .execute(pool)
        .await
        .map(|_| ()),
        Op::Join => sqlx::query_as::<_, (i64, String, i64, i64)>(JOIN_SQL)
            .bind(rng.one_to(population.users))
            .fetch_optional(pool)
            .await
            .map(|_| ()),
        Op::BatchInsert100 => {
            let mut builder =
                sqlx::QueryBuilder::new("INSERT INTO orders (user_id, amount_cents, status) ");
            builder.push_values(0..100, |mut row, _| {
                row.push_bind(rng.one_to(population.users))
                    .push_bind((rng.next_u64() % 100_000) as i32)
                    .push_bind("new");
            });
            builder.build().execute(pool).await.map(|_| ())
        }
    };
    result.map_err(|e| e.to_string())
}

#[derive(diesel::QueryableByName)]
#[allow(dead_code)] // read to decode the whole row, as the sqlx side does
struct UserOrders {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    orders: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    total_cents: i64,
}

#[derive(diesel::Insertable)]
#[diesel(table_name = orders)]
struct NewOrder {
    user_id: i64,
    amount_cents: i32,
    status: &'static str,
}

fn diesel_op(
    conn: &mut diesel::PgConnection,
    op: Op,
    rng: &mut Rng,
    population: Population,
) -> Result<(), String> {
    let result = match op {
        Op::Insert => diesel::insert_into(users::table)
            .values((
                users::name.eq(format!("new user {}", rng.next_u64() % 1_000_000)),
                users::email.eq("new@example.com"),
            ))
            .execute(conn)
            .map(|_| ()),
        Op::FindById => users::table
            .filter(users::id.eq(rng.one_to(population.users)))
            .select((users::id, users::name, users::email))
            .first::<(i64, String, String)>(conn)
            .map(|_| ()),
        Op::Update => {
            diesel::update(orders::table.filter(orders::id.eq(rng.one_to(population.orders))))
                .set((orders::status.eq("paid"), orders::amount_cents.eq(orders::amount_cents + 1)))
                .execute(conn)
                .map(|_| ())
        }
        // Cached like sqlx's statements (diesel never caches `sql_query`).
        Op::Join => CachedSql::new(JOIN_SQL, &[rng.one_to(population.users)])
            .load::<UserOrders>(conn)
            .map(|_| ()),
        Op::BatchInsert100 => {
            let rows: Vec<NewOrder> = (0..100)
                .map(|_| NewOrder {
                    user_id: rng.one_to(population.users),
                    amount_cents: (rng.next_u64() % 100_000) as i32,
                    status: "new",
                })
                .collect();
            diesel::insert_into(orders::table).values(&rows).execute(conn).map(|_| ())
        }
    };
    result.map_err(|e| e.to_string())
}
