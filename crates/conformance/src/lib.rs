//! `bookstore-conformance`: one HTTP test suite for the contract, run against every stack.
//!
//! `cargo test -p bookstore-conformance` runs `tests/conformance`, where each behaviour is
//! written once and expanded per stack by the `conformance!` macro (like ripgrep's
//! `rgtest!`). This library holds what those tests share:
//!
//! - [`stacks`]: the stacks under test — every preset of the registry
//!   (`bookstore_app::for_each_stack!`) and six composed stacks
//!   ([`for_each_composed_under_test!`]), whose lines also expand the tests per stack; a
//!   sample of them in the per-core layout too ([`for_each_per_core_under_test!`]).
//! - [`TestApp`]: a stack serving on `127.0.0.1:0` in this process, on its own runtime and
//!   its own freshly cloned seeded database, stopped when dropped.
//! - [`TestResponse`]: every response the client reads is checked for the contract's
//!   `Content-Type: application/json` and a correct `Content-Length` before a test sees it.
//! - [`expected`]: expected bodies computed from the seed's formulas, not from the database.
//!
//! Set `TEST_LOG=1` to see the servers' logs (filtered by `RUST_LOG`, default `info`).

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bookstore_app::{DbCalls, Identity, ServeFn, ServerConfig};
use bookstore_domain::store::PoolSettings;
use bookstore_fixture::testing::{TestDatabase, seeded_database};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use sqlx::{Connection, PgConnection};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A stack the suite runs against.
#[derive(Debug, Clone, Copy)]
pub struct Stack {
    /// Its name, framework, port.
    pub identity: Identity,
    /// The `tags` its small-json must answer: its framework, and its serializer's and its
    /// store's names as their types give them.
    pub tags: [&'static str; 4],
    /// Whether it needs `--blocking-threads`.
    pub db_calls: DbCalls,
    /// Its entry point.
    pub serve: ServeFn,
}

impl Stack {
    /// The composed stack `info` (a triple of the registry) served by `serve`: the tags
    /// its small-json must answer are the triple's.
    pub fn composed(info: bookstore_app::stacks::StackInfo, serve: ServeFn) -> Self {
        let t = info.tags;
        Self {
            identity: info.identity,
            tags: [t.framework, t.serializer, t.access, "benchmark"],
            db_calls: info.db_calls,
            serve,
        }
    }
}

/// The stacks under test: every preset of the registry (`bookstore_app::for_each_stack!`),
/// and the composed stacks of [`for_each_composed_under_test!`].
pub mod stacks {
    use super::*;

    use bookstore_codec::Codec;
    use bookstore_domain::store::Store;

    macro_rules! under_test {
        ($(($constant:ident, $krate:ident, $name:literal, $port:literal, $framework:literal, $serializer:literal, $access:literal),)+) => {
            $(
                #[doc = concat!("`", $name, "`.")]
                pub const $constant: Stack = Stack {
                    identity: $krate::STACK.identity,
                    tags: [
                        $framework,
                        <$krate::Codec as Codec>::NAME,
                        <$krate::Store as Store>::ACCESS,
                        "benchmark",
                    ],
                    db_calls: $krate::STACK.db_calls,
                    serve: $krate::serve,
                };
            )+

            /// Every preset, in the order of SPEC §1.
            pub const ALL: &[Stack] = &[$($constant,)+];
        };
    }

    bookstore_app::for_each_stack!(under_test);

    /// The composed stack `F` + `C` + `A` as its framework's binary serves it.
    fn composed<F: bookstore_any::Framework, C: Codec, A: bookstore_any::Access>() -> Stack {
        // The tags from the types: a registry line that named others would not be found.
        let tags = bookstore_any::tags::<F, C, A>();
        let info = bookstore_app::stacks::composed_of(tags).expect("a triple of the registry");
        Stack::composed(info, bookstore_any::serve::<F, C, A>)
    }

