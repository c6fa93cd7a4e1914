//! The twelve scenarios of SPEC §4: what each sends, how each answer is judged, and the
//! same work done straight on the store for the database ceiling.

use std::fmt;

use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::params::contains_pattern;
use bookstore_domain::store::Store;
use bookstore_fixture::audit::Writes;
use bookstore_fixture::seed;
use memchr::memmem;

use crate::engine::{ErrorKind, Outcome, Picker, Response, Workload};
use crate::validate;

/// A benchmark scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scenario {
    /// `GET /health`.
    Health,
    /// `GET /api/books/bench/small-json`.
    SmallJson,
    /// `GET /api/books/bench/large-json?limit=200`.
    LargeJson,
    /// `GET /api/books/{id}`, id uniform random 1..=20000.
    BookById,
    /// `GET /api/books?limit=50`.
    BookList,
    /// `GET /api/books?limit=500`.
    BookList500,
    /// `GET /api/books/search?q=Book&limit=20`.
    BookSearch,
    /// `GET /api/books/bench/aggregate-report?limit=50`.
    AggregateReport,
    /// `POST /api/checkouts`, bookId cycling 3..=20000 in order.
    CheckoutCreate,
    /// `POST /api/checkouts`, bookId 1: pure row-lock contention.
    CheckoutHotspot,
    /// `POST /api/checkouts`, bookId uniform random 3..=20000.
    CheckoutDistributed,
    /// `POST /api/checkouts`, bookId 2 (stock 10): 10 × 201 per reset, then 409.
    CheckoutSoldOut,
}

/// The quantity every checkout of the scenarios asks for.
pub const CHECKOUT_QUANTITY: i32 = 1;

/// The write body of SPEC §4.
fn checkout_body(book_id: i64) -> String {
    format!(
        r#"{{"bookId":{book_id},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":{CHECKOUT_QUANTITY}}}"#
    )
}

/// Seed of the random pickers: the same ids in every run and for every stack.
pub const PICK_SEED: u64 = 0x5EED_B00C;
/// First book id the checkout scenarios that spread over books use (1 and 2 are special).
const FIRST_ORDINARY_BOOK: i64 = 3;

impl Scenario {
    /// Every scenario, in SPEC order (reads first, then writes).
    pub const ALL: [Scenario; 12] = [
        Scenario::Health,
        Scenario::SmallJson,
        Scenario::LargeJson,
        Scenario::BookById,
        Scenario::BookList,
        Scenario::BookList500,
        Scenario::BookSearch,
        Scenario::AggregateReport,
        Scenario::CheckoutCreate,
        Scenario::CheckoutHotspot,
        Scenario::CheckoutDistributed,
        Scenario::CheckoutSoldOut,
    ];

