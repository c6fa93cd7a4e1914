//! MariaDB and SQLite, when built in (features `mariadb`, `sqlite`; scripts/test.sh turns
//! them on where it can, and a build with `mariadb` needs the server: its tests fail, not
//! skip, without it). The cross-database tests in `main.rs` run on [`optional_targets`];
//! here what is particular to each: parameter limits, the statement text, the server's end.

use std::sync::Arc;

use bookstore_dbbench::targets::Target;

/// How many of the optional databases this test binary was built with.
pub(crate) const OPTIONAL_BUILT_IN: usize =
    cfg!(feature = "mariadb") as usize + cfg!(feature = "sqlite") as usize;

/// Each optional database built in, opened for a test.
pub(crate) fn optional_targets(runtime: &Arc<tokio::runtime::Runtime>) -> Vec<Box<dyn Target>> {
    let targets: [Option<Box<dyn Target>>; 2] = [
        #[cfg(feature = "mariadb")]
        Some(Box::new(
            bookstore_dbbench::targets::mariadb::Mariadb::start(Arc::clone(runtime))
                .expect("MariaDB starts (the build has the feature: install mariadb-server-core)"),
        )),
        #[cfg(not(feature = "mariadb"))]
        None,
        #[cfg(feature = "sqlite")]
        Some(Box::new(
            bookstore_dbbench::targets::sqlite::Sqlite::create(Arc::clone(runtime))
                .expect("a SQLite file"),
        )),
        #[cfg(not(feature = "sqlite"))]
        None,
    ];
    let _ = runtime;
    targets.into_iter().flatten().collect()
}

