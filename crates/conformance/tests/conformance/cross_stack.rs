//! The stacks under test (the five presets and the composed ones) are interchangeable: the same request sequence — every route, every
//! error case, the writes in the same order — gives identical status codes and identical
//! JSON bodies from each, once the values that must differ (the stack's `service` and
//! `tags`) or cannot repeat (timestamps, checkout ids) are replaced by placeholders.

use super::*;
use bookstore_conformance::{Client, TestResponse, chunked_checkout_request, query_escape};

/// One request of the sequence.
enum Step {
    Get(String),
    Method(&'static str, &'static str),
    Post(Option<&'static str>, String),
    Raw(Vec<u8>),
}

impl Step {
    fn describe(&self) -> String {
        match self {
            Step::Get(path) => format!("GET {path}"),
            Step::Method(method, path) => format!("{method} {path}"),
            Step::Post(content_type, body) => {
                format!(
                    "POST /api/checkouts ({content_type:?}) {}",
                    body.chars().take(80).collect::<String>()
                )
            }
            Step::Raw(bytes) => {
                format!("raw {:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(60)]))
            }
        }
    }

    async fn send(&self, client: &Client) -> TestResponse {
        match self {
            Step::Get(path) => client.get(path).await,
            Step::Method(method, path) => client.request(method, path).await,
            Step::Post(content_type, body) => {
                client.post("/api/checkouts", *content_type, body.clone()).await
            }
            Step::Raw(bytes) => client.raw(bytes).await,
        }
    }
}

fn sequence() -> Vec<Step> {
    let get = |path: &str| Step::Get(path.to_owned());
    let json = Some("application/json");
    let post = |body: &str| Step::Post(json, body.to_owned());
    let mut steps = vec![
        get("/health"),
        get("/health/db"),
        get("/api/books/bench/small-json"),
        get("/api/books/bench/large-json"),
        get("/api/books/bench/large-json?limit=50"),
        get("/api/books/bench/large-json?limit=500"),
        get("/api/books/bench/large-json?limit=49"),
        get("/api/books/bench/large-json?limit=abc"),
        get("/api/books/1"),
        get("/api/books/20000"),
        get("/api/books/%32%30%30%30%30"),
        get("/api/books/20001"),
        get("/api/books/0"),
        get("/api/books/-1"),
        get("/api/books/abc"),
        get("/api/books/9223372036854775808"),
        get("/api/books/%FF"),
        get("/api/books"),
        get("/api/books?limit=1"),
        get("/api/books?limit=500"),
        get("/api/books?limit=0"),
        get("/api/books?limit=501"),
        get("/api/books?limit="),
        get("/api/books?limit=3&limit=4"),
        get("/api/books?limit=%C3%28"),
        get("/api/books/search?q=Book"),
        get("/api/books/search?q=bOOk&limit=200"),
        get("/api/books/search?q=author+7&limit=50"),
        get("/api/books/search?limit=5"),
        get("/api/books/search?q=%20%20"),
        get(&format!("/api/books/search?q={}", "x".repeat(101))),
        get("/api/books/search?q=Book&limit=201"),
        get("/api/books/search?q=%FF"),
        get("/api/books/bench/aggregate-report"),
        get("/api/books/bench/aggregate-report?limit=10"),
        get("/api/books/bench/aggregate-report?limit=200"),
        get("/api/books/bench/aggregate-report?limit=9"),
        get("/"),
        get("/nope"),
        get("/health/"),
        get("/api/books/1/extra"),
        get(&format!("/{}", "long".repeat(100))),
        Step::Method("POST", "/health"),
        Step::Method("DELETE", "/api/books/1"),
        Step::Method("GET", "/api/checkouts"),
        Step::Method("PUT", "/api/books"),
        Step::Method("HEAD", "/api/books/20000"),
        post(&checkout_body(3)),
        post(r#"{"bookId":4,"customerName":"A","customerEmail":"a@b"}"#),
        post(
            r#"{"bookId":4,"customerName":"A","customerEmail":"a@b","quantity":null,"extra":[1]}"#,
        ),
        post(r#"{"bookId":2,"customerName":"A","customerEmail":"a@b","quantity":11}"#),
        post(r#"{"bookId":2,"customerName":"A","customerEmail":"a@b","quantity":10}"#),
        post(&checkout_body(2)),
        post(&checkout_body(20001)),
        post("{"),
        post(""),
        post("not json"),
        post("[1,2]"),
        post("null"),
        post(r#"{"bookId":"3","customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"bookId":3.5,"customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"bookId":9223372036854775808,"customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"bookId":3,"customerName":5,"customerEmail":"a@b"}"#),
        post(r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":2147483648}"#),
        post(r#"{"bookId":3,"bookId":3,"customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"bookId":0,"customerName":"A","customerEmail":"a@b"}"#),
        post(r#"{"bookId":3,"customerName":"   ","customerEmail":"a@b"}"#),
        post(&format!(
            r#"{{"bookId":3,"customerName":"{}","customerEmail":"a@b"}}"#,
            "n".repeat(121)
        )),
        post(r#"{"bookId":3,"customerName":"A","customerEmail":"no-at-sign"}"#),
        post(r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":0}"#),
        post(r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":101}"#),
        post(&format!("{}{}", checkout_body(5), " ".repeat(16 * 1024 - checkout_body(5).len()))),
        post(&format!(
            "{}{}",
            checkout_body(5),
            " ".repeat(16 * 1024 + 1 - checkout_body(5).len())
        )),
        Step::Post(None, checkout_body(3)),
        Step::Post(Some("text/plain"), checkout_body(3)),
        Step::Post(Some("application/json; charset=utf-8"), checkout_body(6)),
    ];
    steps.push(Step::Raw(chunked_checkout_request(17)));
    for q in ["%", "_", "\\", "' OR '1'='1", "Book 1999"] {
        steps.push(get(&format!("/api/books/search?q={}", query_escape(q))));
    }
    // What the writes did, as every stack must have done it.
    steps.push(get("/api/books/2"));
    steps.push(get("/api/books/3"));
    steps.push(get("/api/books/4"));
    steps.push(get("/api/books/5"));
    steps
}

/// Replaces what legitimately differs between stacks or runs with placeholders.
fn normalize(value: Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("service", _) => json!("<service>"),
                        ("tags", _) => json!("<tags>"),
                        (_, Value::String(text)) if is_contract_timestamp(&text) => {
                            json!("<timestamp>")
                        }
                        ("id", Value::String(text)) if uuid::Uuid::parse_str(&text).is_ok() => {
                            json!("<uuid>")
                        }
                        (_, value) => normalize(value),
                    };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

#[tokio::test]
async fn every_stack_answers_the_same_requests_identically() {
    let steps = sequence();
    let mut transcripts = Vec::new();
    for stack in stacks::ALL.iter().copied().chain(stacks::composed_under_test()) {
        let app = TestApp::spawn(&stack).await;
        let mut transcript = Vec::new();
        for step in &steps {
            let response = step.send(&app.client()).await;
            let body =
                if response.body.is_empty() { Value::Null } else { normalize(response.json()) };
            transcript.push((response.status, body));
        }
        transcripts.push((stack.identity.service, transcript));
    }
    let (reference, expected) = &transcripts[0];
    for (name, transcript) in &transcripts[1..] {
        for ((step, want), got) in steps.iter().zip(expected).zip(transcript) {
            assert_eq!(got, want, "{name} and {reference} differ on {}", step.describe());
        }
    }
    let statuses: std::collections::BTreeSet<u16> =
        expected.iter().map(|(status, _)| *status).collect();
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        [200, 201, 400, 404, 405, 409, 413, 415, 422],
        "the sequence covers every status a client can cause"
    );
}
