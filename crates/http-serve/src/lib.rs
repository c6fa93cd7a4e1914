//! `bookstore-http-serve`: accepting and serving HTTP/1.1 connections with hyper, for the
//! stacks built on tokio + hyper (axum's router and the bare hyper router).
//!
//! Written once so both get the same connection handling, which `axum::serve` does not let
//! one configure:
//! - **client timeout** (`--client-timeout-ms`): a connection must deliver each request's
//!   headers within it, counted from when the server starts waiting for them — so it bounds
//!   both a client that sends headers byte by byte (slowloris) and a connection idling
//!   between requests (hyper's header-read timer starts whenever a connection waits for a
//!   request head). The actix stacks set `client_request_timeout` and `keep_alive` to the
//!   same value;
//! - `TCP_NODELAY` on every connection; a failed `accept` (out of descriptors) backs off
//!   instead of spinning;
//! - **graceful shutdown**: stop accepting, let in-flight requests finish and close idle
//!   connections, and after the grace period close whatever is left.

use std::time::Duration;

use bookstore_app::Shutdown;
use hyper::body::Incoming;
use hyper::service::HttpService;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;

/// How long in-flight requests may take to finish after shutdown is asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `listener` with a fresh `make_service()` per connection until `shutdown`.
pub async fn serve<S, F>(
    listener: tokio::net::TcpListener,
    make_service: F,
    client_timeout: Duration,
    shutdown: Shutdown,
) where
    F: Fn() -> S,
    S: HttpService<Incoming> + Send + 'static,
    S::Future: Send + 'static,
    S::ResBody: Send + 'static,
    <S::ResBody as http_body::Body>::Data: Send,
    <S::ResBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(client_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = shutdown;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Responses go out in one write: Nagle could only delay them.
        let _ = stream.set_nodelay(true);
        let connection =
            graceful.watch(http.serve_connection(TokioIo::new(stream), make_service()));
        tokio::spawn(async move {
            // A client that goes away or times out is not a server error.
            let _ = connection.await;
        });
    }
    drop(listener); // new connections are refused from here on
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; closing them");
    }
}