    macro_rules! composed_under_test {
        ($(($constant:ident, $test:ident, $framework:ty, $codec:ty, $access:ty),)+) => {
            $(
                #[doc = concat!("The composed stack of `", stringify!($framework), "`, `", stringify!($codec), "`, `", stringify!($access), "`.")]
                pub static $constant: std::sync::LazyLock<Stack> =
                    std::sync::LazyLock::new(composed::<$framework, $codec, $access>);
            )+

            /// The composed stacks under test, as [`for_each_composed_under_test!`] lists them.
            pub fn composed_under_test() -> Vec<Stack> {
                vec![$(*$constant,)+]
            }
        };
    }

    crate::for_each_composed_under_test!(composed_under_test);

    #[cfg(test)]
    mod tests {
        use super::*;
        use bookstore_app::stacks::AXIS_PAIRS;

        #[test]
        fn each_preset_axis_pair_differs_in_its_stacks_own_types_where_it_claims() {
            // The registry's tags are checked against the pairs (bookstore_app's tests)
            // and against each preset's types at compile time; here the types' tags
            // themselves, as small-json reports them.
            let tags = |name: &str| ALL.iter().find(|s| s.identity.service == name).map(|s| s.tags);
            let mut checked = 0;
            for pair in AXIS_PAIRS {
                let (Some(a), Some(b)) = (tags(pair.baseline), tags(pair.changed)) else {
                    continue;
                };
                for (index, axis) in bookstore_app::stacks::Axis::ALL.into_iter().enumerate() {
                    assert_eq!(a[index] != b[index], pair.axes.contains(&axis), "{pair:?}");
                }
                checked += 1;
            }
            assert_eq!(checked, 4, "the four pairs among the presets");
        }

        #[test]
        fn every_stack_of_the_registry_is_under_test() {
            let registry: Vec<&str> = bookstore_app::stacks::names();
            let tested: Vec<&str> = ALL.iter().map(|s| s.identity.service).collect();
            assert_eq!(registry, tested);
        }

        #[test]
        fn the_composed_stacks_under_test_hold_every_access_on_axum_and_every_framework_on_diesel_async()
         {
            let tested: Vec<[&str; 4]> = composed_under_test().iter().map(|s| s.tags).collect();
            for access in bookstore_app::stacks::ACCESSES {
                assert!(tested.contains(&["axum", "serde_json", access.tag, "benchmark"]));
            }
            for framework in bookstore_app::stacks::FRAMEWORKS {
                assert!(tested.contains(&[
                    framework.tag,
                    "serde_json",
                    "diesel-async",
                    "benchmark"
                ]));
            }
        }
    }
}

/// Calls `$callback!` with the composed stacks the conformance suite tests beside the
/// presets, one line each: `(STATIC, test_name, Framework, Codec, Access)`. Every access
/// on one framework (axum) and every framework on one access (diesel-async); all 36 are
/// checked for their tags by `tests/conformance/composed.rs`.
#[macro_export]
macro_rules! for_each_composed_under_test {
    ($callback:ident) => {
        $callback! {
            (AXUM_SERDE_JSON_SQLX, axum_serde_json_sqlx, axum_any::Axum, bookstore_codec::SerdeJson, bookstore_any::Sqlx),
            (AXUM_SERDE_JSON_DIESEL, axum_serde_json_diesel, axum_any::Axum, bookstore_codec::SerdeJson, bookstore_any::Diesel),
            (AXUM_SERDE_JSON_DIESEL_ASYNC, axum_serde_json_diesel_async, axum_any::Axum, bookstore_codec::SerdeJson, bookstore_any::DieselAsync),
            (AXUM_SERDE_JSON_TOKIO_POSTGRES, axum_serde_json_tokio_postgres, axum_any::Axum, bookstore_codec::SerdeJson, bookstore_any::TokioPostgres),
            (ACTIX_WEB_SERDE_JSON_DIESEL_ASYNC, actix_web_serde_json_diesel_async, actix_web_any::ActixWeb, bookstore_codec::SerdeJson, bookstore_any::DieselAsync),
            (HYPER_SERDE_JSON_DIESEL_ASYNC, hyper_serde_json_diesel_async, hyper_any::Hyper, bookstore_codec::SerdeJson, bookstore_any::DieselAsync),
        }
    };
}

/// Calls `$callback!` with the stacks the conformance suite also tests in the per-core
/// layout (`--layout per-core`, SPEC §1 "Realism"), one line each: `(CONSTANT, test_name)`
/// of [`stacks`]. A sample — every framework, every kind of access, the blocking one on
/// actix-web in its per-worker pool too — since the whole suite per layout would add half
/// again to the test command's time; the rest run in that layout in the layout study.
#[macro_export]
macro_rules! for_each_per_core_under_test {
    ($callback:ident) => {
        $callback! {
            (ACTIX_SIMD_SQLX, actix_simd_sqlx),
            (ACTIX_SERDE_DIESEL, actix_serde_diesel),
            (AXUM_SERDE_JSON_TOKIO_POSTGRES, axum_serde_json_tokio_postgres),
            (HYPER_SERDE_JSON_DIESEL_ASYNC, hyper_serde_json_diesel_async),
        }
    };
}

/// How long a test waits for a server to answer `/health` after start.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long any one request may take before the test fails instead of hanging.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A stack serving a fresh seeded database on a loopback port.
pub struct TestApp {
    client: Client,
    stack: Stack,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The server thread; its error is rendered with causes.
    thread: Option<JoinHandle<Result<(), String>>>,
    database_url: String,
    /// The test's own database, dropped with the app; `None` when the test brought one.
    _db: Option<TestDatabase>,
}

impl TestApp {
    /// Starts `stack` with the test configuration (pool of 4, two workers).
    pub async fn spawn(stack: &Stack) -> Self {
        Self::spawn_with(stack, |_| {}).await
    }

