//! The request handlers, written once for all five servers.
//!
//! A server's framework routes a request and hands over the raw pieces (query string, path
//! segment, body bytes); [`App`] does the rest — parameters, validation, the store call,
//! the JSON body with the stack's own serializer, the error mapping — and returns a
//! [`Reply`] the framework turns into its response type. Framework-specific work (routing,
//! reading the body up to the limit, writing headers) is all that is left in a server.

use std::marker::PhantomData;

use bookstore_codec::Codec;
use bookstore_domain::Error;
use bookstore_domain::checkout::CheckoutBody;
use bookstore_domain::datetime::Timestamp;
use bookstore_domain::model::{ErrorBody, Health, LargeJson, LargeSummary, SmallJson};
use bookstore_domain::params::{
    self, BOOK_LIST_LIMIT, LARGE_JSON_LIMIT, QueryString, REPORT_LIMIT, SearchParams,
};
use bookstore_domain::store::Store;
use bookstore_registry::Identity;
use bookstore_timing::{self as timing, Phase};
use serde::Serialize;

/// A response body with its status; the `Content-Type` is always `application/json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// The JSON document, serialized by the stack's codec.
    pub body: Vec<u8>,
}

/// The message of every JSON syntax error, whichever serializer found it.
pub const MALFORMED_JSON: &str = "request body is not well-formed JSON";

/// `Content-Type` of every response.
pub const CONTENT_TYPE_JSON: &str = "application/json";

/// CPU every successful reply spends on purpose, in nanoseconds (`--extra-work-us`; one
/// relaxed load per reply when zero, as in every measured stack).
static EXTRA_WORK_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets the CPU every successful reply of this process spends on purpose.
pub fn set_extra_work(work: std::time::Duration) {
    let nanos = u64::try_from(work.as_nanos()).unwrap_or(u64::MAX);
    EXTRA_WORK_NS.store(nanos, std::sync::atomic::Ordering::Relaxed);
}

/// The handlers of SPEC §3 over store `S` and serializer `C`.
#[derive(Debug)]
pub struct App<S, C> {
    store: S,
    identity: Identity,
    tags: [&'static str; 4],
    codec: PhantomData<fn() -> C>,
}

impl<S: Store, C: Codec> App<S, C> {
    /// Handlers for `identity` over an opened store.
    pub fn new(store: S, identity: Identity) -> Self {
        let tags = [identity.framework, C::NAME, S::ACCESS, "benchmark"];
        Self { store, identity, tags, codec: PhantomData }
    }

    /// The stack's identity.
    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// The store, e.g. to close it at shutdown.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// `GET /health`: no database access.
    pub fn health(&self) -> Reply {
        self.ok(200, &Health::UP)
    }

    /// `GET /health/db`: `SELECT 1`.
    pub async fn health_db(&self) -> Reply {
        match timed(self.store.ping()).await {
            Ok(()) => self.ok(200, &Health::UP),
            Err(error) => self.error(error),
        }
    }

    /// `GET /api/books/bench/small-json`: no database access.
    pub fn small_json(&self) -> Reply {
        let body = SmallJson {
            service: self.identity.service,
            version: 1,
            now: Timestamp::now(),
            tags: self.tags,
        };
        self.ok(200, &body)
    }

    /// `GET /api/books/bench/large-json?limit=`.
    pub async fn large_json(&self, query: Option<&str>) -> Reply {
        let result = async {
            let limit = LARGE_JSON_LIMIT.parse(QueryString::new(query))?;
            let items = timed(self.store.large_items(limit)).await?;
            Ok(LargeJson {
                service: self.identity.service,
                generated_at: Timestamp::now(),
                summary: LargeSummary::of(&items),
                items,
            })
        };
        self.respond(200, result.await)
    }

    /// `GET /api/books/{id}`, given the raw (still percent-encoded) `{id}` segment.
    pub async fn book_get(&self, raw_id: &str) -> Reply {
        let result = async {
            let id = params::book_id(raw_id)?;
            timed(self.store.book(id)).await?.ok_or(Error::BookNotFound(id))
        };
        self.respond(200, result.await)
    }

    /// `GET /api/books?limit=`.
    pub async fn book_list(&self, query: Option<&str>) -> Reply {
        let result = async {
            let limit = BOOK_LIST_LIMIT.parse(QueryString::new(query))?;
            timed(self.store.books(limit)).await
        };
        self.respond(200, result.await)
    }

    /// `GET /api/books/search?q=&limit=`.
    pub async fn book_search(&self, query: Option<&str>) -> Reply {
        let result = async {
            let search = SearchParams::parse(QueryString::new(query))?;
            timed(self.store.search_books(&search.pattern, search.limit)).await
        };
        self.respond(200, result.await)
    }

