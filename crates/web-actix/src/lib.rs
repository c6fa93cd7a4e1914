//! `bookstore-web-actix`: the actix-web side of the actix stacks, generic over store and
//! serializer, so `actix-serde-diesel` and `actix-simd-sqlx` differ only in what they name.
//!
//! What is actix's here: `HttpServer` with `workers` worker threads, each running its own
//! single-threaded runtime and its own copy of the routes; resource routing (static
//! routes registered before `{id}`); the 404/405 answers (actix's are empty bodies,
//! replaced by the contract's JSON errors, with an `Allow` header); reading the checkout
//! body up to 16 KiB from the raw payload (actix's `Json`/`Bytes` extractors would apply
//! their own limits and answer their own text errors). Everything else is
//! [`bookstore_app::App`].
//!
//! Blocking work ([`WebBlock`]) runs, as actix does it by default, on each worker's own
//! blocking pool via `actix_web::web::block`: `ceil(blocking_threads / workers)` threads per
//! worker. `--blocking-pool shared` gives every worker one pool of `--blocking-threads`
//! threads instead (the actix system runtime's, as tokio's multi-thread runtime gives axum);
//! measured against each other, neither was distinguishably better (docs/findings.md, "Where the CPU goes").
//!
//! An async store's connections (sqlx) are opened on the runtime that starts the server and
//! shared by all workers: their sockets are driven by that runtime's reactor and wake the
//! worker that awaits them — the ordinary way to share one pool across actix workers. In the
//! per-core layout (`--layout per-core`) each worker opens its own share of the pool as it
//! starts (`App::data_factory`), so its connections are driven by the worker itself.

use std::sync::Arc;

use actix_web::http::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, HttpServer, Route, guard, web};
use bookstore_app::stacks::Layout;
use bookstore_app::{
    App, BlockingPool, CONTENT_TYPE_JSON, Identity, Reply, ServerConfig, Shutdown, routes,
};
use bookstore_codec::Codec;
use bookstore_domain::offload::Offload;
use bookstore_domain::store::Store;
use bookstore_domain::{BODY_LIMIT_BYTES, Error, require_json_content_type};

/// The actix stacks' blocking pool: the worker's own through `actix_web::web::block`, or
/// the one shared by the workers (`--blocking-pool shared`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WebBlock;

thread_local! {
    /// Set on each worker thread when it builds its routes: the shared pool's runtime.
    static SHARED_POOL: std::cell::RefCell<Option<tokio::runtime::Handle>> =
        const { std::cell::RefCell::new(None) };
}

impl Offload for WebBlock {
    const NAME: &'static str = "actix_web::web::block";

    async fn run<F, T>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let failed =
            |e: &dyn std::fmt::Display| Error::Internal(format!("blocking task failed: {e}"));
        match SHARED_POOL.with_borrow(Clone::clone) {
            Some(shared) => shared.spawn_blocking(work).await.map_err(|e| failed(&e)),
            None => web::block(work).await.map_err(|e| failed(&e)),
        }
    }
}

/// How long in-flight requests may take to finish after shutdown is asked for (as
/// `bookstore_http_serve::SHUTDOWN_GRACE` for the other stacks).
const SHUTDOWN_GRACE_SECONDS: u64 = 10;

/// The framework's tag in small-json and in the stack registry (a stack built on this crate
/// that the registry lists under another framework does not compile).
pub const FRAMEWORK: &str = "actix-web";

