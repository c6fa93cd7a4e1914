//! The suite's PostgreSQL: one seeded template, a fresh clone per target, restore before
//! write cells, `pg_stat_statements` around each cell, and the write audit of SPEC §5.

use std::collections::BTreeMap;

use bookstore_fixture::{ClusterOptions, DbServer, seed};
use sqlx::{Connection, Executor, PgConnection};

use crate::results::{Audit, StatementCalls};
use crate::scenario::Scenario;

/// Statements listed per cell (the rest are only counted).
const TOP_STATEMENTS: usize = 6;

/// The suite's database server and what it created there.
pub(crate) struct BenchDatabase {
    runtime: tokio::runtime::Runtime,
    server: DbServer,
    admin: PgConnection,
    template: String,
    created: Vec<String>,
    statements_available: bool,
}

fn sql(context: &str) -> impl FnOnce(sqlx::Error) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("{context}: {e}")
}

impl BenchDatabase {
    /// A throwaway cluster (`database_url` `None`) or an existing server, with the seeded
    /// template created.
    pub(crate) fn open(
        database_url: Option<&str>,
        durable: bool,
        max_connections: u32,
    ) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (server, admin, template, statements_available) = runtime.block_on(async {
            let server = match database_url {
                Some(url) => DbServer::existing(url)?,
                None => {
                    let options = ClusterOptions { durable, max_connections, settings: Vec::new() };
                    DbServer::throwaway(&options).await?
                }
            };
            let template = format!("bookstore_bench_template_{}", std::process::id());
            server.drop_database(&template).await?;
            server.create_seeded_database(&template).await?;
            let mut admin = server.connect(server.maintenance_database()).await?;
            let statements_available =
                admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await.is_ok()
                    && admin.execute("SELECT pg_stat_statements_reset()").await.is_ok();
            anyhow::Ok((server, admin, template, statements_available))
        })?;
        Ok(Self { runtime, server, admin, template, created: Vec::new(), statements_available })
    }

    /// Process id of the throwaway cluster's postmaster (for CPU accounting).
    pub(crate) fn postgres_pid(&self) -> Option<u32> {
        self.server.cluster().map(|c| c.pid())
    }

    /// Whether SQL statements can be counted.
    pub(crate) fn statements_available(&self) -> bool {
        self.statements_available
    }

    /// A freshly seeded database `name` (dropped first if it exists); its URL.
    pub(crate) fn fresh(&mut self, name: &str) -> anyhow::Result<String> {
        let url = self.runtime.block_on(async {
            self.server.drop_database(name).await?;
            self.server.create_database(name, Some(&self.template)).await
        })?;
        self.created.push(name.to_owned());
        Ok(url)
    }

    /// Back to the seeded state (before a write cell).
    pub(crate) fn restore(&mut self, name: &str) -> anyhow::Result<()> {
        self.runtime.block_on(async {
            let mut conn = self.server.connect(name).await?;
            bookstore_fixture::restore(&mut conn).await?;
            conn.close().await.map_err(sql("closing"))
        })
    }

    /// Forgets every statement counted so far.
    pub(crate) fn reset_statements(&mut self) {
        if self.statements_available {
            let _ = self.runtime.block_on(self.admin.execute("SELECT pg_stat_statements_reset()"));
        }
    }

    /// Statements run in database `name` since the last reset: total calls and the most
    /// frequent ones.
    pub(crate) fn statements(&mut self, name: &str) -> Option<(u64, Vec<StatementCalls>)> {
        if !self.statements_available {
            return None;
        }
        let rows: Vec<(String, i64)> = self
            .runtime
            .block_on(
                sqlx::query_as(
                    "SELECT s.query, s.calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                     WHERE d.datname = $1 ORDER BY s.calls DESC, s.query",
                )
                .bind(name)
                .fetch_all(&mut self.admin),
            )
            .ok()?;
        let total = rows.iter().map(|(_, calls)| *calls as u64).sum();
        let top = rows
            .into_iter()
            .take(TOP_STATEMENTS)
            .map(|(query, calls)| StatementCalls {
                query: query.split_whitespace().collect::<Vec<_>>().join(" "),
                calls: calls as u64,
            })
            .collect();
        Some((total, top))
    }

    /// The write audit of SPEC §5 on database `name` after `scenario`, given the successful
    /// checkouts the client received.
    pub(crate) fn audit(
        &mut self,
        name: &str,
        scenario: Scenario,
        acknowledged: u64,
    ) -> anyhow::Result<Audit> {
        let facts = self.runtime.block_on(async {
            let mut conn = self.server.connect(name).await?;
            let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM checkouts")
                .fetch_one(&mut conn)
                .await
                .map_err(sql("counting checkouts"))?;
            let books: Vec<(i64, i32, i64)> = sqlx::query_as(
                "SELECT b.id, b.stock, coalesce(sum(c.quantity), 0)::bigint
                 FROM books b LEFT JOIN checkouts c ON c.book_id = b.id GROUP BY b.id ORDER BY b.id",
            )
            .fetch_all(&mut conn)
            .await
            .map_err(sql("reading stock"))?;
            let hotspot_rows: i64 = sqlx::query_scalar("SELECT count(*) FROM checkouts WHERE book_id = $1")
                .bind(seed::HOTSPOT_BOOK_ID)
                .fetch_one(&mut conn)
                .await
                .map_err(sql("counting hotspot checkouts"))?;
            conn.close().await.map_err(sql("closing"))?;
            anyhow::Ok(AuditFacts { checkout_rows: rows as u64, books, hotspot_rows: hotspot_rows as u64 })
        })?;
        Ok(judge(scenario, acknowledged, &facts))
    }

    /// `SELECT version()` and the settings that shape the numbers.
    pub(crate) fn describe(&mut self) -> (Option<String>, BTreeMap<String, String>) {
        let version = self
            .runtime
            .block_on(sqlx::query_scalar("SELECT version()").fetch_one(&mut self.admin))
            .ok();
        let mut settings = BTreeMap::new();
        for name in [
            "fsync",
            "synchronous_commit",
            "full_page_writes",
            "wal_level",
            "shared_buffers",
            "max_connections",
            "lc_collate",
            "jit",
            "shared_preload_libraries",
        ] {
            let value: Result<String, _> = self.runtime.block_on(
                sqlx::query_scalar("SELECT setting FROM pg_settings WHERE name = $1")
                    .bind(name)
                    .fetch_one(&mut self.admin),
            );
            if let Ok(value) = value {
                settings.insert(name.to_owned(), value);
            }
        }
        (version, settings)
    }

    /// `throwaway` or `existing`.
    pub(crate) fn kind(&self) -> &'static str {
        if self.server.cluster().is_some() { "throwaway" } else { "existing" }
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        if self.server.cluster().is_some() {
            return; // the whole cluster goes with the server
        }
        let mut names = std::mem::take(&mut self.created);
        names.push(self.template.clone());
        for name in names {
            let _ = self.runtime.block_on(self.server.drop_database(&name));
        }
    }
}

