//! The suite's PostgreSQL: one seeded template, a fresh clone per target, restore before
//! write cells, `pg_stat_statements` around each cell, and the write audit of SPEC §5.

use std::collections::BTreeMap;

use bookstore_fixture::audit::{self, AuditFacts};
use bookstore_fixture::{ClusterOptions, DbServer, Provider};
use sqlx::{Connection, Executor, PgConnection};

use bookstore_client::scenario::Scenario;
use bookstore_record::results::{Audit, SqlStats, StatementCalls};

/// An audit, and the books it found refused with the stock in hand.
pub struct AuditOutcome {
    /// What the database holds against what the client was told.
    pub audit: Audit,
    /// Books answered 409 while their stock covered the quantity (an error, SPEC §4).
    pub unjustified_books: Vec<i64>,
}

/// Statements listed per cell (the rest are only counted).
const TOP_STATEMENTS: usize = 6;

/// One `pg_stat_statements` row of the cell's database.
struct StatementRow {
    query: String,
    calls: i64,
    shared_blks_hit: i64,
    shared_blks_read: i64,
    temp_blks_written: i64,
}

/// The suite's database server and what it created there.
pub struct BenchDatabase {
    runtime: tokio::runtime::Runtime,
    server: DbServer,
    admin: PgConnection,
    /// The seeded template, created when the first clone is asked for (stacks someone else
    /// started need none).
    template: Option<String>,
    created: Vec<String>,
    statements_available: bool,
    /// The cell's database's deadlock count when its statements were last reset.
    deadlocks_before: Option<u64>,
    /// The database named by an existing server's URL: the one stacks started by someone
    /// else use (`--targets`).
    named: Option<String>,
}

fn sql(context: &str) -> impl FnOnce(sqlx::Error) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("{context}: {e}")
}