/// Starts an actix system, opens the store, and serves `listener` until `shutdown`
/// completes; then finishes in-flight requests and closes the pool.
pub fn serve<S: Store, C: Codec>(
    identity: Identity,
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let blocking = config.blocking_threads;
    let mut system_runtime = tokio::runtime::Builder::new_current_thread();
    system_runtime.enable_all();
    if let Some(threads) = blocking {
        // The shared pool (`--blocking-pool shared`), and where the store opens its
        // connections.
        system_runtime.max_blocking_threads(threads);
    }
    let system_runtime = system_runtime.build()?;
    if config.layout == Layout::PerCore && config.blocking_pool == Some(BlockingPool::Shared) {
        anyhow::bail!(
            "--blocking-pool shared with --layout per-core: the per-core layout gives each worker its own blocking threads"
        );
    }
    actix_web::rt::System::with_tokio_rt(move || system_runtime).block_on(async move {
        let workers = config.workers;
        let shared = blocking.is_some() && config.blocking_pool == Some(BlockingPool::Shared);
        let shared_pool = shared.then(tokio::runtime::Handle::current);
        // The framework's layout: one store, opened here and shared by the workers. The
        // per-core layout: each worker's own share, opened on the worker as it starts
        // (`App::data_factory` runs there), so its sockets are driven by that worker.
        let (shared_store, per_worker) = match config.layout {
            Layout::Framework => (Some(S::open(&config.pool).await?), None),
            Layout::PerCore => (None, Some(PerWorker::new(config.per_core()?))),
        };
        let app = shared_store
            .as_ref()
            .map(|store| web::Data::from(Arc::new(App::<S, C>::new(store.clone(), identity))));
        let opening = per_worker.clone();
        let mut server = HttpServer::new(move || {
            // Runs on each worker thread, once, before it serves.
            SHARED_POOL.set(shared_pool.clone());
            let routes = actix_web::App::new().configure(configure::<S, C>);
            match (&app, &opening) {
                (Some(app), _) => routes.app_data(app.clone()),
                (None, Some(opening)) => {
                    let opening = opening.clone();
                    routes.data_factory(move || opening.clone().open::<S, C>(identity))
                }
                (None, None) => unreachable!("a store or a share for each worker"),
            }
        })
        .workers(workers)
        // As the other stacks: responses go out in one write, Nagle would only delay them.
        .tcp_nodelay(true)
        // As the other stacks: one deadline for a request's headers and for idling between
        // requests (hyper's header-read timeout covers both).
        .client_request_timeout(config.client_timeout)
        .keep_alive(actix_web::http::KeepAlive::Timeout(config.client_timeout))
        // Signals are the caller's: `shutdown` completes on SIGINT/SIGTERM.
        .disable_signals()
        .shutdown_timeout(SHUTDOWN_GRACE_SECONDS);
        if let Some(threads) = blocking
            && !shared
        {
            server = server.worker_max_blocking_threads(threads.div_ceil(workers).max(1));
        }
        let server = server.listen(listener)?.run();
        let handle = server.handle();
        actix_web::rt::spawn(async move {
            shutdown.await;
            handle.stop(true).await;
        });
        tracing::info!(service = identity.service, layout = config.layout.name(), "ready");
        let served = server.await;
        if let Some(error) = per_worker.as_ref().and_then(PerWorker::failure) {
            return Err(error);
        }
        served?;
        if let Some(store) = shared_store {
            store.close().await;
        }
        Ok(())
    })
}

/// The per-core layout's pools, handed out one to each worker as it starts, and the first
/// failure to open one (actix only logs a failed factory; the server then says which).
#[derive(Clone)]
struct PerWorker {
    shares: Arc<Vec<bookstore_domain::store::PoolSettings>>,
    next: Arc<std::sync::atomic::AtomicUsize>,
    failed: Arc<std::sync::Mutex<Option<String>>>,
}

impl PerWorker {
    fn new(shares: Vec<(bookstore_domain::store::PoolSettings, Option<usize>)>) -> Self {
        Self {
            shares: Arc::new(shares.into_iter().map(|(pool, _)| pool).collect()),
            next: Arc::default(),
            failed: Arc::default(),
        }
    }

    /// The next worker's store and App, opened on that worker.
    async fn open<S: Store, C: Codec>(self, identity: Identity) -> Result<App<S, C>, String> {
        let index = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pool = &self.shares[index % self.shares.len()];
        match S::open(pool).await {
            Ok(store) => Ok(App::new(store, identity)),
            Err(error) => {
                let error = error.to_string();
                self.failed.lock().map(|mut f| f.get_or_insert(error.clone()).clone()).ok();
                Err(error)
            }
        }
    }

    fn failure(&self) -> Option<anyhow::Error> {
        self.failed.lock().ok()?.clone().map(anyhow::Error::msg)
    }
}