    /// Starts `stack` after `adjust` has changed the test configuration.
    pub async fn spawn_with(stack: &Stack, adjust: impl FnOnce(&mut ServerConfig)) -> Self {
        let db = seeded_database().await;
        let url = db.url().to_owned();
        Self::start(stack, url, Some(db), adjust).await
    }

    /// Starts `stack` on a seeded database the test manages itself (for example on a
    /// cluster it stops and starts), after `adjust` has changed the test configuration.
    pub async fn spawn_on(
        stack: &Stack,
        database_url: &str,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        Self::start(stack, database_url.to_owned(), None, adjust).await
    }

    async fn start(
        stack: &Stack,
        database_url: String,
        db: Option<TestDatabase>,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        init_test_logging();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        // Small pool and two workers: many tests run at once on two cores.
        let mut config = ServerConfig {
            bind: addr,
            pool: PoolSettings {
                database_url: database_url.clone(),
                max_connections: 4,
                acquire_timeout: Duration::from_secs(2),
            },
            workers: 2,
            blocking_threads: (stack.db_calls == DbCalls::Blocking).then_some(4),
            blocking_pool: None,
            client_timeout: Duration::from_secs(10),
            timing_file: None,
            layout: bookstore_app::stacks::Layout::Framework,
            extra_work: Duration::ZERO,
        };
        adjust(&mut config);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serve = stack.serve;
        let thread = std::thread::Builder::new()
            .name(format!("{}-server", stack.identity.service))
            .spawn(move || {
                let shutdown = Box::pin(async move {
                    let _ = stopped.await;
                });
                serve(listener, config, shutdown).map_err(|e| format!("{e:#}"))
            })
            .expect("spawn the server thread");
        let client = Client { addr, name: stack.identity.service };
        let mut app = TestApp {
            client,
            stack: *stack,
            stop: Some(stop),
            thread: Some(thread),
            database_url,
            _db: db,
        };
        app.wait_until_serving().await;
        app
    }