impl BenchDatabase {
    /// An existing server (`database_url`), or else a throwaway one from `provider`.
    pub fn open(
        database_url: Option<&str>,
        provider: Provider,
        durable: bool,
        max_connections: u32,
    ) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (server, admin, statements_available) = runtime.block_on(async {
            let server = match database_url {
                Some(url) => DbServer::existing(url)?,
                None => {
                    let options = ClusterOptions { durable, max_connections, settings: Vec::new() };
                    DbServer::provide(provider, &options).await?
                }
            };
            let mut admin = server.connect(server.maintenance_database()).await?;
            // Only looked at, not reset: a shard other than the first must not reset what
            // the first is counting (each cell resets it where that is this run's job).
            let statements_available =
                admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await.is_ok()
                    && admin.execute("SELECT 1 FROM pg_stat_statements LIMIT 1").await.is_ok();
            anyhow::Ok((server, admin, statements_available))
        })?;
        let named = database_url
            .and_then(|u| url::Url::parse(u).ok())
            .map(|u| u.path().trim_start_matches('/').to_owned())
            .filter(|name| !name.is_empty());
        Ok(Self {
            runtime,
            server,
            admin,
            template: None,
            created: Vec::new(),
            statements_available,
            deadlocks_before: None,
            named,
        })
    }

    /// Process id of the throwaway cluster's postmaster (for CPU accounting).
    pub fn postgres_pid(&self) -> Option<u32> {
        self.server.cluster().map(|c| c.pid())
    }

    /// The database of `--database-url`, which stacks someone else started use.
    pub fn target_database(&self) -> anyhow::Result<&str> {
        self.named.as_deref().ok_or_else(|| {
            anyhow::anyhow!("--targets needs --database-url naming the database the stacks use")
        })
    }

    /// Whether SQL statements can be counted.
    pub fn statements_available(&self) -> bool {
        self.statements_available
    }

    /// A freshly seeded database `name` (dropped first if it exists); its URL.
    pub fn fresh(&mut self, name: &str) -> anyhow::Result<String> {
        let template = match &self.template {
            Some(template) => template.clone(),
            None => {
                // Unique per process and start, so runs sharing a server never meet.
                let started = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                let template = format!("bookstore_bench_template_{}_{started}", std::process::id());
                self.runtime.block_on(self.server.create_seeded_database(&template))?;
                self.created.push(template.clone());
                self.template = Some(template.clone());
                template
            }
        };
        let url = self.runtime.block_on(async {
            self.server.drop_database(name).await?;
            self.server.create_database(name, Some(&template)).await
        })?;
        self.created.push(name.to_owned());
        Ok(url)
    }

    /// Back to the seeded state (before a write cell).
    pub fn restore(&mut self, name: &str) -> anyhow::Result<()> {
        self.runtime.block_on(async {
            let mut conn = self.server.connect(name).await?;
            bookstore_fixture::restore(&mut conn).await?;
            conn.close().await.map_err(sql("closing"))
        })
    }

    /// Forgets every statement counted so far, and notes database `name`'s deadlock count
    /// (`pg_stat_database` cannot be reset per database without losing the others').
    pub fn reset_statements(&mut self, name: &str) {
        if self.statements_available {
            let _ = self.runtime.block_on(self.admin.execute("SELECT pg_stat_statements_reset()"));
        }
        self.deadlocks_before = self.deadlocks(name);
    }

    fn deadlocks(&mut self, name: &str) -> Option<u64> {
        let query = sqlx::query_scalar::<_, i64>(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = $1",
        );
        let count = self.runtime.block_on(query.bind(name).fetch_one(&mut self.admin)).ok()?;
        u64::try_from(count).ok()
    }

    /// Statements run in database `name` since the last reset: the total, PostgreSQL's
    /// counters and the most frequent statements (`requests` and the per-request figure
    /// are the caller's to fill in).
    pub fn statements(&mut self, name: &str) -> Option<SqlStats> {
        if !self.statements_available {
            return None;
        }
        let rows: Vec<(String, i64, i64, i64, i64)> = self
            .runtime
            .block_on(
                sqlx::query_as(
                    "SELECT s.query, s.calls, s.shared_blks_hit, s.shared_blks_read, s.temp_blks_written
                     FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                     WHERE d.datname = $1 ORDER BY s.calls DESC, s.query",
                )
                .bind(name)
                .fetch_all(&mut self.admin),
            )
            .ok()?;
        let rows: Vec<StatementRow> = rows
            .into_iter()
            .map(|(query, calls, shared_blks_hit, shared_blks_read, temp_blks_written)| {
                StatementRow { query, calls, shared_blks_hit, shared_blks_read, temp_blks_written }
            })
            .collect();
        let sum = |column: fn(&StatementRow) -> i64| -> u64 {
            rows.iter().map(|r| u64::try_from(column(r)).unwrap_or(0)).sum()
        };
        let calls_of = |verb: &str| -> u64 {
            rows.iter()
                .filter(|r| r.query.trim_start().to_ascii_uppercase().starts_with(verb))
                .map(|r| u64::try_from(r.calls).unwrap_or(0))
                .sum()
        };
        let deadlocks_after = self.deadlocks(name);
        Some(SqlStats {
            statements_per_request: 0.0,
            statements: sum(|r| r.calls),
            requests: 0,
            commits: calls_of("COMMIT"),
            rollbacks: calls_of("ROLLBACK"),
            shared_blocks_hit: sum(|r| r.shared_blks_hit),
            shared_blocks_read: sum(|r| r.shared_blks_read),
            temp_blocks_written: sum(|r| r.temp_blks_written),
            deadlocks: deadlocks_after
                .zip(self.deadlocks_before)
                .map(|(after, before)| after.saturating_sub(before)),
            top_statements: rows
                .iter()
                .take(TOP_STATEMENTS)
                .map(|r| StatementCalls {
                    query: r.query.split_whitespace().collect::<Vec<_>>().join(" "),
                    calls: u64::try_from(r.calls).unwrap_or(0),
                })
                .collect(),
        })
    }

    /// The URL of the server's maintenance database: the wait sampler connects there, so
    /// that its own queries are not counted among a cell's statements.
    pub fn maintenance_url(&self) -> String {
        self.server.database_url(self.server.maintenance_database())
    }

    /// The write audit of SPEC §5 on database `name` after `scenario`, given the successful
    /// checkouts the client received. Unless this client sent the `whole_load`, rows =
    /// acknowledged is left to `loadgen merge` (the other shards' acknowledgements are not
    /// known here).
    ///
    /// `refused` holds each book refused with 409 and the quantity asked for: every one must
    /// still be short of that quantity ([`audit::unjustified_refusals`]).
    pub fn audit(
        &mut self,
        name: &str,
        scenario: Scenario,
        acknowledged: u64,
        refused: &[(i64, i32)],
        whole_load: bool,
    ) -> anyhow::Result<AuditOutcome> {
        let facts = self.runtime.block_on(async {
            let mut conn = self.server.connect(name).await?;
            let facts = AuditFacts::read(&mut conn).await?;
            conn.close().await.map_err(sql("closing"))?;
            anyhow::Ok(facts)
        })?;
        let mut verdict = if whole_load {
            audit::judge(scenario.audited_as(), acknowledged, &facts)
        } else {
            audit::judge_stored(scenario.audited_as(), &facts)
        };
        let unjustified_books = audit::unjustified_refusals(&facts, refused);
        verdict
            .failures
            .extend(audit::refusals_failure(&unjustified_books, unjustified_books.len() as u64));
        Ok(AuditOutcome {
            audit: Audit {
                passed: verdict.passed(),
                checkout_rows: facts.checkout_rows,
                acknowledged_checkouts: acknowledged,
                negative_stock_books: verdict.negative_stock_books,
                stock_mismatches: verdict.stock_mismatches,
                unjustified_refusals: 0,
                failures: verdict.failures,
            },
            unjustified_books,
        })
    }

    /// Stops the throwaway cluster (fast shutdown: its clients are disconnected at once).
    pub fn stop_postgres(&mut self) -> anyhow::Result<()> {
        let cluster = self
            .server
            .cluster_mut()
            .ok_or_else(|| anyhow::anyhow!("only a throwaway cluster can be stopped"))?;
        cluster.stop();
        Ok(())
    }

    /// Starts the stopped cluster again on its port, returning once it answers queries; the
    /// administrative connection is opened anew.
    pub fn resume_postgres(&mut self) -> anyhow::Result<()> {
        let cluster = self
            .server
            .cluster_mut()
            .ok_or_else(|| anyhow::anyhow!("only a throwaway cluster can be started again"))?;
        self.runtime.block_on(cluster.resume())?;
        self.admin =
            self.runtime.block_on(self.server.connect(self.server.maintenance_database()))?;
        Ok(())
    }

    /// `pg_terminate_backend` on every client connection to database `name`; how many.
    pub fn terminate_backends(&mut self, name: &str) -> anyhow::Result<u64> {
        let query = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
        );
        let ended = self
            .runtime
            .block_on(query.bind(name).fetch_one(&mut self.admin))
            .map_err(sql("terminating backends"))?;
        Ok(u64::try_from(ended).unwrap_or(0))
    }

    /// Client connections to database `name` inside a transaction or running a statement
    /// (the stack's work still in progress).
    pub fn busy_backends(&mut self, name: &str) -> anyhow::Result<u64> {
        let query = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
               AND (state <> 'idle' OR xact_start IS NOT NULL)",
        );
        let busy = self
            .runtime
            .block_on(query.bind(name).fetch_one(&mut self.admin))
            .map_err(sql("reading pg_stat_activity"))?;
        Ok(u64::try_from(busy).unwrap_or(0))
    }

    /// What the fault audit reads from database `name`: the audit's facts and the id of
    /// every stored checkout.
    pub fn checkouts(&mut self, name: &str) -> anyhow::Result<(AuditFacts, Vec<String>)> {
        self.runtime.block_on(async {
            let mut conn = self.server.connect(name).await?;
            let facts = AuditFacts::read(&mut conn).await?;
            let ids: Vec<String> = sqlx::query_scalar("SELECT id::text FROM checkouts")
                .fetch_all(&mut conn)
                .await
                .map_err(sql("reading checkout ids"))?;
            conn.close().await.map_err(sql("closing"))?;
            anyhow::Ok((facts, ids))
        })
    }

    /// `SELECT version()` and the settings that shape the numbers.
    pub fn describe(&mut self) -> (Option<String>, BTreeMap<String, String>) {
        self.runtime.block_on(bookstore_fixture::describe_postgres(&mut self.admin))
    }

    /// `throwaway` (a cluster of this machine's binaries), `container` or `existing`.
    pub fn kind(&self) -> &'static str {
        self.server.kind()
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        if self.server.cluster().is_some() || self.server.is_container() {
            return; // the whole server goes, with its databases
        }
        // Clones first, the template last (it was created first).
        for name in std::mem::take(&mut self.created).into_iter().rev() {
            let _ = self.runtime.block_on(self.server.drop_database(&name));
        }
    }
}