    /// `GET /api/books/bench/aggregate-report?limit=`.
    pub async fn aggregate_report(&self, query: Option<&str>) -> Reply {
        let result = async {
            let limit = REPORT_LIMIT.parse(QueryString::new(query))?;
            timed(self.store.author_inventory(limit)).await
        };
        self.respond(200, result.await)
    }

    /// `POST /api/checkouts`, given a body the server has already checked for
    /// `Content-Type` ([`bookstore_domain::require_json_content_type`]) and size
    /// ([`bookstore_domain::BODY_LIMIT_BYTES`]).
    pub async fn checkout_create(&self, body: &[u8]) -> Reply {
        let result = async {
            if bookstore_domain::json_too_deep(body, bookstore_domain::MAX_JSON_DEPTH) {
                return Err(Error::BadRequest(format!(
                    "request body nests JSON deeper than {} levels",
                    bookstore_domain::MAX_JSON_DEPTH
                )));
            }
            let body: CheckoutBody = C::decode(body).map_err(|e| {
                // Each serializer words syntax errors its own way; the answer must not differ
                // between stacks, so the detail goes to the debug log only.
                tracing::debug!(error = %e, "malformed JSON body");
                Error::BadRequest(MALFORMED_JSON.into())
            })?;
            timed(self.store.checkout(body.into_request()?.validate()?)).await
        };
        self.respond(201, result.await)
    }

    /// The error reply for `error`; server faults are logged here, once, and their details
    /// stay out of the body.
    pub fn error(&self, error: Error) -> Reply {
        match &error {
            Error::Internal(detail) => tracing::error!(error = %detail, "internal error"),
            // During an outage this fires per request: keep it below the default level.
            Error::DbUnavailable(detail) => {
                tracing::debug!(error = %detail, "database unavailable")
            }
            _ => {}
        }
        let message = error.public_message();
        let body = ErrorBody { error: error.code(), message: &message };
        match C::encode(&body) {
            Ok(bytes) => Reply { status: error.status(), body: bytes },
            Err(e) => internal_fallback(&e.to_string()),
        }
    }

    fn respond<T: Serialize>(&self, status: u16, result: Result<T, Error>) -> Reply {
        let since = timing::start();
        let reply = match result {
            Ok(value) => self.ok(status, &value),
            Err(error) => self.error(error),
        };
        timing::record(Phase::Respond, since);
        reply
    }

