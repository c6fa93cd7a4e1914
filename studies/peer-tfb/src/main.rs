//! `peer-tfb`: the peer of the layout study (docs/findings.md, "The layout study") —
//! TechEmpower's per-core axum entry (`axum-pg` in `frameworks/Rust/axum`, archived 2026-03,
//! BSD-3-licensed), written again from its description rather than vendored, serving this
//! contract's `GET /api/books/{id}` so that it can be asked the workspace's `bookById`:
//!
//! - one thread per worker, each with a current-thread runtime and its own `SO_REUSEPORT`
//!   listener (backlog 4096, `TCP_NODELAY`), as TechEmpower's `server.rs` sets them;
//! - **one tokio-postgres connection per thread, shared by every request on it**, the
//!   statement prepared once: concurrent requests' queries go out together on that one
//!   connection (tokio-postgres pipelines them). That is the part the contract forbids
//!   (docs/contract.md §1, Realism: no pipelining across requests) and the one the study
//!   separates from the layout: against the workspace's `@per-core` stacks, which have the
//!   same layout with a pool per core, it is the pipelining alone.
//!
//! `/health` and `/health/db` answer as the contract's so the harness can start it; any
//! other route is 404. Started like a stack: `--bind`, `--workers`, `DATABASE_URL`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bookstore_domain::Error;
use bookstore_domain::model::{BookDetail, ErrorBody};
use clap::Parser;
use tokio_postgres::{Client, NoTls, Statement};

/// How it is started.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "TechEmpower's per-core axum entry, for this contract's book lookup (a study's peer)"
)]
struct Args {
    /// Where to listen.
    #[arg(long, env = "BIND", default_value = "127.0.0.1:8090")]
    bind: std::net::SocketAddr,
    /// Threads, each with its runtime, listener and connection [default: the CPUs].
    #[arg(long, env = "WORKERS")]
    workers: Option<usize>,
    /// The database.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: String,
}

/// A thread's connection and its prepared statement.
struct Core {
    client: Client,
    book: Statement,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match serve(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("peer-tfb: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn serve(args: &Args) -> anyhow::Result<()> {
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let threads: Vec<_> = (0..workers.max(1))
        .map(|index| {
            let listener = listen(args.bind)?;
            let url = args.database_url.clone();
            Ok(std::thread::Builder::new().name(format!("peer-tfb-{index}")).spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                runtime.block_on(core(listener, &url))
            })?)
        })
        .collect::<anyhow::Result<_>>()?;
    for thread in threads {
        thread.join().map_err(|_| anyhow::anyhow!("a thread panicked"))??;
    }
    Ok(())
}

/// A listener on `addr` beside the other threads' (`SO_REUSEPORT`).
fn listen(addr: std::net::SocketAddr) -> anyhow::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_tcp_nodelay(true)?; // inherited by the accepted connections
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// One thread: its connection, then its share of the connections to serve.
async fn core(listener: std::net::TcpListener, url: &str) -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    let book = client.prepare(bookstore_domain::sql::BOOK_BY_ID).await?;
    let core = Arc::new(Core { client, book });
    let app = axum::Router::new()
        .route(
            "/health",
            get(|| async { json(StatusCode::OK, &serde_json::json!({"status": "UP"})) }),
        )
        .route("/health/db", get(health_db))
        .route("/api/books/{id}", get(book_by_id))
        .with_state(core);
    axum::serve(tokio::net::TcpListener::from_std(listener)?, app).await?;
    Ok(())
}

async fn health_db(State(core): State<Arc<Core>>) -> Response {
    match core.client.simple_query("SELECT 1").await {
        Ok(_) => json(StatusCode::OK, &serde_json::json!({"status": "UP"})),
        Err(e) => error(Error::DbUnavailable(e.to_string())),
    }
}

async fn book_by_id(State(core): State<Arc<Core>>, Path(raw): Path<String>) -> Response {
    let Ok(id) = bookstore_domain::params::book_id(&raw) else {
        return error(bookstore_domain::params::book_id(&raw).unwrap_err());
    };
    match core.client.query_opt(&core.book, &[&id]).await {
        Ok(Some(row)) => match bookstore_store_tokio_postgres::book_detail(&row) {
            Ok(detail) => json(StatusCode::OK, &BookDetail::from(detail)),
            Err(e) => error(Error::Internal(e.to_string())),
        },
        Ok(None) => error(Error::BookNotFound(id)),
        Err(e) => error(Error::DbUnavailable(e.to_string())),
    }
}

fn error(error: Error) -> Response {
    let message = error.public_message();
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json(status, &ErrorBody { error: error.code(), message: &message })
}

fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
