//! `dbbench`: the bookstore benchmark's question asked without HTTP — what does the database
//! access style cost? sqlx on tokio tasks against diesel on threads (through tokio's
//! `spawn_blocking`, or a fixed pool of OS threads), mirroring published JVM studies:
//!
//! - [`crud`]: single insert, find by id, single update, a users/orders join (with and
//!   without its index) and a 100-row batch insert, over pool sizes × parallel workers;
//! - [`bulk`]: bulk insert strategies, from row by row to `COPY`, every value bound;
//! - [`batch`]: an end-to-end batch job — generate, read back in partitions, transform,
//!   write, verify — at several sizes, parallelisms and pool sizes;
//! - [`targets`]: the databases those two run on — PostgreSQL, and with the features of
//!   the same names MariaDB (a throwaway server) and SQLite (a file);
//! - [`tasks`]: 10,000 tasks that each wait 100 ms on threads, tasks and `spawn_blocking`,
//!   and what a blocking call inside an async task does to a small runtime;
//! - [`dimensions`]: the databases, libraries and bulk strategies those sections compare,
//!   below every module that measures or reports them;
//! - [`settings`]: what a run sweeps — the flags of `dbbench run` and the results'
//!   `settings`, one record;
//! - [`results`]: the versioned results document (`DBBENCH.md`), [`report`] its page;
//! - [`run`]: the whole run, as `dbbench` (and `scripts/dbbench.sh`) does it.
//!
//! No two modules import each other: `dimensions`, `schema` and `measure` depend on no
//! other module, the measuring modules on those, `results` on the measuring ones, `targets`
//! on `results`, and `run` and `report` on everything below them.

pub mod batch;
pub mod bulk;
pub mod crud;
pub mod data;
pub mod dimensions;
pub mod measure;
pub mod report;
pub mod results;
pub mod run;
pub mod schema;
pub mod settings;
pub mod targets;
pub mod tasks;