/// What the audit reads from the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditFacts {
    /// Rows in `checkouts`.
    pub checkout_rows: u64,
    /// `(book id, current stock, Σ quantity of its checkouts)` for every book.
    pub books: Vec<(i64, i32, i64)>,
    /// Checkout rows of the hotspot book.
    pub hotspot_rows: u64,
}

/// Judges the facts against SPEC §5: no negative stock; for every book, seeded stock −
/// current stock = Σ quantity of its checkouts; checkout rows = successes the client
/// received; the hotspot's stock loss equals its rows; the sold-out book sold exactly 10.
pub fn judge(scenario: Scenario, acknowledged: u64, facts: &AuditFacts) -> Audit {
    let mut failures = Vec::new();
    let negative: Vec<i64> =
        facts.books.iter().filter(|(_, stock, _)| *stock < 0).map(|(id, _, _)| *id).collect();
    if !negative.is_empty() {
        failures.push(format!(
            "{} book(s) with negative stock, first {:?}",
            negative.len(),
            &negative[..negative.len().min(5)]
        ));
    }
    let mismatched: Vec<i64> = facts
        .books
        .iter()
        .filter(|(id, stock, sold)| {
            (1..=seed::BOOKS).contains(id)
                && i64::from(seed::book(*id).stock) - i64::from(*stock) != *sold
        })
        .map(|(id, _, _)| *id)
        .collect();
    if !mismatched.is_empty() {
        failures.push(format!(
            "{} book(s) whose stock does not match their checkouts, first {:?}",
            mismatched.len(),
            &mismatched[..mismatched.len().min(5)]
        ));
    }
    if facts.books.len() as i64 != seed::BOOKS {
        failures.push(format!(
            "{} books in the database, {} seeded",
            facts.books.len(),
            seed::BOOKS
        ));
    }
    if facts.checkout_rows != acknowledged {
        failures.push(format!(
            "{} checkout rows but {acknowledged} successful checkouts acknowledged to the client",
            facts.checkout_rows
        ));
    }
    let hotspot_loss = facts
        .books
        .iter()
        .find(|(id, _, _)| *id == seed::HOTSPOT_BOOK_ID)
        .map(|(_, stock, _)| i64::from(seed::HOTSPOT_STOCK) - i64::from(*stock));
    if scenario == Scenario::CheckoutHotspot && hotspot_loss != Some(facts.hotspot_rows as i64) {
        failures.push(format!(
            "the hotspot book lost {hotspot_loss:?} stock but has {} checkout rows",
            facts.hotspot_rows
        ));
    }
    if scenario == Scenario::CheckoutSoldOut && facts.checkout_rows != seed::SOLD_OUT_STOCK as u64 {
        failures.push(format!(
            "the sold-out book sold {} times, its stock is {}",
            facts.checkout_rows,
            seed::SOLD_OUT_STOCK
        ));
    }
    Audit {
        passed: failures.is_empty(),
        checkout_rows: facts.checkout_rows,
        acknowledged_checkouts: acknowledged,
        negative_stock_books: negative.len() as u64,
        stock_mismatches: mismatched.len() as u64,
        failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seeded books, with `sales` applied as (book id, quantity) checkouts.
    fn facts_after(sales: &[(i64, i64)]) -> AuditFacts {
        let mut books: Vec<(i64, i32, i64)> = seed::books().map(|b| (b.id, b.stock, 0)).collect();
        for &(id, quantity) in sales {
            let book = &mut books[(id - 1) as usize];
            book.1 -= quantity as i32;
            book.2 += quantity;
        }
        let hotspot_rows =
            sales.iter().filter(|(id, _)| *id == seed::HOTSPOT_BOOK_ID).count() as u64;
        AuditFacts { checkout_rows: sales.len() as u64, books, hotspot_rows }
    }

    #[test]
    fn consistent_writes_pass() {
        let sales: Vec<(i64, i64)> = (3..103).map(|id| (id, 1)).collect();
        let audit = judge(Scenario::CheckoutCreate, 100, &facts_after(&sales));
        assert!(audit.passed, "{:?}", audit.failures);
        let hotspot = vec![(1, 1); 40];
        assert!(judge(Scenario::CheckoutHotspot, 40, &facts_after(&hotspot)).passed);
        let sold_out = vec![(2, 1); 10];
        assert!(judge(Scenario::CheckoutSoldOut, 10, &facts_after(&sold_out)).passed);
    }

    #[test]
    fn a_server_that_answers_201_without_writing_fails() {
        let audit = judge(Scenario::CheckoutCreate, 250, &facts_after(&[]));
        assert!(!audit.passed);
        assert_eq!(
            audit.failures,
            ["0 checkout rows but 250 successful checkouts acknowledged to the client"]
        );
    }

    #[test]
    fn lost_stock_updates_duplicates_and_negative_stock_fail() {
        let mut facts = facts_after(&[(5, 1), (6, 1)]);
        facts.books[4].1 += 1; // book 5's UPDATE was lost
        let audit = judge(Scenario::CheckoutCreate, 2, &facts);
        assert_eq!(audit.stock_mismatches, 1);
        assert!(!audit.passed);

        let duplicated = facts_after(&[(7, 1), (7, 1)]);
        assert!(
            !judge(Scenario::CheckoutDistributed, 1, &duplicated).passed,
            "one acknowledged, two rows"
        );

        let oversold = facts_after(&[(2, 1); 11]);
        let audit = judge(Scenario::CheckoutSoldOut, 11, &oversold);
        assert_eq!(audit.negative_stock_books, 1);
        assert!(audit.failures.iter().any(|f| f.contains("sold 11 times")), "{:?}", audit.failures);
    }

    #[test]
    fn the_hotspot_rows_must_match_its_stock_loss() {
        let mut facts = facts_after(&[(1, 1), (1, 1)]);
        facts.hotspot_rows = 1;
        let audit = judge(Scenario::CheckoutHotspot, 2, &facts);
        assert!(audit.failures.iter().any(|f| f.contains("hotspot")), "{:?}", audit.failures);
    }
}