    async fn wait_until_serving(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if self.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                let outcome = self.thread.take().expect("checked").join();
                panic!("{} stopped during start-up: {outcome:?}", self.name);
            }
            let probe =
                tokio::time::timeout(Duration::from_secs(2), self.try_send(get_request("/health")));
            if let Ok(Ok(response)) = probe.await
                && response.status == 200
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not serve within {START_TIMEOUT:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A direct connection to the stack's database, for checking what a request did.
    pub async fn db(&self) -> PgConnection {
        PgConnection::connect(&self.database_url).await.expect("connect to the test database")
    }

    /// The URL of the stack's database.
    pub fn database_url(&self) -> &str {
        &self.database_url
    }

    /// The stack under test.
    pub fn stack(&self) -> &Stack {
        &self.stack
    }

    /// A client for this server that can be moved into tasks (for concurrent requests).
    pub fn client(&self) -> Client {
        self.client.clone()
    }
}

impl std::ops::Deref for TestApp {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

/// Sends requests to one server; cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    addr: SocketAddr,
    name: &'static str,
}

impl Client {
    /// A client for a server at `addr` (for example a server binary the test started);
    /// `name` labels its failures.
    pub fn new(addr: SocketAddr, name: &'static str) -> Self {
        Client { addr, name }
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The stack's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(get_request(path)).await
    }

    /// `method path` without a body.
    pub async fn request(&self, method: &str, path: &str) -> TestResponse {
        let request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).expect("a valid method"))
            .uri(path)
            .header(HOST, "localhost")
            .body(Full::new(Bytes::new()))
            .expect("a valid request");
        self.send(request).await
    }

    /// `POST path` with `body` and `Content-Type: application/json`.
    pub async fn post_json(&self, path: &str, body: impl Into<Bytes>) -> TestResponse {
        self.post(path, Some("application/json"), body).await
    }

    /// `POST path` with `body` and the given `Content-Type` (none when `None`).
    pub async fn post(
        &self,
        path: &str,
        content_type: Option<&str>,
        body: impl Into<Bytes>,
    ) -> TestResponse {
        let mut builder =
            Request::builder().method(Method::POST).uri(path).header(HOST, "localhost");
        if let Some(content_type) = content_type {
            builder = builder.header(CONTENT_TYPE, content_type);
        }
        self.send(builder.body(Full::new(body.into())).expect("a valid request")).await
    }

    /// Sends `request` on a new connection and reads the response.
    pub async fn send(&self, request: Request<Full<Bytes>>) -> TestResponse {
        let described = format!("{} {}", request.method(), request.uri());
        match tokio::time::timeout(REQUEST_TIMEOUT, self.try_send(request)).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => panic!("{}: {described} failed: {error}", self.name),
            Err(_) => {
                panic!("{}: {described} got no response within {REQUEST_TIMEOUT:?}", self.name)
            }
        }
    }

    /// Like [`Client::send`], returning a failure to connect or to read the response (a
    /// server that is stopping or has stopped) instead of failing the test.
    pub async fn try_send(&self, request: Request<Full<Bytes>>) -> Result<TestResponse, String> {
        let stream = TcpStream::connect(self.addr).await.map_err(|e| e.to_string())?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        let driver = tokio::spawn(connection);
        let is_head = request.method() == Method::HEAD;
        let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
        driver.abort();
        Ok(TestResponse::checked(parts.status, parts.headers, body, !is_head))
    }

    /// Writes `raw` bytes on a new connection and reads one response: for requests a
    /// well-behaved client library will not send (chunked bodies by hand, odd bytes).
    pub async fn raw(&self, raw: &[u8]) -> TestResponse {
        let exchange = async {
            let mut stream = TcpStream::connect(self.addr).await?;
            stream.write_all(raw).await?;
            read_response(&mut stream).await
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => panic!("{}: raw request failed: {error}", self.name),
            Err(_) => {
                panic!("{}: raw request got no response within {REQUEST_TIMEOUT:?}", self.name)
            }
        }
    }
}