    fn ok<T: Serialize + ?Sized>(&self, status: u16, value: &T) -> Reply {
        let extra = EXTRA_WORK_NS.load(std::sync::atomic::Ordering::Relaxed);
        bookstore_domain::spend(std::time::Duration::from_nanos(extra));
        match C::encode(value) {
            Ok(body) => Reply { status, body },
            Err(e) => self.error(Error::Internal(format!("encoding the response: {e}"))),
        }
    }
}

/// The store call `call`, timed as [`Phase::Store`] when `--timing-file` is on.
async fn timed<T>(call: impl Future<Output = T>) -> T {
    let since = timing::start();
    let result = call.await;
    timing::record(Phase::Store, since);
    result
}

/// The 500 reply when even the error body cannot be encoded (a serializer bug).
fn internal_fallback(detail: &str) -> Reply {
    tracing::error!(error = %detail, "encoding an error body failed");
    Reply {
        status: 500,
        body: br#"{"error":"internal","message":"internal server error"}"#.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bookstore_codec::SerdeJson;
    use bookstore_domain::checkout::NewCheckout;
    use bookstore_domain::datetime::Date;
    use bookstore_domain::model::{
        AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
    };
    use bookstore_domain::store::{OpenError, PoolSettings};
    use std::sync::{Arc, Mutex};

    /// Records the calls the handlers make and answers from memory.
    #[derive(Debug, Clone, Default)]
    struct FakeStore {
        calls: Arc<Mutex<Vec<String>>>,
        fail_with_unavailable: bool,
    }

    impl FakeStore {
        fn record(&self, call: String) -> Result<(), Error> {
            self.calls.lock().unwrap().push(call);
            if self.fail_with_unavailable {
                return Err(Error::DbUnavailable("connection refused at 10.1.2.3".into()));
            }
            Ok(())
        }
    }

    fn item(id: i64) -> LargeItem {
        LargeItem {
            id,
            title: format!("T{id}"),
            author_name: "A".into(),
            description: "D".into(),
            published_at: Date::from(
                time::Date::from_calendar_date(2020, time::Month::January, 1).unwrap(),
            ),
            price_cents: 1000,
            stock: 5,
        }
    }

    impl Store for FakeStore {
        const ACCESS: &'static str = "fake";
        async fn open(_: &PoolSettings) -> Result<Self, OpenError> {
            Ok(Self::default())
        }
        async fn close(&self) {}
        async fn ping(&self) -> Result<(), Error> {
            self.record("ping".into())
        }
        async fn book(&self, id: i64) -> Result<Option<BookDetail>, Error> {
            self.record(format!("book {id}"))?;
            Ok(None)
        }
        async fn books(&self, limit: i64) -> Result<Vec<BookSummary>, Error> {
            self.record(format!("books {limit}"))?;
            Ok(vec![])
        }
        async fn search_books(&self, pattern: &str, limit: i64) -> Result<Vec<BookSummary>, Error> {
            self.record(format!("search {pattern} {limit}"))?;
            Ok(vec![])
        }
        async fn large_items(&self, limit: i64) -> Result<Vec<LargeItem>, Error> {
            self.record(format!("large {limit}"))?;
            Ok((1..=limit).map(item).collect())
        }
        async fn author_inventory(&self, limit: i64) -> Result<Vec<AuthorInventory>, Error> {
            self.record(format!("inventory {limit}"))?;
            Ok(vec![])
        }
        async fn checkout(&self, order: NewCheckout) -> Result<CheckoutResponse, Error> {
            self.record(format!("checkout {} {}", order.book_id, order.quantity))?;
            Err(Error::OutOfStock {
                book_id: order.book_id,
                requested: order.quantity,
                available: 0,
            })
        }
    }

    const IDENTITY: Identity =
        Identity { service: "test-stack", framework: "none", default_port: 1 };

    fn app(store: FakeStore) -> App<FakeStore, SerdeJson> {
        App::new(store, IDENTITY)
    }

    fn json(reply: &Reply) -> serde_json::Value {
        serde_json::from_slice(&reply.body).unwrap()
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future)
    }

    #[test]
    fn small_json_tags_name_framework_serializer_and_store() {
        let reply = app(FakeStore::default()).small_json();
        let body = json(&reply);
        assert_eq!(body["service"], "test-stack");
        assert_eq!(body["tags"], serde_json::json!(["none", "serde_json", "fake", "benchmark"]));
    }

    #[test]
    fn invalid_parameters_never_reach_the_store() {
        let store = FakeStore::default();
        let app = app(store.clone());
        block_on(async {
            assert_eq!(app.book_list(Some("limit=0")).await.status, 400);
            assert_eq!(app.book_get("abc").await.status, 400);
            assert_eq!(app.book_search(None).await.status, 400);
            assert_eq!(app.large_json(Some("limit=49")).await.status, 400);
            assert_eq!(app.aggregate_report(Some("limit=201")).await.status, 400);
            assert_eq!(app.checkout_create(b"{").await.status, 400);
            let invalid = br#"{"bookId":3,"customerName":" ","customerEmail":"a@b"}"#;
            assert_eq!(app.checkout_create(invalid).await.status, 422);
        });
        assert!(store.calls.lock().unwrap().is_empty(), "{:?}", store.calls.lock().unwrap());
    }

    #[test]
    fn valid_requests_reach_the_store_with_parsed_values() {
        let store = FakeStore::default();
        let app = app(store.clone());
        block_on(async {
            app.book_list(None).await;
            app.book_search(Some("q=50%25+off&limit=3")).await;
            app.aggregate_report(None).await;
            let reply = app
                .checkout_create(br#"{"bookId":2,"customerName":"n","customerEmail":"a@b"}"#)
                .await;
            assert_eq!(reply.status, 409);
            assert_eq!(json(&reply)["error"], "out_of_stock");
        });
        let calls = store.calls.lock().unwrap().clone();
        assert_eq!(calls, ["books 50", r"search %50\% off% 3", "inventory 50", "checkout 2 1"]);
    }

    #[test]
    fn large_json_summary_matches_its_items() {
        let reply = block_on(app(FakeStore::default()).large_json(Some("limit=50")));
        let body = json(&reply);
        assert_eq!(body["summary"]["itemCount"], 50);
        let expected: i64 = (1..=50).map(|id| id + 1000 + 5).sum();
        assert_eq!(body["summary"]["checksum"], expected);
        assert_eq!(body["items"].as_array().unwrap().len(), 50);
    }

    #[test]
    fn unknown_book_is_404_naming_the_id() {
        let reply = block_on(app(FakeStore::default()).book_get("42"));
        assert_eq!(reply.status, 404);
        assert_eq!(
            std::str::from_utf8(&reply.body).unwrap(),
            r#"{"error":"not_found","message":"book 42 does not exist"}"#
        );
    }

    #[test]
    fn a_database_outage_is_503_without_details() {
        let store = FakeStore { fail_with_unavailable: true, ..FakeStore::default() };
        let reply = block_on(app(store).health_db());
        assert_eq!(reply.status, 503);
        let body = String::from_utf8(reply.body).unwrap();
        assert!(body.starts_with(r#"{"error":"db_unavailable""#), "{body}");
        assert!(!body.contains("10.1.2.3"), "{body}");
    }
}
