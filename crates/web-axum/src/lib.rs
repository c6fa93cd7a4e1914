//! `bookstore-web-axum`: the axum side of the axum stacks, generic over store and
//! serializer, so `axum-serde-sqlx` and `axum-serde-diesel` differ only in the store they
//! name.
//!
//! What is axum's here: routing (`Router`, static routes winning over `{id}`), the 404/405
//! fallbacks (answered with the contract's JSON errors instead of axum's empty or plain
//! text bodies; axum adds the `Allow` header), reading the checkout body up to 16 KiB, and
//! serving on tokio's multi-thread runtime with `workers` threads (plus at most
//! `blocking_threads` for `spawn_blocking`, used by blocking stores) — or, `--layout
//! per-core`, on one current-thread runtime per worker (`bookstore_http_serve::serve_per_core`). Connections are
//! accepted by `bookstore-http-serve` rather than `axum::serve`, which cannot set a
//! header-read or idle timeout. Everything else is [`bookstore_app::App`].

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use bookstore_app::stacks::Layout;
use bookstore_app::{App, CONTENT_TYPE_JSON, Identity, Reply, ServerConfig, Shutdown, routes};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;
use bookstore_domain::{BODY_LIMIT_BYTES, Error, require_json_content_type};

type AppState<S, C> = State<Arc<App<S, C>>>;

/// The framework's tag in small-json and in the stack registry (a stack built on this crate
/// that the registry lists under another framework does not compile).
pub const FRAMEWORK: &str = "axum";

/// Builds the runtime, opens the store, and serves `listener` until `shutdown` completes;
/// then finishes in-flight requests and closes the pool.
pub fn serve<S: Store, C: Codec>(
    identity: Identity,
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    if config.layout == Layout::PerCore {
        let make_service = |app: Arc<App<S, C>>| {
            let router = router(app);
            move || hyper_util::service::TowerToHyperService::new(router.clone())
        };
        return bookstore_http_serve::serve_per_core(
            identity,
            listener,
            &config,
            shutdown,
            make_service,
        );
    }
    config.tokio_runtime(&identity)?.block_on(async move {
        let store = S::open(&config.pool).await?;
        let app = Arc::new(App::<S, C>::new(store.clone(), identity));
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tracing::info!(service = identity.service, "ready");
        let router = router(app);
        let make_service = || hyper_util::service::TowerToHyperService::new(router.clone());
        bookstore_http_serve::serve(listener, make_service, config.client_timeout, shutdown).await;
        store.close().await;
        Ok(())
    })
}

/// The routes of SPEC §3 over `app`.
pub fn router<S: Store, C: Codec>(app: Arc<App<S, C>>) -> Router {
    let book_by_id = format!("{}{{id}}", routes::BOOK_BY_ID_PREFIX);
    Router::new()
        .route(routes::HEALTH, get(health::<S, C>))
        .route(routes::HEALTH_DB, get(health_db::<S, C>))
        .route(routes::SMALL_JSON, get(small_json::<S, C>))
        .route(routes::LARGE_JSON, get(large_json::<S, C>))
        .route(routes::AGGREGATE_REPORT, get(aggregate_report::<S, C>))
        .route(routes::BOOK_SEARCH, get(book_search::<S, C>))
        .route(routes::BOOKS, get(book_list::<S, C>))
        .route(&book_by_id, get(book_get::<S, C>))
        .route(routes::CHECKOUTS, post(checkout_create::<S, C>))
        .fallback(route_not_found::<S, C>)
        .method_not_allowed_fallback(method_not_allowed::<S, C>)
        .with_state(app)
}

async fn health<S: Store, C: Codec>(State(app): AppState<S, C>) -> Response {
    response(app.health())
}

async fn health_db<S: Store, C: Codec>(State(app): AppState<S, C>) -> Response {
    response(app.health_db().await)
}

async fn small_json<S: Store, C: Codec>(State(app): AppState<S, C>) -> Response {
    response(app.small_json())
}

async fn large_json<S: Store, C: Codec>(State(app): AppState<S, C>, uri: Uri) -> Response {
    response(app.large_json(uri.query()).await)
}

async fn aggregate_report<S: Store, C: Codec>(State(app): AppState<S, C>, uri: Uri) -> Response {
    response(app.aggregate_report(uri.query()).await)
}

async fn book_search<S: Store, C: Codec>(State(app): AppState<S, C>, uri: Uri) -> Response {
    response(app.book_search(uri.query()).await)
}

async fn book_list<S: Store, C: Codec>(State(app): AppState<S, C>, uri: Uri) -> Response {
    response(app.book_list(uri.query()).await)
}

async fn book_get<S: Store, C: Codec>(State(app): AppState<S, C>, uri: Uri) -> Response {
    // The raw segment: the router matched it, App decodes and checks it (axum's `Path`
    // would decode it its own way and answer errors in plain text).
    let raw_id = uri.path().strip_prefix(routes::BOOK_BY_ID_PREFIX).unwrap_or_default();
    response(app.book_get(raw_id).await)
}

async fn checkout_create<S: Store, C: Codec>(
    State(app): AppState<S, C>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(error) =
        require_json_content_type(parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes))
    {
        return response(app.error(error));
    }
    match axum::body::to_bytes(body, BODY_LIMIT_BYTES).await {
        Ok(bytes) => response(app.checkout_create(&bytes).await),
        Err(error) => response(app.error(body_error(error))),
    }
}

/// Over the limit is 413; a body that could not be read at all (client gone, bad chunking)
/// is the client's fault too.
fn body_error(error: axum::Error) -> Error {
    let inner = error.into_inner();
    if inner.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
        Error::PayloadTooLarge { limit_bytes: BODY_LIMIT_BYTES }
    } else {
        Error::BadRequest(format!("could not read the request body: {inner}"))
    }
}

async fn route_not_found<S: Store, C: Codec>(
    State(app): AppState<S, C>,
    method: Method,
    uri: Uri,
) -> Response {
    response(
        app.error(Error::RouteNotFound { method: method.to_string(), path: uri.path().to_owned() }),
    )
}

async fn method_not_allowed<S: Store, C: Codec>(
    State(app): AppState<S, C>,
    method: Method,
    uri: Uri,
) -> Response {
    response(
        app.error(Error::MethodNotAllowed {
            method: method.to_string(),
            path: uri.path().to_owned(),
        }),
    )
}

fn response(reply: Reply) -> Response {
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_JSON));
    response
}