impl Client {
    /// Opens a keep-alive connection: requests sent on it reuse one TCP connection, as a
    /// load client's do.
    pub async fn session(&self) -> Result<Session, String> {
        let stream = TcpStream::connect(self.addr).await.map_err(|e| e.to_string())?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        let driver = tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Session { sender, driver })
    }

    /// The status of the first response to `raw` bytes, without the contract's checks — for
    /// requests an HTTP parser refuses before the contract applies (its answers carry no
    /// JSON). `None` when the server closes the connection without answering.
    pub async fn raw_status(&self, raw: &[u8]) -> Option<u16> {
        let exchange = async {
            let mut stream = TcpStream::connect(self.addr).await.ok()?;
            // The server may answer and close before reading everything we send.
            let _ = stream.write_all(raw).await;
            let mut buffer = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut response = httparse::Response::new(&mut headers);
                if let Ok(httparse::Status::Complete(_)) = response.parse(&buffer) {
                    return response.code;
                }
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return None,
                    Ok(read) => buffer.extend_from_slice(&chunk[..read]),
                }
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange).await.unwrap_or_else(|_| {
            panic!("{}: no answer or close within {REQUEST_TIMEOUT:?}", self.name)
        })
    }

    /// How long the server keeps a connection that sends `first`, then `trickle` one byte at
    /// a time every `pause` (a slow client), and then nothing (a silent one). `None` if it is
    /// still open after `limit`. Anything the server sends (a 408) counts as closing.
    pub async fn open_for(
        &self,
        first: &[u8],
        trickle: &[u8],
        pause: Duration,
        limit: Duration,
    ) -> Option<Duration> {
        let started = Instant::now();
        let mut stream = TcpStream::connect(self.addr).await.expect("connect");
        stream.write_all(first).await.expect("send");
        let (mut reader, mut writer) = stream.split();
        let trickling = async {
            for byte in trickle {
                tokio::time::sleep(pause).await;
                if writer.write_all(&[*byte]).await.is_err() {
                    break;
                }
            }
            std::future::pending::<()>().await;
        };
        let mut chunk = [0u8; 1024];
        let closed = async {
            loop {
                match reader.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {} // e.g. a 408 before the close
                }
            }
        };
        let outcome = tokio::time::timeout(limit, async {
            tokio::select! {
                () = closed => {}
                () = trickling => {}
            }
        })
        .await;
        outcome.ok().map(|()| started.elapsed())
    }
}

/// A keep-alive connection to a server; see [`Client::session`].
pub struct Session {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    driver: tokio::task::JoinHandle<()>,
}

impl Session {
    /// Sends `request` on this connection and reads the response; an error once the
    /// server has closed the connection.
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<TestResponse, String> {
        let exchange = async {
            self.sender.ready().await.map_err(|e| e.to_string())?;
            let response = self.sender.send_request(request).await.map_err(|e| e.to_string())?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
            Ok(TestResponse::checked(parts.status, parts.headers, body, true))
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no response within {REQUEST_TIMEOUT:?}")),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl TestApp {
    /// Asks the server to stop, as SIGTERM does, and waits up to `limit` for `serve` to
    /// return. `None` if it is still running then; otherwise its result.
    pub async fn shut_down(&mut self, limit: Duration) -> Option<Result<(), String>> {
        self.request_stop();
        self.stopped(limit).await
    }

    /// Asks the server to stop, as SIGTERM does, without waiting.
    pub fn request_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Waits up to `limit` for `serve` to return after [`TestApp::request_stop`]. `None` if
    /// it is still running then; otherwise its result.
    pub async fn stopped(&mut self, limit: Duration) -> Option<Result<(), String>> {
        let deadline = Instant::now() + limit;
        while self.thread.as_ref().is_some_and(|thread| !thread.is_finished()) {
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let thread = self.thread.take()?;
        Some(thread.join().unwrap_or_else(|_| Err("the server thread panicked".to_owned())))
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(thread) = self.thread.take() else { return };
        let deadline = Instant::now() + Duration::from_secs(15);
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if !thread.is_finished() {
            // Fail loudly unless the test is already failing for another reason.
            if !std::thread::panicking() {
                panic!("{} did not stop within 15 s of shutdown", self.name);
            }
            return;
        }
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(error)) if !std::thread::panicking() => panic!("{} failed: {error}", self.name),
            Err(_) if !std::thread::panicking() => panic!("{} server thread panicked", self.name),
            _ => {}
        }
    }
}

/// The write scenarios' body (SPEC §4) for `book_id`.
pub fn checkout_body(book_id: i64) -> String {
    format!(
        r#"{{"bookId":{book_id},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1}}"#
    )
}

/// `POST /checkouts` with [`checkout_body`] for `book_id`.
pub fn checkout_request(book_id: i64) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri("/api/checkouts")
        .header(HOST, "localhost")
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(checkout_body(book_id))))
        .expect("a valid request")
}