    /// Its name in SPEC §4.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Health => "health",
            Scenario::SmallJson => "smallJson",
            Scenario::LargeJson => "largeJson",
            Scenario::BookById => "bookById",
            Scenario::BookList => "bookList",
            Scenario::BookList500 => "bookList500",
            Scenario::BookSearch => "bookSearch",
            Scenario::AggregateReport => "aggregateReport",
            Scenario::CheckoutCreate => "checkoutCreate",
            Scenario::CheckoutHotspot => "checkoutHotspot",
            Scenario::CheckoutDistributed => "checkoutDistributed",
            Scenario::CheckoutSoldOut => "checkoutSoldOut",
        }
    }

    /// The scenario called `name`, or an error listing the valid names.
    pub fn parse(name: &str) -> Result<Self, String> {
        Scenario::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
            format!("unknown scenario {name:?}; valid: {}", names.join(", "))
        })
    }

    /// It writes (restore before, audit after).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Scenario::CheckoutCreate
                | Scenario::CheckoutHotspot
                | Scenario::CheckoutDistributed
                | Scenario::CheckoutSoldOut
        )
    }

    /// What the audit of a write scenario checks beyond the common rules.
    pub fn audited_as(self) -> Writes {
        match self {
            Scenario::CheckoutHotspot => Writes::Hotspot,
            Scenario::CheckoutSoldOut => Writes::SoldOut,
            _ => Writes::Spread,
        }
    }

    /// It reads or writes the database (has a database ceiling).
    pub fn uses_database(self) -> bool {
        !matches!(self, Scenario::Health | Scenario::SmallJson)
    }

    /// Book ids of the requests, when they vary.
    fn book_ids(self) -> Vec<i64> {
        match self {
            Scenario::BookById => (1..=seed::BOOKS).collect(),
            Scenario::CheckoutCreate | Scenario::CheckoutDistributed => {
                (FIRST_ORDINARY_BOOK..=seed::BOOKS).collect()
            }
            Scenario::CheckoutHotspot => vec![seed::HOTSPOT_BOOK_ID],
            Scenario::CheckoutSoldOut => vec![seed::SOLD_OUT_BOOK_ID],
            _ => Vec::new(),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Scenario::Health => "/health",
            Scenario::SmallJson => "/api/books/bench/small-json",
            Scenario::LargeJson => "/api/books/bench/large-json?limit=200",
            Scenario::BookList => "/api/books?limit=50",
            Scenario::BookList500 => "/api/books?limit=500",
            Scenario::BookSearch => "/api/books/search?q=Book&limit=20",
            Scenario::AggregateReport => "/api/books/bench/aggregate-report?limit=50",
            _ => "",
        }
    }

    /// The picker of user `index` of `users`.
    pub fn picker(self, index: usize, users: usize, requests: usize) -> Picker {
        match self {
            Scenario::BookById | Scenario::CheckoutDistributed => {
                Picker::random(PICK_SEED, index, requests)
            }
            Scenario::CheckoutCreate => Picker::cycle(index, users, requests),
            _ => Picker::Fixed(0),
        }
    }

    /// The HTTP workload against `host` (the `Host` header).
    pub fn workload(self, host: &str) -> ScenarioLoad {
        let ids = self.book_ids();
        let (requests, markers): (Vec<Vec<u8>>, Vec<Vec<u8>>) = if self.writes() {
            ids.iter()
                .map(|&id| {
                    let body = checkout_body(id);
                    let request = format!(
                        "POST /api/checkouts HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    (request.into_bytes(), format!("\"bookId\":{id},").into_bytes())
                })
                .unzip()
        } else if self == Scenario::BookById {
            ids.iter()
                .map(|&id| {
                    let request = format!("GET /api/books/{id} HTTP/1.1\r\nHost: {host}\r\n\r\n");
                    (request.into_bytes(), format!("{{\"id\":{id},\"isbn\":").into_bytes())
                })
                .unzip()
        } else {
            (
                vec![format!("GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n", self.path()).into_bytes()],
                vec![Vec::new()],
            )
        };
        ScenarioLoad { scenario: self, ids, requests, markers }
    }

    /// The same work on the store, no HTTP (the database ceiling).
    pub async fn call_store<S: Store>(self, store: &S, book_id: Option<i64>) -> Outcome {
        let result = match self {
            Scenario::Health | Scenario::SmallJson => return Outcome::Ok,
            Scenario::LargeJson => store.large_items(200).await.map(drop),
            Scenario::BookById => store.book(book_id.unwrap_or(1)).await.map(drop),
            Scenario::BookList => store.books(50).await.map(drop),
            Scenario::BookList500 => store.books(500).await.map(drop),
            Scenario::BookSearch => {
                store.search_books(&contains_pattern("Book"), 20).await.map(drop)
            }
            Scenario::AggregateReport => store.author_inventory(50).await.map(drop),
            _ => {
                let order = NewCheckout {
                    book_id: book_id.unwrap_or(FIRST_ORDINARY_BOOK),
                    customer_name: "Benchmark User".into(),
                    customer_email: "bench@example.com".into(),
                    quantity: CHECKOUT_QUANTITY,
                };
                match store.checkout(order).await {
                    Err(bookstore_domain::Error::OutOfStock { .. }) => return Outcome::Rejected,
                    other => other.map(drop),
                }
            }
        };
        match result {
            Ok(()) => Outcome::Ok,
            Err(_) => Outcome::Error(ErrorKind::Io),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scenario's pre-built requests and the marker each answer must carry.
#[derive(Debug)]
pub struct ScenarioLoad {
    scenario: Scenario,
    ids: Vec<i64>,
    requests: Vec<Vec<u8>>,
    markers: Vec<Vec<u8>>,
}

impl ScenarioLoad {
    /// The book id request `pick` is about, if any.
    pub fn book_id(&self, pick: usize) -> Option<i64> {
        self.ids.get(pick).copied()
    }

    /// Number of distinct requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether there are none (never for a built scenario).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

fn is_json(response: &Response<'_>) -> bool {
    response.content_type.is_some_and(|value| value.starts_with(b"application/json"))
}

fn count(body: &[u8], needle: &[u8]) -> usize {
    memmem::find_iter(body, needle).count()
}

impl Workload for ScenarioLoad {
    fn request(&self, pick: usize) -> &[u8] {
        &self.requests[pick]
    }

    fn picker(&self, index: usize, users: usize) -> Picker {
        self.scenario.picker(index, users, self.requests.len())
    }

    /// Status, JSON content type, and a marker cheap enough for every response.
    fn classify(&self, pick: usize, response: &Response<'_>) -> Outcome {
        let body = response.body;
        let (expected_status, body_ok) = match self.scenario {
            Scenario::Health => (200, body == br#"{"status":"UP"}"#),
            Scenario::SmallJson => (
                200,
                body.starts_with(br#"{"service":""#) && memmem::find(body, b"\"tags\":[").is_some(),
            ),
            Scenario::LargeJson => (200, memmem::find(body, b"\"itemCount\":200,").is_some()),
            Scenario::BookById => (200, body.starts_with(&self.markers[pick])),
            Scenario::BookList => {
                (200, body.starts_with(br#"[{"id":1,"#) && count(body, b"{\"id\":") == 50)
            }
            Scenario::BookList500 => {
                (200, body.starts_with(br#"[{"id":1,"#) && count(body, b"{\"id\":") == 500)
            }
            Scenario::BookSearch => {
                (200, body.starts_with(br#"[{"id":"#) && count(body, b"{\"id\":") == 20)
            }
            Scenario::AggregateReport => {
                (200, body.starts_with(br#"[{"authorId":"#) && count(body, b"{\"authorId\":") == 50)
            }
            _ => {
                if response.status == 409 {
                    return if is_json(response)
                        && memmem::find(body, br#""error":"out_of_stock""#).is_some()
                    {
                        Outcome::Rejected
                    } else {
                        Outcome::Error(ErrorKind::InvalidBody)
                    };
                }
                (
                    201,
                    body.starts_with(br#"{"id":""#)
                        && memmem::find(body, &self.markers[pick]).is_some(),
                )
            }
        };
        if response.status != expected_status {
            Outcome::Error(ErrorKind::Status)
        } else if body_ok && is_json(response) {
            Outcome::Ok
        } else {
            Outcome::Error(ErrorKind::InvalidBody)
        }
    }

    fn validate(&self, pick: usize, response: &Response<'_>) -> Result<(), String> {
        validate_response(self.scenario, self.book_id(pick), response.status, response.body)
            .map_err(|problem| format!("{}: {problem}", self.scenario))
    }
}

/// The full contract check of one answer to `scenario` (about `book_id`).
pub fn validate_response(
    scenario: Scenario,
    book_id: Option<i64>,
    status: u16,
    body: &[u8],
) -> Result<(), String> {
    let expect = |wanted: u16| {
        if status == wanted { Ok(()) } else { Err(format!("status {status}, expected {wanted}")) }
    };
    match scenario {
        Scenario::Health => expect(200).and_then(|()| validate::health(body)),
        Scenario::SmallJson => expect(200).and_then(|()| validate::small_json(body)),
        Scenario::LargeJson => expect(200).and_then(|()| validate::large_json(body, 200)),
        Scenario::BookById => {
            expect(200).and_then(|()| validate::book_detail(body, book_id.unwrap_or(0)))
        }
        Scenario::BookList => expect(200).and_then(|()| validate::first_books(body, 50)),
        Scenario::BookList500 => expect(200).and_then(|()| validate::first_books(body, 500)),
        Scenario::BookSearch => expect(200).and_then(|()| validate::search(body, "Book", 20)),
        Scenario::AggregateReport => {
            expect(200).and_then(|()| validate::aggregate_report(body, 50))
        }
        _ if status == 409 => validate::out_of_stock(body),
        _ => expect(201).and_then(|()| validate::checkout_created(body, book_id.unwrap_or(0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response<'a>(status: u16, body: &'a [u8]) -> Response<'a> {
        Response { status, content_type: Some(b"application/json"), body }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::parse(scenario.name()), Ok(scenario));
        }
        let error = Scenario::parse("bookByID").unwrap_err();
        assert!(error.contains("bookById") && error.contains("checkoutSoldOut"), "{error}");
    }

    #[test]
    fn requests_follow_spec_section_4() {
        let by_id = Scenario::BookById.workload("h");
        assert_eq!(by_id.len(), 20_000);
        assert_eq!(by_id.request(0), b"GET /api/books/1 HTTP/1.1\r\nHost: h\r\n\r\n");
        let create = Scenario::CheckoutCreate.workload("h");
        assert_eq!(create.book_id(0), Some(3));
        assert_eq!(create.book_id(create.len() - 1), Some(20_000));
        let text = String::from_utf8(create.request(0).to_vec()).unwrap();
        assert!(text.starts_with("POST /api/checkouts HTTP/1.1\r\n"), "{text}");
        assert!(text.ends_with(r#"{"bookId":3,"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1}"#));
        let declared: usize = text
            .split("Content-Length: ")
            .nth(1)
            .unwrap()
            .split('\r')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(declared, text.split("\r\n\r\n").nth(1).unwrap().len());
        assert_eq!(Scenario::CheckoutSoldOut.workload("h").book_id(0), Some(2));
    }

    #[test]
    fn checkout_refusals_are_rejections_not_errors() {
        let load = Scenario::CheckoutSoldOut.workload("h");
        let refused = response(
            409,
            br#"{"error":"out_of_stock","message":"book 2 has 0 in stock, 1 requested"}"#,
        );
        assert_eq!(load.classify(0, &refused), Outcome::Rejected);
        let created = response(201, br#"{"id":"x","bookId":2,"customerName":"Benchmark User"}"#);
        assert_eq!(load.classify(0, &created), Outcome::Ok);
        let wrong_book = response(201, br#"{"id":"x","bookId":3,"customerName":"Benchmark User"}"#);
        assert_eq!(load.classify(0, &wrong_book), Outcome::Error(ErrorKind::InvalidBody));
        assert_eq!(load.classify(0, &response(500, b"{}")), Outcome::Error(ErrorKind::Status));
        assert_eq!(load.classify(0, &response(404, b"{}")), Outcome::Error(ErrorKind::Status));
    }

    #[test]
    fn a_right_status_with_a_wrong_body_or_type_is_an_error() {
        let health = Scenario::Health.workload("h");
        assert_eq!(health.classify(0, &response(200, br#"{"status":"UP"}"#)), Outcome::Ok);
        assert_eq!(
            health.classify(0, &response(200, br#"{"status":"DOWN"}"#)),
            Outcome::Error(ErrorKind::InvalidBody)
        );
        let text = Response {
            status: 200,
            content_type: Some(b"text/plain"),
            body: br#"{"status":"UP"}"#,
        };
        assert_eq!(health.classify(0, &text), Outcome::Error(ErrorKind::InvalidBody));
        let list = Scenario::BookList.workload("h");
        let one_item = br#"[{"id":1,"title":"x"}]"#;
        assert_eq!(
            list.classify(0, &response(200, one_item)),
            Outcome::Error(ErrorKind::InvalidBody)
        );
    }

    #[test]
    fn book_by_id_answers_must_be_the_requested_book() {
        let load = Scenario::BookById.workload("h");
        assert_eq!(
            load.classify(41, &response(200, br#"{"id":42,"isbn":"0000000000042"}"#)),
            Outcome::Ok
        );
        assert_eq!(
            load.classify(41, &response(200, br#"{"id":43,"isbn":"0000000000043"}"#)),
            Outcome::Error(ErrorKind::InvalidBody)
        );
        assert_eq!(
            load.classify(3, &response(200, br#"{"id":40,"isbn":"0000000000040"}"#)),
            Outcome::Error(ErrorKind::InvalidBody),
            "a prefix of 40 is not 4"
        );
    }
}
