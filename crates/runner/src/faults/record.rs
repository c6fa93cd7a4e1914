//! Every request of a fault run, as the client saw it, and what they add up to: the error
//! window, the 503s, the failures, the time to the first success after the fault, and the
//! checkouts acknowledged (by id, for the audit).
//!
//! The suite's engine keeps only counts and histograms; a fault needs the order of events
//! around one moment, so [`Recorder`] wraps its HTTP client and notes each request (when it
//! was sent, when it ended, how) in a per-thread list handed over when the thread ends.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bookstore_client::engine::{
    Client, Done, ErrorKind, HttpClient, HttpConnection, Outcome, Picker,
};
use bookstore_client::scenario::Mix;

/// How one request ended, as a fault run judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The scenario's answer (or an honest 409 `out_of_stock`).
    Success,
    /// 503 `db_unavailable`: the contract's answer while the database cannot be reached.
    Unavailable,
    /// No connection, or one closed before a byte of an answer: the server was not there
    /// or not taking the request.
    Refused,
    /// Anything else: another status (a 500 above all), a wrong body, an answer cut off, no
    /// answer within the request timeout.
    Failed(Failure),
}

/// What was wrong with a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A status other than the scenario's and a 503 `db_unavailable`.
    Status(u16),
    /// The right status with a body that fails the check, or a 503 without
    /// `db_unavailable`.
    InvalidAnswer(u16),
    /// The connection broke after part of the answer, or the answer was not HTTP.
    Broken,
    /// No complete answer within the request timeout.
    Timeout,
}

impl Failure {
    /// As the results list it.
    pub fn describe(self) -> String {
        match self {
            Failure::Status(status) => format!("status {status}"),
            Failure::InvalidAnswer(status) => format!("an invalid answer with status {status}"),
            Failure::Broken => "an answer cut off".to_owned(),
            Failure::Timeout => "no answer within the request timeout".to_owned(),
        }
    }
}

/// One request: microseconds from the run's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it was sent (for a refused connection: when the connect was tried).
    pub sent_us: u64,
    /// When it ended.
    pub done_us: u64,
    /// How.
    pub answer: Answer,
    /// It was a checkout (a write the audit accounts for).
    pub checkout: bool,
}

impl Event {
    /// Latency, µs.
    pub fn latency_us(&self) -> u64 {
        self.done_us.saturating_sub(self.sent_us)
    }
}

/// What the client threads recorded, handed over as each ends.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every request, in no particular order.
    pub events: Vec<Event>,
    /// The id of every checkout answered 201, as a number (the UUID's 128 bits).
    pub acknowledged: Vec<u128>,
}

/// The suite's HTTP client, noting every request it makes.
pub struct Recorder {
    http: HttpClient,
    mix: Arc<Mix>,
    origin: Instant,
    own: RefCell<Recorded>,
    sink: Arc<Mutex<Recorded>>,
}

impl Recorder {
    /// A client of `addr` loading `mix`, times counted from `origin`, its records added to
    /// `sink` when it is dropped (when its client thread ends).
    pub fn new(
        addr: SocketAddr,
        mix: Arc<Mix>,
        validate_every: u64,
        origin: Instant,
        sink: Arc<Mutex<Recorded>>,
    ) -> Self {
        let http = HttpClient::new(addr, Arc::clone(&mix) as _, validate_every);
        Self { http, mix, origin, own: RefCell::new(Recorded::default()), sink }
    }

    fn now_us(&self) -> u64 {
        self.origin.elapsed().as_micros() as u64
    }

    fn note(&self, sent_us: u64, answer: Answer, checkout: bool) {
        let done_us = self.now_us();
        self.own.borrow_mut().events.push(Event { sent_us, done_us, answer, checkout });
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let own = std::mem::take(self.own.get_mut());
        let mut sink = self.sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sink.events.extend(own.events);
        sink.acknowledged.extend(own.acknowledged);
    }
}

/// A request on its way: noted as timed out unless it ends first (the engine drops the
/// call when its request timeout fires).
struct Pending<'a> {
    recorder: &'a Recorder,
    sent_us: u64,
    checkout: bool,
    answer: Option<Answer>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let answer = self.answer.unwrap_or(Answer::Failed(Failure::Timeout));
        self.recorder.note(self.sent_us, answer, self.checkout);
    }
}

/// The answer a classified response amounts to.
fn judge(status: u16, body: &[u8], outcome: Outcome) -> Answer {
    match outcome {
        Outcome::Ok | Outcome::Rejected => Answer::Success,
        _ if status == 503 => {
            if memchr::memmem::find(body, br#""error":"db_unavailable""#).is_some() {
                Answer::Unavailable
            } else {
                Answer::Failed(Failure::InvalidAnswer(status))
            }
        }
        Outcome::Error(ErrorKind::Status) => Answer::Failed(Failure::Status(status)),
        _ => Answer::Failed(Failure::InvalidAnswer(status)),
    }
}