/// The routes of SPEC §3.
pub fn configure<S: Store, C: Codec>(config: &mut web::ServiceConfig) {
    let get = |route: Route| route.guard(guard::Any(guard::Get()).or(guard::Head()));
    let book_by_id = format!("{}{{id}}", routes::BOOK_BY_ID_PREFIX);
    config
        .service(
            resource::<S, C>(routes::HEALTH, "GET, HEAD")
                .route(get(web::route()).to(health::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::HEALTH_DB, "GET, HEAD")
                .route(get(web::route()).to(health_db::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::SMALL_JSON, "GET, HEAD")
                .route(get(web::route()).to(small_json::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::LARGE_JSON, "GET, HEAD")
                .route(get(web::route()).to(large_json::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::AGGREGATE_REPORT, "GET, HEAD")
                .route(get(web::route()).to(aggregate_report::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::BOOK_SEARCH, "GET, HEAD")
                .route(get(web::route()).to(book_search::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::BOOKS, "GET, HEAD")
                .route(get(web::route()).to(book_list::<S, C>)),
        )
        .service(
            resource::<S, C>(&book_by_id, "GET, HEAD")
                .route(get(web::route()).to(book_get::<S, C>)),
        )
        .service(
            resource::<S, C>(routes::CHECKOUTS, "POST")
                .route(web::post().to(checkout_create::<S, C>)),
        )
        .default_service(web::to(route_not_found::<S, C>));
}

/// A resource whose other methods answer 405 with `allow`.
fn resource<S: Store, C: Codec>(path: &str, allow: &'static str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(
        move |app: web::Data<App<S, C>>, request: HttpRequest| async move {
            let error = Error::MethodNotAllowed {
                method: request.method().to_string(),
                path: request.path().to_owned(),
            };
            let mut response = response(app.error(error));
            response.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
            response
        },
    ))
}

type AppData<S, C> = web::Data<App<S, C>>;

async fn health<S: Store, C: Codec>(app: AppData<S, C>) -> HttpResponse {
    response(app.health())
}

async fn health_db<S: Store, C: Codec>(app: AppData<S, C>) -> HttpResponse {
    response(app.health_db().await)
}

async fn small_json<S: Store, C: Codec>(app: AppData<S, C>) -> HttpResponse {
    response(app.small_json())
}

async fn large_json<S: Store, C: Codec>(app: AppData<S, C>, request: HttpRequest) -> HttpResponse {
    response(app.large_json(Some(request.query_string())).await)
}

async fn aggregate_report<S: Store, C: Codec>(
    app: AppData<S, C>,
    request: HttpRequest,
) -> HttpResponse {
    response(app.aggregate_report(Some(request.query_string())).await)
}

async fn book_search<S: Store, C: Codec>(app: AppData<S, C>, request: HttpRequest) -> HttpResponse {
    response(app.book_search(Some(request.query_string())).await)
}

async fn book_list<S: Store, C: Codec>(app: AppData<S, C>, request: HttpRequest) -> HttpResponse {
    response(app.book_list(Some(request.query_string())).await)
}

async fn book_get<S: Store, C: Codec>(app: AppData<S, C>, request: HttpRequest) -> HttpResponse {
    // The raw segment from the URI: actix's match info is partly decoded its own way.
    let raw_id = request.uri().path().strip_prefix(routes::BOOK_BY_ID_PREFIX).unwrap_or_default();
    response(app.book_get(raw_id).await)
}

async fn checkout_create<S: Store, C: Codec>(
    app: AppData<S, C>,
    request: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let content_type = request.headers().get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    if let Err(error) = require_json_content_type(content_type) {
        return response(app.error(error));
    }
    match payload.to_bytes_limited(BODY_LIMIT_BYTES).await {
        Ok(Ok(body)) => response(app.checkout_create(&body).await),
        Ok(Err(error)) => response(
            app.error(Error::BadRequest(format!("could not read the request body: {error}"))),
        ),
        Err(_) => response(app.error(Error::PayloadTooLarge { limit_bytes: BODY_LIMIT_BYTES })),
    }
}

async fn route_not_found<S: Store, C: Codec>(
    app: AppData<S, C>,
    request: HttpRequest,
) -> HttpResponse {
    let method: &Method = request.method();
    response(app.error(Error::RouteNotFound {
        method: method.to_string(),
        path: request.path().to_owned(),
    }))
}

fn response(reply: Reply) -> HttpResponse {
    HttpResponse::build(
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    )
    .insert_header((CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_JSON)))
    .body(reply.body)
}
