//! The contract check a server passes before its first window: the first few requests of
//! each scenario to be measured, sent one at a time and checked in full against SPEC §3.

use std::time::Duration;

use bookstore_client::engine;
use bookstore_client::probe;
use bookstore_client::scenario::{self, Scenario};
use bookstore_record::results::Validation;

/// The contract check of every scenario before measuring: the first few requests of each,
/// sent one at a time and checked in full.
pub fn validate_stack(addr: std::net::SocketAddr, scenarios: &[Scenario]) -> Vec<Validation> {
    const PER_SCENARIO: usize = 3;
    scenarios
        .iter()
        .map(|&scenario| {
            let load = bookstore_client::scenario::ScenarioLoad::new(scenario, &addr.to_string());
            let mut picker = engine::Workload::picker(&load, 0, 1);
            let problem = (0..PER_SCENARIO.min(load.len().max(1))).find_map(|_| {
                let pick = picker.pick();
                let response = match probe::exchange(
                    addr,
                    engine::Workload::request(&load, pick),
                    Duration::from_secs(10),
                ) {
                    Ok(response) => response,
                    Err(error) => return Some(error),
                };
                if response
                    .content_type
                    .as_deref()
                    .is_none_or(|ct| !ct.starts_with("application/json"))
                {
                    return Some(format!(
                        "Content-Type is {:?}, not application/json",
                        response.content_type
                    ));
                }
                scenario::validate_response(
                    scenario,
                    load.book_id(pick),
                    response.status,
                    &response.body,
                )
                .err()
            });
            Validation { scenario: scenario.name().to_owned(), passed: problem.is_none(), problem }
        })
        .collect()
}

/// One check of the contract's answers that needs no state: a request, and the status and
/// error code it must get (SPEC §3's table).
struct ErrorCheck {
    what: &'static str,
    request: String,
    status: u16,
    /// The `error` code of the body; `None` for a success.
    code: Option<&'static str>,
}

/// The checks of SPEC §3 a server of one's own is given over HTTP before it is measured
/// beside the stacks, besides every scenario's answers: its errors, validation and status
/// codes, each with the contract's JSON error body.
fn error_checks(addr: std::net::SocketAddr) -> Vec<ErrorCheck> {
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let post = |content_type: Option<&str>, body: &str| {
        let content_type = content_type.map_or(String::new(), |t| format!("Content-Type: {t}\r\n"));
        format!(
            "POST /api/checkouts HTTP/1.1\r\nHost: {addr}\r\n{content_type}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let json = Some("application/json");
    let check = |what, request, status, code| ErrorCheck { what, request, status, code };
    vec![
        check("GET /health", get("/health"), 200, None),
        check("an unknown route", get("/no/such/route"), 404, Some("not_found")),
        check("an unknown book id", get("/api/books/987654321"), 404, Some("not_found")),
        check("a book id that is not a number", get("/api/books/abc"), 400, Some("bad_request")),
        check("a book id below 1", get("/api/books/0"), 400, Some("bad_request")),
        check("a list limit of 0", get("/api/books?limit=0"), 400, Some("bad_request")),
        check("a list limit of 501", get("/api/books?limit=501"), 400, Some("bad_request")),
        check("a search without q", get("/api/books/search"), 400, Some("bad_request")),
        check(
            "a known route's wrong method",
            format!("DELETE /api/books/1 HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
            405,
            Some("method_not_allowed"),
        ),
        check(
            "a checkout without Content-Type",
            post(None, "{}"),
            415,
            Some("unsupported_media_type"),
        ),
        check("a checkout of malformed JSON", post(json, "{\"bookId\":"), 400, Some("bad_request")),
        check(
            "a checkout with a blank name",
            post(json, r#"{"bookId":3,"customerName":" ","customerEmail":"a@b","quantity":1}"#),
            422,
            Some("validation_failed"),
        ),
        check(
            "a checkout of quantity 0",
            post(json, r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":0}"#),
            422,
            Some("validation_failed"),
        ),
        check(
            "a body over 16 KiB",
            post(json, &" ".repeat(16 * 1024 + 1)),
            413,
            Some("payload_too_large"),
        ),
    ]
}

/// What a server that is not one of the workspace's stacks fails of the contract's checks
/// that can be made over HTTP (`[]`: it keeps them): its errors, validation and status
/// codes, and every scenario's answers (`scenarios`, the ones it will be measured on).
/// None of the error checks writes; the scenarios' checks read the seeded rows.
pub fn foreign_failures(addr: std::net::SocketAddr, scenarios: &[Scenario]) -> Vec<String> {
    let timeout = Duration::from_secs(10);
    let mut failures = Vec::new();
    for check in error_checks(addr) {
        let failure = match probe::exchange(addr, check.request.as_bytes(), timeout) {
            Err(error) => Some(error),
            Ok(response) => judge(&check, &response),
        };
        if let Some(failure) = failure {
            failures.push(format!("{}: {failure}", check.what));
        }
    }
    for validation in validate_stack(addr, scenarios) {
        if let Some(problem) = validation.problem {
            failures.push(format!("{}: {problem}", validation.scenario));
        }
    }
    failures
}

/// What is wrong with `response` to `check`, if anything.
fn judge(check: &ErrorCheck, response: &probe::ProbeResponse) -> Option<String> {
    if response.status != check.status {
        return Some(format!("status {}, the contract says {}", response.status, check.status));
    }
    if response.content_type.as_deref().is_none_or(|t| !t.starts_with("application/json")) {
        return Some(format!("Content-Type {:?}, not application/json", response.content_type));
    }
    let code = check.code?;
    let body: serde_json::Value = match serde_json::from_slice(&response.body) {
        Ok(body) => body,
        Err(_) => return Some("the error body is not JSON".into()),
    };
    match (body["error"].as_str(), body["message"].as_str()) {
        (Some(error), Some(message)) if error == code && !message.is_empty() => None,
        _ => Some(format!(
            "the body is {body}, the contract says {{\"error\":\"{code}\",\"message\":…}}"
        )),
    }
}