/// The checkout id at the start of a 201's body, `{"id":"<uuid>",…`.
pub fn checkout_id(body: &[u8]) -> Option<u128> {
    let rest = body.strip_prefix(br#"{"id":""#)?;
    parse_uuid(std::str::from_utf8(rest.get(..36)?).ok()?)
}

/// A stored checkout id (`id::text`) as a number.
pub fn parse_uuid(text: &str) -> Option<u128> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    (hex.len() == 32).then(|| u128::from_str_radix(&hex, 16).ok()).flatten()
}

impl Client for Recorder {
    type Connection = HttpConnection;

    fn picker(&self, index: usize, users: usize) -> Picker {
        self.http.picker(index, users)
    }

    async fn connect(&self) -> Result<HttpConnection, ErrorKind> {
        let tried_us = self.now_us();
        let opened = self.http.connect().await;
        if opened.is_err() {
            self.note(tried_us, Answer::Refused, false);
        }
        opened
    }

    async fn call(&self, connection: &mut HttpConnection, pick: usize) -> Result<Done, ErrorKind> {
        let checkout = self.mix.locate(pick).0.spec().writes.is_some();
        let mut pending =
            Pending { recorder: self, sent_us: self.now_us(), checkout, answer: None };
        let mut acknowledged = None;
        let result = self
            .http
            .call_inspecting(connection, pick, |response, outcome| {
                pending.answer = Some(judge(response.status, response.body, outcome));
                if checkout && response.status == 201 && outcome == Outcome::Ok {
                    acknowledged = checkout_id(response.body);
                }
            })
            .await;
        if let Err(kind) = result {
            pending.answer = Some(match kind {
                ErrorKind::Connect => Answer::Refused,
                ErrorKind::Io if connection.received_nothing() => Answer::Refused,
                ErrorKind::Timeout => Answer::Failed(Failure::Timeout),
                _ => Answer::Failed(Failure::Broken),
            });
        }
        if let Some(id) = acknowledged {
            self.own.borrow_mut().acknowledged.push(id);
        }
        drop(pending);
        result
    }

    fn problems(&self) -> Vec<String> {
        self.http.problems()
    }
}

/// What the requests around one fault add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    /// Requests (connects refused included).
    pub requests: u64,
    /// Successes.
    pub successes: u64,
    /// 503 `db_unavailable` answers.
    pub unavailable: u64,
    /// Connections refused or closed unanswered.
    pub refused: u64,
    /// Failed requests.
    pub failures: u64,
    /// The first few failures, described.
    pub failure_examples: Vec<String>,
    /// First and last end of a request that was not a success, µs from the origin.
    pub error_window_us: Option<(u64, u64)>,
    /// The first success to end at or after `ended_us`, µs from the origin.
    pub first_success_after_us: Option<u64>,
    /// Checkouts that ended without a success: each may or may not have been written.
    pub in_doubt_checkouts: u64,
    /// Non-successes per 100 ms from `injected_us` on.
    pub errors_per_100ms: Vec<u64>,
}

/// How many failures a tally describes one by one.
const FAILURE_EXAMPLES: usize = 5;

