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
//!   connections, and after the grace period close whatever is left;
//! - **the per-core layout** ([`serve_per_core`], `--layout per-core`, SPEC §1 "Realism"):
//!   one thread per worker, each with a current-thread runtime, a listener of its own and a
//!   store of pool_max ÷ workers connections opened on it.

use std::time::Duration;

use std::sync::Arc;

use bookstore_app::{App, Identity, ServerConfig, Shutdown};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;
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

/// Serves `listener` in the per-core layout: `config.workers` threads, each with a
/// current-thread runtime (its own blocking pool of ceil(blocking threads ÷ workers) for a
/// blocking store), its own listener — a sibling of `listener` on the same address when the
/// kernel allows (`SO_REUSEPORT`, set by `bookstore_app::cli::listen` in this layout), else a
/// handle on the same one — and its own store of its share of the pool
/// ([`ServerConfig::per_core`]), opened on that thread so that its connections are driven
/// there. `make_service(app)` gives a worker's per-connection service over its own
/// [`App`]. Serving starts once every worker's pool is open (a failed one stops the rest,
/// its error returned); `shutdown` stops every worker as [`serve`] stops one.
pub fn serve_per_core<S, C, M, F, Svc>(
    identity: Identity,
    listener: std::net::TcpListener,
    config: &ServerConfig,
    shutdown: Shutdown,
    make_service: M,
) -> anyhow::Result<()>
where
    S: Store,
    C: Codec,
    M: Fn(Arc<App<S, C>>) -> F + Sync,
    F: Fn() -> Svc,
    Svc: HttpService<Incoming> + Send + 'static,
    Svc::Future: Send + 'static,
    Svc::ResBody: Send + 'static,
    <Svc::ResBody as http_body::Body>::Data: Send,
    <Svc::ResBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let shares = config.per_core()?;
    let listeners = sibling_listeners(listener, shares.len())?;
    // None: opening; Some(true): serve; Some(false): stop.
    let (state, _) = tokio::sync::watch::channel(None::<bool>);
    let (opened_tx, opened) = std::sync::mpsc::channel::<anyhow::Result<()>>();
    std::thread::scope(|scope| {
        let workers: Vec<_> = listeners
            .into_iter()
            .zip(shares)
            .enumerate()
            .map(|(index, (listener, (pool, blocking)))| {
                let (mut state, opened) = (state.subscribe(), opened_tx.clone());
                let make_service = &make_service;
                let client_timeout = config.client_timeout;
                std::thread::Builder::new()
                    .name(format!("{}-{index}", identity.service))
                    .spawn_scoped(scope, move || -> anyhow::Result<()> {
                        let mut runtime = tokio::runtime::Builder::new_current_thread();
                        runtime.enable_all();
                        if let Some(threads) = blocking {
                            runtime.max_blocking_threads(threads);
                        }
                        let runtime = match runtime.build() {
                            Ok(runtime) => runtime,
                            Err(error) => {
                                let _ = opened.send(Err(error.into()));
                                return Ok(());
                            }
                        };
                        runtime.block_on(async move {
                            let store = match S::open(&pool).await {
                                Ok(store) => store,
                                Err(error) => {
                                    let _ = opened.send(Err(error.into()));
                                    return Ok(());
                                }
                            };
                            // Said, and let go: the coordinator waits for every worker's word.
                            let _ = opened.send(Ok(()));
                            drop(opened);
                            let go =
                                state.wait_for(Option::is_some).await.map(|s| *s == Some(true));
                            if go.unwrap_or(false) {
                                listener.set_nonblocking(true)?;
                                let listener = tokio::net::TcpListener::from_std(listener)?;
                                let app = Arc::new(App::<S, C>::new(store.clone(), identity));
                                let stop: Shutdown = Box::pin(async move {
                                    let _ = state.wait_for(|s| *s == Some(false)).await;
                                });
                                serve(listener, make_service(app), client_timeout, stop).await;
                            }
                            store.close().await;
                            Ok(())
                        })
                    })
            })
            .collect::<Result<_, _>>()?;
        drop(opened_tx);
        // One word from each worker: its pool open, or why not (a worker that ended without
        // a word ends the wait once every other has spoken).
        let mut failed = None;
        for _ in 0..workers.len() {
            match opened.recv() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    failed.get_or_insert(error);
                }
                Err(_) => {
                    failed.get_or_insert(anyhow::anyhow!("a worker ended before its pool opened"));
                    break;
                }
            }
        }
        if failed.is_none() {
            tracing::info!(service = identity.service, workers = workers.len(), "ready (per-core)");
            let _ = state.send(Some(true));
            // The signal's future needs a runtime of its own on this thread.
            tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(shutdown);
        }
        let _ = state.send(Some(false));
        let results: Vec<anyhow::Result<()>> = workers
            .into_iter()
            .map(|worker: std::thread::ScopedJoinHandle<'_, anyhow::Result<()>>| {
                worker.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a worker thread panicked")))
            })
            .collect();
        match failed {
            Some(error) => Err(error),
            None => results.into_iter().collect(),
        }
    })
}

/// `count` listeners on `listener`'s address: `listener` and siblings bound with
/// `SO_REUSEPORT` beside it (each gets its own share of the connections from the kernel),
/// or where the first was not bound so (a test's plain listener), handles on it.
fn sibling_listeners(
    listener: std::net::TcpListener,
    count: usize,
) -> std::io::Result<Vec<std::net::TcpListener>> {
    use socket2::{Domain, Protocol, SockRef, Socket, Type};
    let addr = listener.local_addr()?;
    let reuse_port = SockRef::from(&listener).reuse_port().unwrap_or(false);
    let mut listeners = Vec::with_capacity(count);
    for _ in 1..count {
        let sibling = if reuse_port {
            let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
            socket.set_reuse_address(true)?;
            socket.set_reuse_port(true)?;
            socket.bind(&addr.into())?;
            socket.listen(bookstore_app::LISTEN_BACKLOG)?;
            socket.into()
        } else {
            listener.try_clone()?
        };
        listeners.push(sibling);
    }
    listeners.insert(0, listener);
    Ok(listeners)
}