/// `GET path`, for [`Client::try_send`] and [`Session::send`].
pub fn get_request(path: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(HOST, "localhost")
        .body(Full::new(Bytes::new()))
        .expect("a valid request")
}

async fn read_response(stream: &mut TcpStream) -> std::io::Result<TestResponse> {
    let mut buffer = Vec::with_capacity(4096);
    loop {
        let mut chunk = [0u8; 4096];
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(std::io::Error::other(format!(
                "connection closed after {} bytes: {:?}",
                buffer.len(),
                String::from_utf8_lossy(&buffer)
            )));
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Response::new(&mut headers);
        let httparse::Status::Complete(head_len) =
            parsed.parse(&buffer).map_err(std::io::Error::other)?
        else {
            continue;
        };
        let mut header_map = HeaderMap::new();
        for header in parsed.headers.iter() {
            header_map.append(
                hyper::header::HeaderName::from_bytes(header.name.as_bytes())
                    .map_err(std::io::Error::other)?,
                hyper::header::HeaderValue::from_bytes(header.value)
                    .map_err(std::io::Error::other)?,
            );
        }
        let status =
            StatusCode::from_u16(parsed.code.unwrap_or(0)).map_err(std::io::Error::other)?;
        let length: usize = header_map
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .ok_or_else(|| std::io::Error::other("response without Content-Length"))?;
        while buffer.len() < head_len + length {
            let read = stream.read(&mut chunk).await?;
            if read == 0 {
                return Err(std::io::Error::other("connection closed inside the body"));
            }
            buffer.extend_from_slice(&chunk[..read]);
        }
        let body = Bytes::copy_from_slice(&buffer[head_len..head_len + length]);
        return Ok(TestResponse::checked(status, header_map, body, true));
    }
}

/// A response that has passed the contract's header checks.
#[derive(Debug, Clone)]
pub struct TestResponse {
    #[allow(missing_docs)] // named for what it holds
    pub status: u16,
    /// Every header, for tests that check more than the contract's two.
    pub headers: HeaderMap,
    /// The body, `Content-Length` bytes long; empty for HEAD.
    pub body: Bytes,
}

impl TestResponse {
    /// Checks what SPEC §3 requires of every response: `Content-Type: application/json`
    /// and a `Content-Length` equal to the body's length (for HEAD, only its presence).
    fn checked(status: StatusCode, headers: HeaderMap, body: Bytes, body_expected: bool) -> Self {
        let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
        assert_eq!(
            content_type,
            Some("application/json"),
            "{status} response without JSON content type"
        );
        let length =
            headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        let length = length.unwrap_or_else(|| panic!("{status} response without Content-Length"));
        if body_expected {
            assert_eq!(
                length,
                body.len(),
                "{status} response whose Content-Length is not its body's"
            );
        }
        Self { status: status.as_u16(), headers, body }
    }

    /// The body as text.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("the body is UTF-8")
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body))
        })
    }

    /// Asserts `status` with exactly `{"error":code,"message":…}` and returns the message.
    pub fn error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status, status, "body: {}", String::from_utf8_lossy(&self.body));
        let body = self.json();
        let object =
            body.as_object().unwrap_or_else(|| panic!("error body is not an object: {body}"));
        assert_eq!(object.len(), 2, "error body has exactly error and message: {body}");
        assert_eq!(object["error"], code, "{body}");
        assert_key_order(self.text(), &["error", "message"]);
        let message =
            object["message"].as_str().unwrap_or_else(|| panic!("message is not a string: {body}"));
        assert!(!message.is_empty(), "empty message: {body}");
        message.to_owned()
    }
}

/// Asserts that `keys` appear in this order as object keys in `json_text` (serde_json's
/// `Value` forgets key order; the contract fixes it).
pub fn assert_key_order(json_text: &str, keys: &[&str]) {
    let mut from = 0;
    for key in keys {
        let needle = format!("\"{key}\":");
        match json_text[from..].find(&needle) {
            Some(at) => from += at + needle.len(),
            None => panic!("key {key} missing or out of order in {json_text}"),
        }
    }
}