/// Adds up `events` of a fault injected at `injected_us` that ended at `ended_us`;
/// `refused_fails`: a refused connection is a failure (the server was meant to be up
/// throughout).
pub fn tally(events: &[Event], injected_us: u64, ended_us: u64, refused_fails: bool) -> Tally {
    let mut tally = Tally {
        requests: events.len() as u64,
        successes: 0,
        unavailable: 0,
        refused: 0,
        failures: 0,
        failure_examples: Vec::new(),
        error_window_us: None,
        first_success_after_us: None,
        in_doubt_checkouts: 0,
        errors_per_100ms: Vec::new(),
    };
    let mut ordered: Vec<&Event> = events.iter().collect();
    ordered.sort_by_key(|e| (e.done_us, e.sent_us));
    for event in ordered {
        let failure = match event.answer {
            Answer::Success => {
                tally.successes += 1;
                if event.done_us >= ended_us && tally.first_success_after_us.is_none() {
                    tally.first_success_after_us = Some(event.done_us);
                }
                continue;
            }
            Answer::Unavailable => {
                tally.unavailable += 1;
                None
            }
            Answer::Refused => {
                tally.refused += 1;
                refused_fails.then_some("a connection refused or closed unanswered".to_owned())
            }
            Answer::Failed(failure) => Some(failure.describe()),
        };
        if event.checkout {
            tally.in_doubt_checkouts += 1;
        }
        let window = tally.error_window_us.get_or_insert((event.done_us, event.done_us));
        window.1 = event.done_us;
        if let Some(since) = event.done_us.checked_sub(injected_us) {
            let slot = (since / 100_000) as usize;
            if tally.errors_per_100ms.len() <= slot {
                tally.errors_per_100ms.resize(slot + 1, 0);
            }
            tally.errors_per_100ms[slot] += 1;
        }
        if let Some(description) = failure {
            tally.failures += 1;
            if tally.failure_examples.len() < FAILURE_EXAMPLES {
                let kind = if event.checkout { "checkout" } else { "read" };
                tally.failure_examples.push(format!(
                    "{kind} sent at {:.3} s: {description}",
                    event.sent_us as f64 / 1e6
                ));
            }
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(sent_ms: u64, done_ms: u64, answer: Answer, checkout: bool) -> Event {
        Event { sent_us: sent_ms * 1000, done_us: done_ms * 1000, answer, checkout }
    }

    #[test]
    fn the_error_window_runs_from_the_first_to_the_last_request_that_was_not_a_success() {
        let events = [
            event(0, 1, Answer::Success, false),
            event(5, 2_100, Answer::Unavailable, true),
            event(2_000, 2_000, Answer::Refused, false),
            event(2_500, 3_400, Answer::Unavailable, false),
            event(3_000, 3_500, Answer::Success, true),
            event(3_600, 3_700, Answer::Success, false),
        ];
        let tally = tally(&events, 2_000_000, 3_200_000, false);
        assert_eq!(tally.requests, 6);
        assert_eq!(tally.successes, 3);
        assert_eq!((tally.unavailable, tally.refused, tally.failures), (2, 1, 0));
        assert_eq!(tally.error_window_us, Some((2_000_000, 3_400_000)));
        assert_eq!(tally.first_success_after_us, Some(3_500_000), "the first to end after");
        assert_eq!(tally.in_doubt_checkouts, 1, "the checkout answered 503");
        // From the injection at 2 s: 2.000, 2.100 and 3.400 s.
        let mut per_100ms = vec![0; 15];
        (per_100ms[0], per_100ms[1], per_100ms[14]) = (1, 1, 1);
        assert_eq!(tally.errors_per_100ms, per_100ms);
    }

    #[test]
    fn a_500_a_timeout_and_a_refusal_while_the_server_should_be_up_are_failures() {
        let events = [
            event(0, 10, Answer::Failed(Failure::Status(500)), true),
            event(0, 10_000, Answer::Failed(Failure::Timeout), false),
            event(20, 20, Answer::Refused, false),
        ];
        let up = tally(&events, 0, 0, true);
        assert_eq!(up.failures, 3);
        assert_eq!(up.failure_examples.len(), 3);
        assert!(
            up.failure_examples[0].contains("checkout")
                && up.failure_examples[0].contains("status 500")
        );
        assert_eq!(up.first_success_after_us, None, "never recovered");
        let restarting = tally(&events, 0, 0, false);
        assert_eq!((restarting.failures, restarting.refused), (2, 1), "refused while it was down");
    }

    #[test]
    fn answers_are_judged_by_status_and_error_code() {
        let unavailable = br#"{"error":"db_unavailable","message":"x"}"#;
        assert_eq!(judge(503, unavailable, Outcome::Error(ErrorKind::Status)), Answer::Unavailable);
        assert_eq!(
            judge(503, b"Service Unavailable", Outcome::Error(ErrorKind::Status)),
            Answer::Failed(Failure::InvalidAnswer(503))
        );
        assert_eq!(
            judge(500, br#"{"error":"internal"}"#, Outcome::Error(ErrorKind::Status)),
            Answer::Failed(Failure::Status(500))
        );
        assert_eq!(judge(409, b"", Outcome::Rejected), Answer::Success);
        assert_eq!(
            judge(200, b"{}", Outcome::Error(ErrorKind::InvalidBody)),
            Answer::Failed(Failure::InvalidAnswer(200))
        );
    }

    #[test]
    fn checkout_ids_are_read_from_the_answer_and_the_table_alike() {
        let body = br#"{"id":"6f1c2a3b-0d4e-4f50-8a6b-7c8d9e0f1a2b","bookId":3}"#;
        let id = checkout_id(body).unwrap();
        assert_eq!(Some(id), parse_uuid("6f1c2a3b-0d4e-4f50-8a6b-7c8d9e0f1a2b"));
        assert_eq!(checkout_id(br#"{"bookId":3}"#), None);
        assert_eq!(checkout_id(br#"{"id":"short"}"#), None);
        assert_eq!(parse_uuid("not-a-uuid"), None);
    }
}
