//! dbbench against real databases: on PostgreSQL (and MariaDB and SQLite when built with
//! their features) every bulk strategy stores exactly the rows sent and the batch job's
//! output is exact; no row value reaches the SQL text; each parameter limit at its
//! boundary; the batch job's check; the CRUD operations; a whole tiny run with its page.

mod others;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bookstore_dbbench::crud::{self, Op, Pools, Population, Timing};
use bookstore_dbbench::dimensions::{Database, Library, Strategy};
use bookstore_dbbench::measure::Access;
use bookstore_dbbench::settings::Settings;
use bookstore_dbbench::targets::postgres::{self, Postgres};
use bookstore_dbbench::targets::{self, Target};
use bookstore_dbbench::{batch, data, run, schema};
use bookstore_fixture::{ClusterOptions, DbServer, PgCluster};
use bookstore_record::RunInfo;
use diesel::Connection as _;
use sqlx::{Connection, Executor, PgConnection};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fresh database with the dbbench tables, on the tests' shared server; its URL.
async fn database() -> String {
    let server = bookstore_fixture::testing::server().await.expect("a test server");
    let name = format!("dbbench_t{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let url = server.create_database(&name, None).await.unwrap();
    let mut conn = PgConnection::connect(&url).await.unwrap();
    schema::install(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    url
}

/// Inserts `items` with `library` by `strategy` into the empty table of `url`.
async fn insert(
    url: &str,
    library: Library,
    strategy: Strategy,
    items: &[data::Item],
) -> Result<(), String> {
    let mut conn = PgConnection::connect(url).await.unwrap();
    conn.execute("TRUNCATE items").await.unwrap();
    match library {
        Library::Sqlx => {
            postgres::insert_sqlx(&mut conn, strategy, items).await.map_err(|e| e.to_string())
        }
        Library::Diesel => {
            let url = url.to_owned();
            let items = items.to_vec();
            tokio::task::spawn_blocking(move || {
                let mut conn = diesel::PgConnection::establish(&url).unwrap();
                postgres::insert_diesel(&mut conn, strategy, &items).map_err(|e| e.to_string())
            })
            .await
            .unwrap()
        }
    }
}

/// Every row of `items`, by key.
async fn read_items(conn: &mut PgConnection) -> Vec<data::Item> {
    let rows = sqlx::query_as(targets::READ_ITEMS).fetch_all(conn).await.unwrap();
    targets::items_from_rows(rows)
}

/// The run's PostgreSQL target on a fresh database, and every optional database built in.
fn every_target(runtime: &Arc<tokio::runtime::Runtime>) -> Vec<Box<dyn Target>> {
    let url = runtime.block_on(database());
    let mut targets: Vec<Box<dyn Target>> = vec![Box::new(Postgres::new(Arc::clone(runtime), url))];
    targets.extend(others::optional_targets(runtime));
    targets
}

#[test]
fn every_strategy_of_both_libraries_stores_exactly_the_rows_sent_on_every_database() {
    let runtime = Arc::new(bookstore_dbbench::measure::runtime());
    // Quotes, backslashes, tabs, newlines, carriage returns, an injection attempt, non-ASCII.
    let items = data::items(2_500);
    let targets = every_target(&runtime);
    assert_eq!(targets.len(), 1 + others::OPTIONAL_BUILT_IN, "a database built in did not open");
    for target in &targets {
        let database = target.database().name();
        for strategy in Strategy::ALL {
            for library in Library::ALL {
                let what = format!("{database} {} {}", library.name(), strategy.name());
                if target.database().supports(strategy).is_err() {
                    // Refused, not silently done some other way.
                    let (_, outcome) = target.insert_items(library, strategy, &items).unwrap();
                    assert!(outcome.is_err(), "{what} ran");
                    continue;
                }
                let cell = run::bulk_cell(target.as_ref(), library, strategy, &items).unwrap();
                assert!(cell.verified, "{what}: {:?}", cell.failure);
                assert_eq!(target.read_items().unwrap().len(), items.len(), "{what}");
            }
        }
    }
}

#[test]
fn the_comparison_finds_a_changed_or_missing_row() {
    let items = data::items(10);
    let mut changed = items.clone();
    changed[3].name.push('!');
    assert!(run::compare_items(&changed, &items).unwrap_err().contains("row 4"));
    assert!(
        run::compare_items(&items[..9], &items).unwrap_err().contains("9 rows read back, 10 sent")
    );
}

/// The server's statement log (`log_statement = all`, parameter values not logged) of
/// everything `work` did.
async fn statement_log<F, Fut>(work: F) -> String
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let options = ClusterOptions {
        settings: vec![
            ("log_statement".into(), "all".into()),
            // Bound values would be logged as DETAIL lines; they are data, not SQL text.
            ("log_parameter_max_length".into(), "0".into()),
            ("log_parameter_max_length_on_error".into(), "0".into()),
        ],
        ..ClusterOptions::for_tests()
    };
    let cluster = PgCluster::start(&options).await.unwrap();
    let log = cluster.dir().join("postgres.log");
    let server = DbServer::existing(&cluster.url("postgres")).unwrap();
    let url = server.create_database("logged", None).await.unwrap();
    let mut conn = PgConnection::connect(&url).await.unwrap();
    schema::install(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    work(url).await;
    std::fs::read_to_string(log).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_row_value_ever_appears_in_the_sql_text() {
    let items = data::items(300);
    let log = statement_log(|url| async move {
        for library in Library::ALL {
            for strategy in Database::Postgres.strategies() {
                insert(&url, library, strategy, &items).await.unwrap();
            }
        }
        // The batch job writes generated text too, in every access style.
        let url2 = url.clone();
        tokio::task::spawn_blocking(move || {
            let pools =
                Pools::open(Arc::new(bookstore_dbbench::measure::runtime()), &url2, 3).unwrap();
            for access in Access::ALL {
                let (_, verdict) = batch::run(&pools, access, 250, 2).unwrap();
                verdict.unwrap();
            }
        })
        .await
        .unwrap();
    })
    .await;
    // The statements were logged (the check looks at the right thing)…
    for statement in ["INSERT INTO items", "UNNEST", "COPY items", "INSERT INTO batch_results"] {
        assert!(log.contains(statement), "{statement} not in the log");
    }
    // …and not one value of a row is in their text.
    let leaks: Vec<&str> = log.lines().filter(|l| l.contains(data::SENTINEL)).take(3).collect();
    assert!(leaks.is_empty(), "row values in the SQL text: {leaks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_statement_log_shows_a_value_built_into_the_sql() {
    // The anti-example, so the check above is known to catch it.
    let log = statement_log(|url| async move {
        let mut conn = PgConnection::connect(&url).await.unwrap();
        let built = format!("INSERT INTO items VALUES (1, '{}-sku', 'name', 1, 1)", data::SENTINEL);
        conn.execute(sqlx::AssertSqlSafe(built)).await.unwrap();
    })
    .await;
    assert!(log.lines().any(|l| l.contains(data::SENTINEL)));
}

/// Executions of INSERTs into `items` since the last reset (pg_stat_statements); diesel
/// quotes the table's name, sqlx's text does not.
async fn item_inserts(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        r#"SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query ~ '^INSERT INTO "?items"? '"#,
    )
    .fetch_one(conn)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_values_chunks_meet_the_parameter_limit_at_its_boundary() {
    let url = database().await;
    let limit = Database::Postgres.rows_per_statement();
    let items = data::items(limit + 1);
    let mut conn = PgConnection::connect(&url).await.unwrap();
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await.unwrap();

    // One statement of exactly 65,535 parameters runs; one more row, and sqlx refuses.
    postgres::values_statement(&items[..limit]).build().execute(&mut conn).await.unwrap();
    conn.execute("TRUNCATE items").await.unwrap();
    let error = postgres::values_statement(&items).build().execute(&mut conn).await.unwrap_err();
    assert!(error.to_string().contains("too many arguments for query: 65540"), "{error}");
    // diesel does not split a multi-row insert for you either.
    let (url2, over) = (url.clone(), items.clone());
    let diesel_error = tokio::task::spawn_blocking(move || {
        use diesel::RunQueryDsl;
        let mut conn = diesel::PgConnection::establish(&url2).unwrap();
        diesel::insert_into(schema::items::table).values(&over[..]).execute(&mut conn).unwrap_err()
    })
    .await
    .unwrap();
    assert!(!diesel_error.to_string().is_empty());

    // The strategy chunks: 13,108 rows take two statements, every row stored.
    for library in Library::ALL {
        sqlx::query("SELECT pg_stat_statements_reset()").execute(&mut conn).await.unwrap();
        insert(&url, library, Strategy::MultiValues, &items).await.unwrap();
        assert_eq!(item_inserts(&mut conn).await, 2, "{}", library.name());
        let found = read_items(&mut conn).await;
        run::compare_items(&found, &items).unwrap();
        // And exactly at the limit, one.
        sqlx::query("SELECT pg_stat_statements_reset()").execute(&mut conn).await.unwrap();
        insert(&url, library, Strategy::MultiValues, &items[..limit]).await.unwrap();
        assert_eq!(item_inserts(&mut conn).await, 1, "{}", library.name());
    }
}

#[test]
fn the_batch_job_is_exact_in_every_style_on_every_database() {
    let runtime = Arc::new(bookstore_dbbench::measure::runtime());
    let targets = every_target(&runtime);
    assert_eq!(targets.len(), 1 + others::OPTIONAL_BUILT_IN, "a database built in did not open");
    for target in &targets {
        let pools = target.batch_pools(4).unwrap();
        for access in Access::ALL {
            for parallelism in [1, 3] {
                let what =
                    format!("{} {} × {parallelism}", target.database().name(), access.name());
                let (times, verdict) = batch::run(pools.as_ref(), access, 2_345, parallelism)
                    .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                verdict.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(times.seed > Duration::ZERO && times.job > Duration::ZERO);
            }
        }
    }
}

#[test]
fn the_batch_jobs_check_catches_a_changed_or_missing_row() {
    let runtime = Arc::new(bookstore_dbbench::measure::runtime());
    let url = runtime.block_on(database());
    let pools = Pools::open(Arc::clone(&runtime), &url, 4).unwrap();
    let (_, verdict) = batch::run(&pools, Access::SqlxTasks, 2_345, 2).unwrap();
    verdict.unwrap();
    runtime.block_on(async {
        let mut conn = PgConnection::connect(&url).await.unwrap();
        conn.execute("UPDATE batch_results SET amount_with_tax_cents = amount_with_tax_cents + 1 WHERE source_id = 77")
            .await
            .unwrap();
    });
    assert!(batch::verify(&pools, 2_345).unwrap().unwrap_err().contains("result 77"));
    runtime.block_on(async {
        let mut conn = PgConnection::connect(&url).await.unwrap();
        conn.execute("DELETE FROM batch_results WHERE source_id = 5").await.unwrap();
    });
    assert!(batch::verify(&pools, 2_345).unwrap().unwrap_err().contains("2344 results"));
}

#[test]
fn every_crud_operation_runs_without_errors_in_every_style() {
    let runtime = Arc::new(bookstore_dbbench::measure::runtime());
    let url = runtime.block_on(async {
        let url = database().await;
        let mut conn = PgConnection::connect(&url).await.unwrap();
        schema::fill_users_and_orders(&mut conn, 200, 5).await.unwrap();
        url
    });
    let pools = Pools::open(Arc::clone(&runtime), &url, 3).unwrap();
    let population = Population { users: 200, orders: 1_000 };
    let timing = Timing { warmup: Duration::ZERO, window: Duration::from_millis(100) };
    for op in Op::ALL {
        for access in Access::ALL {
            let measured = crud::run(access, &pools, op, 2, population, timing);
            assert_eq!(
                measured.errors,
                0,
                "{} {}: {:?}",
                op.name(),
                access.name(),
                measured.first_error
            );
            assert!(measured.ops > 0, "{} {}", op.name(), access.name());
            assert_eq!(measured.latency_us.len(), measured.ops);
        }
    }
    // The inserts landed: 100 orders per batch insert.
    let orders: i64 = runtime.block_on(async {
        let mut conn = PgConnection::connect(&url).await.unwrap();
        sqlx::query_scalar("SELECT count(*) FROM orders").fetch_one(&mut conn).await.unwrap()
    });
    assert!(orders >= 1_000 + 300 && (orders - 1_000) % 100 == 0, "{orders}");
}

#[test]
fn a_tiny_run_writes_a_complete_results_file_and_its_page() {
    let dir = std::env::temp_dir().join(format!("dbbench-run-{}", std::process::id()));
    let output = dir.join("run.json");
    let mut settings = Settings::from_flags(&["--quick"]).unwrap();
    settings.pool_sizes = vec![2];
    settings.crud_workers = vec![1];
    settings.crud_warmup_seconds = 0.0;
    settings.crud_window_seconds = 0.05;
    settings.crud_users = 100;
    settings.crud_orders_per_user = 3;
    settings.bulk_rows = vec![120];
    settings.batch_rows = vec![150];
    settings.batch_parallelism = vec![2];
    settings.tasks = 40;
    settings.task_wait_ms = 10;
    settings.blocking_tasks = 4;
    let options = run::Options {
        settings,
        sections: vec![
            run::Section::Crud,
            run::Section::Bulk,
            run::Section::Batch,
            run::Section::Tasks,
        ],
        database_url: None,
        provider: bookstore_fixture::Provider::from_env().unwrap(),
        output: output.clone(),
        workspace: std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        command_line: vec!["dbbench".into(), "run".into()],
        stop: Default::default(),
    };
    let results = run::run(&options).unwrap();
    assert_eq!(results.run.status, bookstore_record::RunStatus::Complete);
    // In 2 rounds: 6 operation variants (the join twice) × 3 styles; 6 strategies × 2
    // libraries on PostgreSQL, 4 × 2 on the others; 3 styles per database; 7 task variants.
    let databases = 1 + others::OPTIONAL_BUILT_IN;
    assert_eq!(results.settings.rounds, 2);
    assert_eq!(results.crud.len(), 2 * 18);
    assert_eq!(results.bulk.len(), 2 * (12 + 8 * others::OPTIONAL_BUILT_IN));
    assert_eq!(results.batch.len(), 2 * 3 * databases);
    assert_eq!(results.tasks.len(), 2 * 7);
    for round in 0..2 {
        assert_eq!(results.crud.iter().filter(|c| c.round == round).count(), 18);
        assert_eq!(results.tasks.iter().filter(|c| c.round == round).count(), 7);
    }
    assert_eq!(results.databases.len(), databases);
    // The progress bar's total is the number of cells measured.
    let settings = &results.settings;
    let postgres = Database::Postgres;
    let planned = [run::Section::Crud, run::Section::Tasks]
        .map(|section| run::planned_cells(section, settings, postgres))
        .iter()
        .sum::<u64>()
        + results
            .databases
            .iter()
            .map(|d| {
                run::planned_cells(run::Section::Bulk, settings, d.database)
                    + run::planned_cells(run::Section::Batch, settings, d.database)
            })
            .sum::<u64>();
    let measured =
        results.crud.len() + results.bulk.len() + results.batch.len() + results.tasks.len();
    assert_eq!(planned, measured as u64);
    // A database not built in is said, with how to build it in.
    assert_eq!(
        results.skipped.iter().filter(|s| s.contains("not built in (cargo feature")).count(),
        2 - others::OPTIONAL_BUILT_IN,
        "{:?}",
        results.skipped
    );
    assert!(results.crud.iter().all(|c| c.errors == 0 && c.ops > 0));
    assert!(results.bulk.iter().all(|c| c.verified) && results.batch.iter().all(|c| c.verified));
    let written = bookstore_dbbench::results::DbBenchResults::read(&output).unwrap();
    // What was measured is what was written (floats compared as written, to the digit).
    assert_eq!(written.crud.len(), results.crud.len());
    assert_eq!(
        written.crud.iter().map(|c| c.ops).collect::<Vec<_>>(),
        results.crud.iter().map(|c| c.ops).collect::<Vec<_>>()
    );
    // The run's wall time to a billionth: serde_json's default float parsing may read a
    // written f64 back one unit in the last place off (one value in ten, tried here).
    let (read, measured) = (written.run.wall_seconds.unwrap(), results.run.wall_seconds.unwrap());
    assert!((read - measured).abs() <= 1e-9 * measured, "{read} read back, {measured} measured");
    assert_eq!(RunInfo { wall_seconds: Some(measured), ..written.run.clone() }, results.run);
    let page = bookstore_dbbench::report::render(&written).unwrap();
    for expected in [
        "CRUD microbenchmark",
        "copy binary",
        "Batch job",
        "os thread pool",
        "quick",
        "compared round by round at each of 6 configurations",
        "2 round(s)",
    ] {
        assert!(page.contains(expected), "{expected} not on the page");
    }
    for database in results.databases.iter().map(|d| d.database.label()) {
        let expected = format!("{database}: rows per second by strategy");
        assert!(page.contains(&expected), "{expected} not on the page");
    }
    assert!(!page.contains("http://") && !page.contains("https://"), "nothing fetched");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_keeps_what_was_measured_and_drops_the_run_database() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let server = bookstore_fixture::testing::server().await.unwrap();
    let url = server.database_url(server.maintenance_database());
    let dir = std::env::temp_dir().join(format!("dbbench-ctrl-c-{}", std::process::id()));
    let output = dir.join("run.json");
    // The threads-against-tasks section takes seconds here: Ctrl-C once its first cell is
    // written, and the run stops after the cell it is in.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbbench"))
        .args(["run", "--quick", "--sections", "tasks,bulk", "--databases", "postgres"])
        .arg("--database-url")
        .arg(&url)
        .arg("--output")
        .arg(&output)
        .arg("--report")
        .arg(dir.join("page.html"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let database = format!("dbbench_{}", child.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let read = bookstore_dbbench::results::DbBenchResults::read(&output);
        if read.is_ok_and(|r| !r.tasks.is_empty()) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no cell written");
        assert!(child.try_wait().unwrap().is_none(), "dbbench ended before a cell was written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap()).await.unwrap();
    assert!(status.success(), "{status}");
    let results = bookstore_dbbench::results::DbBenchResults::read(&output).unwrap();
    assert_eq!(results.run.status, bookstore_record::RunStatus::Interrupted);
    assert!(!results.tasks.is_empty() && results.tasks.len() < 14, "{}", results.tasks.len());
    assert!(results.bulk.is_empty());
    assert!(results.skipped.iter().any(|s| s == "Bulk: not run, the run was interrupted"));
    assert!(dir.join("page.html").exists(), "the page of what was measured");
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_database WHERE datname = $1")
        .bind(&database)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0, "{database} left on the server");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_page_of_a_real_run_reads_at_1280_px() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let kept = root.join("summary/results/dbbench-2026-12-01T16-20-01Z.json");
    let results = bookstore_dbbench::results::DbBenchResults::read(&kept).unwrap();
    let page = bookstore_dbbench::report::render(&results).unwrap();
    if !bookstore_report::page::check_fits(&page, 1280).unwrap_or_else(|e| panic!("{e}")) {
        eprintln!("skipped: no Chromium (scripts/test.sh said so)");
    }
}
