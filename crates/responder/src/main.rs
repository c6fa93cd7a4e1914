//! `responder`: the fastest honest HTTP/1.1 server this machine can run, as a yardstick.
//!
//! ```text
//! cargo run --release -p bookstore-responder -- --bind 127.0.0.1:0 --threads 2
//! ```
//!
//! Every request gets `200` with `Content-Type: application/json` and a `Content-Length`,
//! and canned bytes: for `/api/books/bench/small-json` a small-json document of the
//! contract's shape (so the suite can measure it beside the stacks' `smallJson`), for any
//! other method or path `{"status":"UP"}`. One current-thread tokio runtime
//! per thread, each accepting on its own `SO_REUSEPORT` listener on the same address (the
//! layout of TechEmpower's fastest axum entry), so the kernel spreads connections and no
//! task or wake-up crosses threads. The load generator's calibration drives it to test the
//! client rather than a server, and the suite uses it as the HTTP ceiling: what a stack's
//! `/health` could reach on this machine at best.
//!
//! Prints `LISTENING <address>` on stdout once every listener accepts; stops on SIGINT or
//! SIGTERM.

use std::convert::Infallible;
use std::net::SocketAddr;

use anyhow::Context as _;
use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use socket2::{Domain, Protocol, Socket, Type};

/// The minimal JSON responder used as the HTTP ceiling.
#[derive(Parser)]
#[command(name = "responder", version)]
struct Args {
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Threads, each with its own runtime and listener [default: number of CPUs].
    #[arg(long)]
    threads: Option<usize>,
}

const BODY: &[u8] = br#"{"status":"UP"}"#;
/// The small-json document of SPEC §3, canned: the stacks build theirs per request (with
/// the time); the ceiling may not.
const SMALL_JSON: &[u8] = br#"{"service":"responder","version":1,"now":"2026-01-01T00:00:00.000000Z","tags":["responder","canned","none","benchmark"]}"#;
const SMALL_JSON_PATH: &str = "/api/books/bench/small-json";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let threads =
        args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // The first listener fixes the port (port 0 picks one); the others join it.
    let first = listener(args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..threads {
        listeners.push(listener(addr).with_context(|| format!("cannot add a listener on {addr}"))?);
    }
    let handles: Vec<_> =
        listeners.into_iter().map(|l| std::thread::spawn(move || serve(l))).collect();
    println!("LISTENING {addr}");
    wait_for_signal()?;
    drop(handles); // the serving threads end with the process
    Ok(())
}

fn listener(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_port(true)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

fn serve(listener: std::net::TcpListener) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let http = hyper::server::conn::http1::Builder::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let connection = http.serve_connection(TokioIo::new(stream), service_fn(respond));
            // A current-thread runtime: the task stays on this thread.
            tokio::spawn(connection);
        }
    })
}

async fn respond(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = if request.uri().path() == SMALL_JSON_PATH { SMALL_JSON } else { BODY };
    let mut response = Response::new(Full::new(Bytes::from_static(body)));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

fn wait_for_signal() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        Ok(())
    })
}