/// INSERT statements diesel sends on `conn` while `work` runs (its instrumentation sees
/// every statement, whatever the backend).
#[cfg(any(feature = "mariadb", feature = "sqlite"))]
fn diesel_inserts<C: diesel::Connection>(conn: &mut C, work: impl FnOnce(&mut C)) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    conn.set_instrumentation(move |event: diesel::connection::InstrumentationEvent<'_>| {
        if let diesel::connection::InstrumentationEvent::StartQuery { query, .. } = event
            && query.to_string().trim_start().starts_with("INSERT")
        {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    work(conn);
    conn.set_instrumentation(|_: diesel::connection::InstrumentationEvent<'_>| {});
    count.load(Ordering::Relaxed)
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use bookstore_dbbench::data;
    use bookstore_dbbench::dimensions::{Database, Strategy};
    use bookstore_dbbench::targets::sqlite::{self, Sqlite};

    #[test]
    fn the_values_chunks_meet_sqlites_parameter_limit_at_its_boundary() {
        let runtime = Arc::new(bookstore_dbbench::measure::runtime());
        let target = Sqlite::create(Arc::clone(&runtime)).unwrap();
        let limit = Database::Sqlite.rows_per_statement();
        assert_eq!(limit, 6_553);
        let items = data::items(limit + 1);
        runtime.block_on(async {
            let mut conn = target.sqlx_connect().await.unwrap();
            // 32,765 parameters in one statement run; one more row, and SQLite refuses.
            sqlite::values_statement(&items[..limit]).build().execute(&mut conn).await.unwrap();
            sqlx::query("DELETE FROM items").execute(&mut conn).await.unwrap();
            let error =
                sqlite::values_statement(&items).build().execute(&mut conn).await.unwrap_err();
            assert!(error.to_string().contains("too many SQL variables"), "{error}");
            // The strategy chunks, with both libraries: every row stored.
            sqlite::insert_sqlx(&mut conn, Strategy::MultiValues, &items).await.unwrap();
        });
        assert_eq!(target.read_items().unwrap(), items);
        // diesel too, in two statements (not one per row: see the next test).
        target.clear_items().unwrap();
        let mut conn = target.diesel_connect().unwrap();
        let inserts = diesel_inserts(&mut conn, |conn| {
            sqlite::insert_diesel(conn, Strategy::MultiValues, &items).unwrap();
        });
        assert_eq!(inserts, 2);
        assert_eq!(target.read_items().unwrap(), items);
    }

    #[test]
    fn diesel_writes_the_batch_jobs_rows_in_one_statement_per_chunk_on_sqlite() {
        // A multi-row insert of values diesel may replace by DEFAULT becomes one INSERT per
        // row on SQLite, which has no DEFAULT in VALUES: the batch job's rows must be plain.
        use bookstore_dbbench::batch::{BatchResult, NewSource, source_row, transform};
        use bookstore_dbbench::schema::{batch_results, batch_source};
        use diesel::RunQueryDsl;
        let runtime = Arc::new(bookstore_dbbench::measure::runtime());
        let target = Sqlite::create(Arc::clone(&runtime)).unwrap();
        let mut conn = target.diesel_connect().unwrap();
        let sources: Vec<NewSource> = (1..=500).map(|id| NewSource::from(source_row(id))).collect();
        let results: Vec<BatchResult> = (1..=500).map(|id| transform(&source_row(id))).collect();
        let inserts = diesel_inserts(&mut conn, |conn| {
            diesel::insert_into(batch_source::table).values(&sources).execute(conn).unwrap();
            diesel::insert_into(batch_results::table).values(&results).execute(conn).unwrap();
        });
        assert_eq!(inserts, 2);
    }
}

#[cfg(feature = "mariadb")]
mod mariadb {
    use super::*;
    use bookstore_dbbench::dimensions::{Database, Library, Strategy};
    use bookstore_dbbench::measure::Access;
    use bookstore_dbbench::targets::mariadb::{self, Mariadb};
    use bookstore_dbbench::{batch, data};

    /// Prepared statements executed on this session so far.
    async fn executions(conn: &mut sqlx::MySqlConnection) -> i64 {
        let (_, value): (String, String) =
            sqlx::query_as("SHOW SESSION STATUS LIKE 'Com_stmt_execute'")
                .fetch_one(&mut *conn)
                .await
                .unwrap();
        value.parse().unwrap()
    }

    #[test]
    fn the_values_chunks_meet_mariadbs_parameter_limit_at_its_boundary() {
        let runtime = Arc::new(bookstore_dbbench::measure::runtime());
        let target = Mariadb::start(Arc::clone(&runtime)).unwrap();
        let limit = Database::Mariadb.rows_per_statement();
        let items = data::items(limit + 1);
        runtime.block_on(async {
            let mut conn = target.sqlx_connect().await.unwrap();
            // 65,535 parameters in one statement run; one more row, and it fails.
            mariadb::values_statement(&items[..limit]).build().execute(&mut conn).await.unwrap();
            sqlx::query("TRUNCATE items").execute(&mut conn).await.unwrap();
            let over = mariadb::values_statement(&items).build().execute(&mut conn).await;
            let error = over.expect_err("65,540 parameters in one statement ran").to_string();
            assert!(error.contains("too many placeholders"), "{error}");
            // The strategy chunks: 13,108 rows in two statements, 13,107 in one (reading
            // the count is an execution too).
            let reading = -executions(&mut conn).await + executions(&mut conn).await;
            for (rows, statements) in [(limit + 1, 2), (limit, 1)] {
                sqlx::query("TRUNCATE items").execute(&mut conn).await.unwrap();
                let before = executions(&mut conn).await;
                mariadb::insert_sqlx(&mut conn, Strategy::MultiValues, &items[..rows])
                    .await
                    .unwrap();
                assert_eq!(executions(&mut conn).await - before - reading, statements, "{rows}");
            }
        });
        target.clear_items().unwrap();
        let (_, outcome) =
            target.insert_items(Library::Sqlx, Strategy::MultiValues, &items).unwrap();
        outcome.unwrap();
        assert_eq!(target.read_items().unwrap(), items);
        // diesel: one statement past the limit fails; the strategy takes two.
        target.clear_items().unwrap();
        let mut conn = target.diesel_connect().unwrap();
        let over = {
            use bookstore_dbbench::schema::items;
            use diesel::RunQueryDsl;
            diesel::insert_into(items::table).values(&items[..]).execute(&mut conn)
        };
        assert!(over.is_err(), "diesel ran 65,540 parameters in one statement");
        let inserts = diesel_inserts(&mut conn, |conn| {
            mariadb::insert_diesel(conn, Strategy::MultiValues, &items).unwrap();
        });
        assert_eq!(inserts, 2);
        assert_eq!(target.read_items().unwrap(), items);
    }

    /// The general log's entries as (command, text): an entry starts with a line whose
    /// tab-separated head is `<thread id> <Command>` (after a time stamp on some); a
    /// statement's further lines belong to it.
    fn log_entries(log: &str) -> Vec<(String, String)> {
        let mut entries: Vec<(String, String)> = Vec::new();
        for line in log.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            let head = fields.iter().position(|field| {
                let mut words = field.split_whitespace();
                let id = words.next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
                id && words.next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_alphabetic()))
            });
            match head {
                Some(at) => {
                    let command = fields[at].split_whitespace().nth(1).unwrap_or_default();
                    entries.push((command.to_owned(), fields[at + 1..].join("\t")));
                }
                // A statement's further line (before any entry: the log's own header).
                None => {
                    if let Some((_, text)) = entries.last_mut() {
                        text.push('\n');
                        text.push_str(line);
                    }
                }
            }
        }
        entries
    }

    #[test]
    fn no_row_value_appears_in_a_statement_text_mariadb_receives() {
        // The general log records each statement's text as received (Query, Prepare) and,
        // separately, each execution with its bound values filled in (Execute).
        let runtime = Arc::new(bookstore_dbbench::measure::runtime());
        let settings = [("general-log", "1"), ("general-log-file", "general.log")];
        let target = Mariadb::start_with(Arc::clone(&runtime), &settings).unwrap();
        let items = data::items(300);
        for strategy in Database::Mariadb.strategies() {
            for library in Library::ALL {
                target.clear_items().unwrap();
                let (_, outcome) = target.insert_items(library, strategy, &items).unwrap();
                outcome.unwrap();
            }
        }
        let pools = target.batch_pools(3).unwrap();
        for access in Access::ALL {
            batch::run(pools.as_ref(), access, 250, 2).unwrap().1.unwrap();
        }
        let log = std::fs::read_to_string(target.server().dir().join("data/general.log")).unwrap();
        let entries = log_entries(&log);
        // The check looks at the right thing: the statements are there, and the values are
        // in the log where the server fills them in…
        for statement in ["INSERT INTO items", "JSON_TABLE", "INSERT INTO batch_results"] {
            assert!(
                entries
                    .iter()
                    .any(|(command, text)| command == "Prepare" && text.contains(statement)),
                "{statement} not prepared"
            );
        }
        assert!(
            entries
                .iter()
                .any(|(command, text)| command == "Execute" && text.contains(data::SENTINEL))
        );
        // …and not one value of a row is in a text that was sent.
        let leaks: Vec<&String> = entries
            .iter()
            .filter(|(command, text)| {
                (command == "Query" || command == "Prepare") && text.contains(data::SENTINEL)
            })
            .map(|(_, text)| text)
            .take(3)
            .collect();
        assert!(leaks.is_empty(), "row values in the SQL text: {leaks:?}");
        // The anti-example, so the check is known to catch it.
        runtime.block_on(async {
            let mut conn = target.sqlx_connect().await.unwrap();
            let built =
                format!("INSERT INTO items VALUES (0, '{}-sku', 'n', 1, 1)", data::SENTINEL);
            sqlx::raw_sql(sqlx::AssertSqlSafe(built)).execute(&mut conn).await.unwrap();
        });
        let log = std::fs::read_to_string(target.server().dir().join("data/general.log")).unwrap();
        let caught = log_entries(&log)
            .into_iter()
            .any(|(command, text)| command == "Query" && text.contains(data::SENTINEL));
        assert!(caught, "a value built into the SQL text was not caught");
    }

    #[test]
    fn a_mariadb_server_is_gone_with_its_files_when_dropped() {
        let runtime = Arc::new(bookstore_dbbench::measure::runtime());
        let target = Mariadb::start(Arc::clone(&runtime)).unwrap();
        let (dir, pid) = (target.server().dir().to_owned(), target.server().pid());
        assert!(target.describe().unwrap().version.contains("MariaDB"));
        drop(target);
        assert!(!dir.exists(), "{} left behind", dir.display());
        assert!(!bookstore_fixture::process::process_alive(pid), "mariadbd {pid} still runs");
    }
}