/// Waits until `waiters` sessions of `conn`'s database wait for a lock (a test holds a row
/// lock and lets a server's request run into it).
pub async fn wait_for_lock_waiters(conn: &mut PgConnection, waiters: i64) {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        )
        .fetch_one(&mut *conn)
        .await
        .expect("read pg_stat_activity");
        if waiting >= waiters {
            return;
        }
        assert!(Instant::now() < deadline, "nobody waited for the lock within {START_TIMEOUT:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A raw `POST /api/checkouts` whose body is `kib` KiB of spaces sent in 1 KiB chunks
/// (`Transfer-Encoding: chunked`, so no length is declared up front).
pub fn chunked_checkout_request(kib: usize) -> Vec<u8> {
    let mut raw =
        b"POST /api/checkouts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                    Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            .to_vec();
    for _ in 0..kib {
        raw.extend_from_slice(b"400\r\n");
        raw.extend_from_slice(&[b' '; 1024]);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    raw
}

/// Percent-encodes every byte of `text` except ASCII letters and digits, for query values.
pub fn query_escape(text: &str) -> String {
    text.bytes()
        .map(
            |b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            },
        )
        .collect()
}

/// Whether `text` is a timestamp as the contract writes it (the domain's one check).
pub use bookstore_domain::datetime::is_timestamp as is_contract_timestamp;

/// Expected bodies from the seed formulas (`bookstore_fixture::seed`), built independently
/// of the servers' types.
pub mod expected {
    use bookstore_fixture::seed;
    use serde_json::{Value, json};

    /// `YYYY-MM-DD`.
    pub fn date(date: time::Date) -> String {
        format!("{:04}-{:02}-{:02}", date.year(), u8::from(date.month()), date.day())
    }

    /// `BookSummary` of seeded book `n`.
    pub fn book_summary(n: i64) -> Value {
        let b = seed::book(n);
        json!({
            "id": b.id, "title": b.title, "authorName": seed::author(b.author_id).name,
            "priceCents": b.price_cents, "stock": b.stock, "publishedAt": date(b.published_at),
        })
    }

    /// `LargeItem` of seeded book `n`.
    pub fn large_item(n: i64) -> Value {
        let b = seed::book(n);
        json!({
            "id": b.id, "title": b.title, "authorName": seed::author(b.author_id).name,
            "description": b.description, "publishedAt": date(b.published_at),
            "priceCents": b.price_cents, "stock": b.stock,
        })
    }

    /// The `AuthorInventory` rows of the seed, in report order.
    pub fn author_inventory() -> Vec<Value> {
        let mut rows: Vec<(i64, i64, i64, i64)> = (1..=seed::AUTHORS)
            .map(|author| {
                let books: Vec<seed::Book> =
                    seed::books().filter(|b| b.author_id == author).collect();
                let count = books.len() as i64;
                let stock = books.iter().map(|b| i64::from(b.stock)).sum();
                let price: i64 = books.iter().map(|b| i64::from(b.price_cents)).sum();
                (author, count, stock, price.div_euclid(count))
            })
            .collect();
        rows.sort_by_key(|&(author, count, _, _)| (std::cmp::Reverse(count), author));
        rows.into_iter()
            .map(|(author, count, stock, average)| {
                json!({
                    "authorId": author, "authorName": seed::author(author).name,
                    "bookCount": count, "totalStock": stock, "averagePriceCents": average,
                })
            })
            .collect()
    }

    /// Ids of the seeded books whose title or author name contains `q` ignoring case.
    pub fn search_ids(q: &str, limit: usize) -> Vec<i64> {
        let needle = q.to_lowercase();
        seed::books()
            .filter(|b| {
                b.title.to_lowercase().contains(&needle)
                    || seed::author(b.author_id).name.to_lowercase().contains(&needle)
            })
            .map(|b| b.id)
            .take(limit)
            .collect()
    }
}

/// Servers log only when `TEST_LOG` is set (filtered by `RUST_LOG`, default `info`).
fn init_test_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("TEST_LOG").is_some() {
        ONCE.call_once(bookstore_app::cli::init_tracing);
    }
}
