//! A scenario's HTTP workload: its pre-built requests, the cheap check of every answer,
//! and the full contract check of a sample — all read off the scenario's [`ScenarioSpec`](super::spec::ScenarioSpec).

use memchr::memmem;

use bookstore_registry::routes;

use super::spec::{Answer, CHECKOUT_QUANTITY, Request};
use super::table::Scenario;
use crate::engine::{ErrorKind, Outcome, Picker, Response, Workload};
use crate::validate;

/// A scenario's pre-built requests and the marker each answer must carry.
#[derive(Debug)]
pub struct ScenarioLoad {
    pub(super) scenario: Scenario,
    pub(super) ids: Vec<i64>,
    pub(super) requests: Vec<Vec<u8>>,
    pub(super) markers: Vec<Vec<u8>>,
}

impl ScenarioLoad {
    /// The HTTP workload of `scenario` against `host` (the `Host` header).
    pub fn new(scenario: Scenario, host: &str) -> Self {
        let ids = scenario.book_ids();
        let (requests, markers): (Vec<Vec<u8>>, Vec<Vec<u8>>) = match scenario.spec().request {
            Request::Checkout => ids
                .iter()
                .map(|&id| {
                    let body = checkout_body(id);
                    let request = format!(
                        "POST {} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        routes::CHECKOUTS,
                        body.len()
                    );
                    (request.into_bytes(), format!("\"bookId\":{id},").into_bytes())
                })
                .unzip(),
            Request::BookById => ids
                .iter()
                .map(|&id| {
                    let request = format!(
                        "GET {}{id} HTTP/1.1\r\nHost: {host}\r\n\r\n",
                        routes::BOOK_BY_ID_PREFIX
                    );
                    (request.into_bytes(), format!("{{\"id\":{id},\"isbn\":").into_bytes())
                })
                .unzip(),
            Request::Get { .. } => (
                vec![format!("GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n", scenario.target()).into_bytes()],
                vec![Vec::new()],
            ),
        };
        Self { scenario, ids, requests, markers }
    }

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
        let (expected_status, body_ok) = match self.scenario.spec().answer {
            Answer::Health => (200, body == br#"{"status":"UP"}"#),
            Answer::SmallJson => (
                200,
                body.starts_with(br#"{"service":""#) && memmem::find(body, b"\"tags\":[").is_some(),
            ),
            Answer::LargeJson { items } => {
                (200, memmem::find(body, format!("\"itemCount\":{items},").as_bytes()).is_some())
            }
            Answer::BookDetail => (200, body.starts_with(&self.markers[pick])),
            Answer::FirstBooks { items } => {
                (200, body.starts_with(br#"[{"id":1,"#) && count(body, b"{\"id\":") == items)
            }
            Answer::Search { items, .. } => {
                (200, body.starts_with(br#"[{"id":"#) && count(body, b"{\"id\":") == items)
            }
            Answer::Inventory { rows } => (
                200,
                body.starts_with(br#"[{"authorId":"#) && count(body, b"{\"authorId\":") == rows,
            ),
            Answer::Checkout => {
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
    match scenario.spec().answer {
        Answer::Health => expect(200).and_then(|()| validate::health(body)),
        Answer::SmallJson => expect(200).and_then(|()| validate::small_json(body)),
        Answer::LargeJson { items } => expect(200).and_then(|()| validate::large_json(body, items)),
        Answer::BookDetail => {
            expect(200).and_then(|()| validate::book_detail(body, book_id.unwrap_or(0)))
        }
        Answer::FirstBooks { items } => {
            expect(200).and_then(|()| validate::first_books(body, items))
        }
        Answer::Search { q, items } => expect(200).and_then(|()| validate::search(body, q, items)),
        Answer::Inventory { rows } => {
            expect(200).and_then(|()| validate::aggregate_report(body, rows))
        }
        Answer::Checkout if status == 409 => validate::out_of_stock(body),
        Answer::Checkout => {
            expect(201).and_then(|()| validate::checkout_created(body, book_id.unwrap_or(0)))
        }
    }
}

/// The write body of SPEC §4.
fn checkout_body(book_id: i64) -> String {
    format!(
        r#"{{"bookId":{book_id},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":{CHECKOUT_QUANTITY}}}"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response<'a>(status: u16, body: &'a [u8]) -> Response<'a> {
        Response { status, content_type: Some(b"application/json"), body }
    }

    #[test]
    fn checkout_refusals_are_rejections_not_errors() {
        let load = ScenarioLoad::new(Scenario::CheckoutSoldOut, "h");
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
        let health = ScenarioLoad::new(Scenario::Health, "h");
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
        let list = ScenarioLoad::new(Scenario::BookList, "h");
        let one_item = br#"[{"id":1,"title":"x"}]"#;
        assert_eq!(
            list.classify(0, &response(200, one_item)),
            Outcome::Error(ErrorKind::InvalidBody)
        );
    }

    #[test]
    fn book_by_id_answers_must_be_the_requested_book() {
        let load = ScenarioLoad::new(Scenario::BookById, "h");
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

    #[test]
    fn requests_follow_spec_section_4() {
        let by_id = ScenarioLoad::new(Scenario::BookById, "h");
        assert_eq!(by_id.len(), 20_000);
        assert_eq!(by_id.request(0), b"GET /api/books/1 HTTP/1.1\r\nHost: h\r\n\r\n");
        let create = ScenarioLoad::new(Scenario::CheckoutCreate, "h");
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
        assert_eq!(ScenarioLoad::new(Scenario::CheckoutSoldOut, "h").book_id(0), Some(2));
        let list = ScenarioLoad::new(Scenario::BookList500, "h");
        assert_eq!(list.request(0), b"GET /api/books?limit=500 HTTP/1.1\r\nHost: h\r\n\r\n");
        assert_eq!(Scenario::BookSearch.target(), "/api/books/search?q=Book&limit=20");
        assert_eq!(
            (Scenario::BookById.method(), Scenario::BookById.target().as_str()),
            ("GET", "/api/books/{id}")
        );
    }
}
