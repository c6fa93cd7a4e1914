//! `bookstore-web-hyper`: hyper 1 without a framework — an accept loop, one HTTP/1.1
//! connection task per client, and a small router ([`Route`]) written for the contract's
//! nine paths. Generic over store and serializer like the other adapters.
//!
//! What is hyper's (or ours instead of a framework's) here: serving on tokio's
//! multi-thread runtime with `workers` threads (or one current-thread runtime per worker,
//! `--layout per-core`) (connections accepted by
//! `bookstore-http-serve`, as for axum); matching paths and methods (405 with an `Allow`
//! header, 404 otherwise, both as the contract's JSON errors); reading the checkout body up
//! to 16 KiB. Everything else is [`bookstore_app::App`].

use std::convert::Infallible;
use std::sync::Arc;

use bookstore_app::stacks::Layout;
use bookstore_app::{App, CONTENT_TYPE_JSON, Identity, Reply, ServerConfig, Shutdown, routes};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;
use bookstore_domain::{BODY_LIMIT_BYTES, Error, require_json_content_type};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};

/// The framework's tag in small-json and in the stack registry (a stack built on this crate
/// that the registry lists under another framework does not compile).
pub const FRAMEWORK: &str = "hyper";

/// Builds the runtime, opens the store, and serves `listener` until `shutdown` completes;
/// then finishes in-flight requests and closes the pool.
pub fn serve<S: Store, C: Codec>(
    identity: Identity,
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    if config.layout == Layout::PerCore {
        return bookstore_http_serve::serve_per_core(
            identity,
            listener,
            &config,
            shutdown,
            |app: Arc<App<S, C>>| move || service(Arc::clone(&app)),
        );
    }
    config.tokio_runtime(&identity)?.block_on(async move {
        let store = S::open(&config.pool).await?;
        let app = Arc::new(App::<S, C>::new(store.clone(), identity));
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tracing::info!(service = identity.service, "ready");
        let make_service = || service(Arc::clone(&app));
        bookstore_http_serve::serve(listener, make_service, config.client_timeout, shutdown).await;
        store.close().await;
        Ok(())
    })
}

/// One connection's service over `app`.
fn service<S: Store, C: Codec>(
    app: Arc<App<S, C>>,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send,
> + Send
+ 'static {
    service_fn(move |request| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(handle(&app, request).await) }
    })
}

/// The contract's routes, matched on the raw path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/health`.
    Health,
    /// `/health/db`.
    HealthDb,
    /// `/api/books/bench/small-json`.
    SmallJson,
    /// `/api/books/bench/large-json`.
    LargeJson,
    /// `/api/books/bench/aggregate-report`.
    AggregateReport,
    /// `/api/books/search`.
    BookSearch,
    /// `/api/books`.
    Books,
    /// `/api/books/{id}`, with the raw segment.
    Book(&'a str),
    /// `/api/checkouts`.
    Checkouts,
}

impl<'a> Route<'a> {
    /// The route of `path`, if any. `{id}` is one non-empty segment.
    pub fn of(path: &'a str) -> Option<Self> {
        Some(match path {
            routes::HEALTH => Route::Health,
            routes::HEALTH_DB => Route::HealthDb,
            routes::SMALL_JSON => Route::SmallJson,
            routes::LARGE_JSON => Route::LargeJson,
            routes::AGGREGATE_REPORT => Route::AggregateReport,
            routes::BOOK_SEARCH => Route::BookSearch,
            routes::BOOKS => Route::Books,
            routes::CHECKOUTS => Route::Checkouts,
            _ => match path.strip_prefix(routes::BOOK_BY_ID_PREFIX) {
                Some(id) if !id.is_empty() && !id.contains('/') => Route::Book(id),
                _ => return None,
            },
        })
    }

    /// The `Allow` header value of the route.
    pub fn allow(self) -> &'static str {
        match self {
            Route::Checkouts => "POST",
            _ => "GET, HEAD",
        }
    }

    fn accepts(self, method: &Method) -> bool {
        match self {
            Route::Checkouts => method == Method::POST,
            _ => method == Method::GET || method == Method::HEAD,
        }
    }
}

async fn handle<S: Store, C: Codec>(
    app: &App<S, C>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path();
    let query = request.uri().query();
    let Some(route) = Route::of(path) else {
        let error =
            Error::RouteNotFound { method: request.method().to_string(), path: path.to_owned() };
        return response(app.error(error));
    };
    if !route.accepts(request.method()) {
        let error =
            Error::MethodNotAllowed { method: request.method().to_string(), path: path.to_owned() };
        let mut refused = response(app.error(error));
        refused.headers_mut().insert(ALLOW, HeaderValue::from_static(route.allow()));
        return refused;
    }
    let reply = match route {
        Route::Health => app.health(),
        Route::HealthDb => app.health_db().await,
        Route::SmallJson => app.small_json(),
        Route::LargeJson => app.large_json(query).await,
        Route::AggregateReport => app.aggregate_report(query).await,
        Route::BookSearch => app.book_search(query).await,
        Route::Books => app.book_list(query).await,
        Route::Book(raw_id) => app.book_get(raw_id).await,
        Route::Checkouts => return checkout_create(app, request).await,
    };
    response(reply)
}

async fn checkout_create<S: Store, C: Codec>(
    app: &App<S, C>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let content_type = request.headers().get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    if let Err(error) = require_json_content_type(content_type) {
        return response(app.error(error));
    }
    match Limited::new(request.into_body(), BODY_LIMIT_BYTES).collect().await {
        Ok(body) => response(app.checkout_create(&body.to_bytes()).await),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            response(app.error(Error::PayloadTooLarge { limit_bytes: BODY_LIMIT_BYTES }))
        }
        Err(error) => response(
            app.error(Error::BadRequest(format!("could not read the request body: {error}"))),
        ),
    }
}

fn response(reply: Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_JSON));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_paths_win_over_the_id_segment() {
        assert_eq!(Route::of("/api/books/search"), Some(Route::BookSearch));
        assert_eq!(Route::of("/api/books/bench/small-json"), Some(Route::SmallJson));
        assert_eq!(Route::of("/api/books/42"), Some(Route::Book("42")));
        assert_eq!(Route::of("/api/books/bench"), Some(Route::Book("bench")));
    }

    #[test]
    fn unknown_paths_match_nothing() {
        for path in
            ["/", "/api/books/", "/api/books/1/extra", "/health/", "/api/bookz", "/api/checkouts/1"]
        {
            assert_eq!(Route::of(path), None, "{path}");
        }
    }

    #[test]
    fn methods_and_allow_headers() {
        assert!(Route::Checkouts.accepts(&Method::POST) && !Route::Checkouts.accepts(&Method::GET));
        assert!(Route::Books.accepts(&Method::HEAD) && !Route::Books.accepts(&Method::PUT));
        assert_eq!(Route::Checkouts.allow(), "POST");
        assert_eq!(Route::Book("1").allow(), "GET, HEAD");
    }
}
