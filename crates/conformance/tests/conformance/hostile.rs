//! Hostile and careless clients: every answer is the contract's (or, for bytes that are not
//! HTTP, a 4xx from the framework's parser), never a 5xx, and the server keeps serving.

use std::time::Duration;

use super::*;
use bookstore_conformance::query_escape;

async fn still_serving(app: &TestApp) {
    assert_eq!(app.get("/health").await.status, 200, "the server stopped serving");
}

conformance!(nul_characters_are_refused_before_they_reach_the_database, |app| {
    // PostgreSQL text cannot hold NUL: passing it on would be a 500.
    let message = app.get("/api/books/search?q=Book%00").await.error(400, "bad_request");
    assert!(message.contains("`q`") && message.contains("NUL"), "{message}");
    app.get("/api/books?limit=%00").await.error(400, "bad_request");
    app.get("/api/books/%00").await.error(400, "bad_request");
    let body = r#"{"bookId":3,"customerName":"a\u0000b","customerEmail":"a@b"}"#;
    let message = app.post_json("/api/checkouts", body).await.error(422, "validation_failed");
    assert!(message.starts_with("customerName"), "{message}");
    let body = r#"{"bookId":3,"customerName":"a","customerEmail":"a@b\u0000"}"#;
    app.post_json("/api/checkouts", body).await.error(422, "validation_failed");
});

conformance!(json_nested_deeper_than_32_levels_is_400_with_one_message, |app| {
    let deep_array = format!("{}{}", "[".repeat(8000), "]".repeat(8000));
    let deep_object = format!("{}1{}", r#"{"a":"#.repeat(2700), "}".repeat(2700));
    let deep_unknown_field = format!(
        r#"{{"x":{}{},"bookId":3,"customerName":"a","customerEmail":"a@b"}}"#,
        "[".repeat(40),
        "]".repeat(40)
    );
    for body in [deep_array, deep_object, deep_unknown_field] {
        let message = app.post_json("/api/checkouts", body).await.error(400, "bad_request");
        assert_eq!(message, "request body nests JSON deeper than 32 levels");
    }
    let at_limit = format!(
        r#"{{"x":{}{},"bookId":3,"customerName":"a","customerEmail":"a@b"}}"#,
        "[".repeat(31),
        "]".repeat(31)
    );
    assert_eq!(app.post_json("/api/checkouts", at_limit).await.status, 201, "32 levels are fine");
});

conformance!(non_utf8_and_garbage_in_a_body_is_400, |app| {
    let mut body = br#"{"bookId":3,"customerName":""#.to_vec();
    body.extend_from_slice(&[0xff, 0xfe, 0x80]);
    body.extend_from_slice(br#"","customerEmail":"a@b"}"#);
    let message = app.post_json("/api/checkouts", body).await.error(400, "bad_request");
    assert_eq!(message, "request body is not well-formed JSON");
    app.post_json("/api/checkouts", vec![0u8; 300]).await.error(400, "bad_request");
    app.post_json("/api/checkouts", r#"{"bookId":3,"customerName":"a","#)
        .await
        .error(400, "bad_request");
});

conformance!(
    bytes_that_are_not_http_get_a_4xx_from_the_parser_and_the_server_keeps_serving,
    |app| {
        for (what, raw) in [
            ("raw 0xFF in the path", b"GET /api/books/\xff HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
            (
                "raw 0xFF in the query",
                b"GET /api/books/search?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            ),
            ("a space in the path", b"GET /api/bo oks HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
            ("not a request line", b"HELLO THERE\r\n\r\n".to_vec()),
            ("a header without a colon", b"GET /health HTTP/1.1\r\nHost x\r\n\r\n".to_vec()),
            (
                "a bad content length",
                b"POST /api/checkouts HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".to_vec(),
            ),
        ] {
            let status = app.raw_status(&raw).await;
            assert!(status.is_none_or(|s| (400..500).contains(&s)), "{what}: {status:?}");
        }
        still_serving(app).await;
    }
);

conformance!(very_long_urls_and_headers_get_a_clear_4xx_not_a_hang, |app| {
    let long_url = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(100_000));
    let status = app.raw_status(long_url.as_bytes()).await;
    assert!(matches!(status, Some(400 | 414)), "100 KB URL: {status:?}");
    let huge_header =
        format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "a".repeat(1_000_000));
    assert_eq!(app.raw_status(huge_header.as_bytes()).await, Some(431), "1 MB header");
    // Large but sane headers (a fat cookie) are still served.
    let big_header =
        format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "a".repeat(100_000));
    assert_eq!(app.raw_status(big_header.as_bytes()).await, Some(200), "100 KB header");
    let many: String = (0..5000).map(|i| format!("X-{i}: a\r\n")).collect();
    let many_headers = format!("GET /health HTTP/1.1\r\nHost: x\r\n{many}\r\n");
    assert_eq!(app.raw_status(many_headers.as_bytes()).await, Some(431), "5000 headers");
    still_serving(app).await;
});

conformance!(percent_encoded_nul_and_dot_segments_are_ordinary_input, |app| {
    app.get("/api/../health").await.error(404, "not_found");
    app.get("/api/books/..%2F..%2Fhealth").await.error(400, "bad_request");
    app.get("/health/%2e%2e").await.error(404, "not_found");
    app.get("/api/books/%2e%2e").await.error(400, "bad_request");
    let q = query_escape("../../etc/passwd");
    assert_eq!(app.get(&format!("/api/books/search?q={q}")).await.text(), "[]");
});

conformance!(every_route_refuses_other_methods_with_405_and_allow, |app| {
    let get_routes = [
        "/health",
        "/health/db",
        "/api/books/bench/small-json",
        "/api/books/bench/large-json",
        "/api/books/7",
        "/api/books",
        "/api/books/search",
        "/api/books/bench/aggregate-report",
    ];
    for path in get_routes {
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let response = app.request(method, path).await;
            response.error(405, "method_not_allowed");
            let allow =
                response.headers.get("allow").and_then(|v| v.to_str().ok()).unwrap_or_default();
            assert!(allow.contains("GET"), "{method} {path}: Allow {allow:?}");
        }
    }
    for method in ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"] {
        let response = app.request(method, "/api/checkouts").await;
        response.error(405, "method_not_allowed");
        assert!(
            response
                .headers
                .get("allow")
                .is_some_and(|v| v.to_str().unwrap_or_default().contains("POST"))
        );
    }
});

conformance!(random_requests_never_get_a_5xx_and_the_server_keeps_serving, |app| {
    for (index, case) in cases::generate(200).into_iter().enumerate() {
        let response = app.raw(&case.bytes).await;
        assert!(
            response.status < 500,
            "case {index}: {} → {}: {}",
            case.describe,
            response.status,
            response.text()
        );
        // Every generated request is well-formed HTTP, so the answer is the contract's JSON
        // (checked by `raw`) with one of its codes.
        let body = response.json();
        if response.status >= 400 {
            assert!(
                body["error"].is_string() && body["message"].is_string(),
                "case {index}: {body}"
            );
        }
    }
    still_serving(app).await;
});

/// The client timeout in the slow-client test.
const CLIENT_TIMEOUT: Duration = Duration::from_millis(1000);
/// How early a server may cut a connection: actix reads a clock it refreshes every 500 ms
/// (actix-http's `DateService`), so its timeouts fire up to 500 ms early; hyper's are exact.
const CLOCK_GRANULARITY: Duration = Duration::from_millis(500);

conformance!(
    slow_and_silent_clients_are_cut_off_and_do_not_starve_others,
    config = |config| {
        config.client_timeout = CLIENT_TIMEOUT;
    },
    |app| {
        let limit = Duration::from_secs(5);
        // Headers sent a byte every 200 ms never complete within the timeout.
        let slow = app.open_for(
            b"GET /health HTTP/1.1\r\n",
            b"Host: localhost\r\nX-Slow: 1234567890\r\n\r\n",
            Duration::from_millis(200),
            limit,
        );
        // A connection that never sends anything.
        let silent = app.open_for(b"", b"", Duration::ZERO, limit);
        // A keep-alive connection idling after one request.
        let idle =
            app.open_for(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", b"", Duration::ZERO, limit);
        // Meanwhile everyone else is served at once.
        let others = async {
            for _ in 0..20 {
                let started = std::time::Instant::now();
                assert_eq!(app.get("/health").await.status, 200);
                assert!(
                    started.elapsed() < Duration::from_secs(1),
                    "a well-behaved client waited {:?}",
                    started.elapsed()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        let (slow, silent, idle, ()) = tokio::join!(slow, silent, idle, others);
        for (what, open) in [("slow headers", slow), ("silent", silent), ("idle keep-alive", idle)]
        {
            let open = open.unwrap_or_else(|| panic!("{what}: still open after {limit:?}"));
            assert!(
                open >= CLIENT_TIMEOUT - CLOCK_GRANULARITY,
                "{what}: closed after {open:?}, before the timeout"
            );
        }
    }
);

/// Generated requests for the property test: well-formed HTTP with arbitrary paths,
/// queries, methods, content types and bodies, from a fixed seed (the same cases every run).
mod cases {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    #[derive(Debug)]
    pub(super) struct Case {
        pub(super) bytes: Vec<u8>,
        pub(super) describe: String,
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[a-z0-9]{1,12}",
            "-?[0-9]{1,25}",
            Just("..".to_owned()),
            Just("%00".to_owned()),
            Just("%FF%FE".to_owned()),
            Just("%2F".to_owned()),
            Just("%25".to_owned()),
            Just("%C3%A9".to_owned()),
            "[a-zA-Z0-9._~%-]{0,40}",
        ]
    }

    fn path() -> impl Strategy<Value = String> {
        // Mostly the routes that read parameters and bodies, where bugs hide.
        let known = prop_oneof![
            1 => Just("/health"),
            1 => Just("/health/db"),
            3 => Just("/api/books"),
            1 => Just("/api/books/"),
            4 => Just("/api/books/search"),
            1 => Just("/api/books/bench/small-json"),
            2 => Just("/api/books/bench/large-json"),
            2 => Just("/api/books/bench/aggregate-report"),
            4 => Just("/api/checkouts"),
            1 => Just(""),
        ];
        let extra =
            prop_oneof![3 => Just(Vec::new()), 1 => proptest::collection::vec(segment(), 1..3)];
        (known, extra).prop_map(|(base, rest)| {
            let mut path = base.to_owned();
            for part in rest {
                path.push('/');
                path.push_str(&part);
            }
            if path.is_empty() { "/".to_owned() } else { path }
        })
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            "-?[0-9]{1,25}",
            "[a-zA-Z+]{0,20}",
            "[a-zA-Z]{0,5}%00[a-zA-Z]{0,5}",
            Just("%FF".to_owned()),
            Just("%25%5F%5C".to_owned()),
            Just("'%20OR%201=1--".to_owned()),
            "[a-zA-Z0-9%+._-]{0,120}",
        ]
    }

    fn query() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            4 => Just("limit".to_owned()),
            4 => Just("q".to_owned()),
            1 => Just("id".to_owned()),
            1 => "[a-z%0-9]{1,6}",
        ];
        proptest::collection::vec((key, value()), 0..4).prop_map(|pairs| {
            pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
        })
    }

    fn json_value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            "-?[0-9]{1,22}".prop_map(|n| n),
            Just("1e400".to_owned()),
            Just("-0.5".to_owned()),
            Just("null".to_owned()),
            Just("true".to_owned()),
            "[a-zA-Z @.]{0,130}".prop_map(|s| format!("\"{s}\"")),
            "[a-z]{0,3}".prop_map(|s| format!(r#""{s}\u0000""#)),
            Just(r#""\ud800""#.to_owned()),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec(inner, 0..4)
                    .prop_map(|v| format!("{{\"k\":[{}]}}", v.join(","))),
            ]
        })
    }

    fn body() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(Vec::new()),
            proptest::collection::vec(any::<u8>(), 0..200),
            (json_value(), json_value(), json_value(), json_value()).prop_map(|(id, name, email, quantity)| {
                format!(r#"{{"bookId":{id},"customerName":{name},"customerEmail":{email},"quantity":{quantity}}}"#).into_bytes()
            }),
            ("[0-9]{1,6}", "[a-z]{1,10}").prop_map(|(id, name)| {
                format!(r#"{{"bookId":{id},"customerName":"{name}","customerEmail":"{name}@x"}}"#).into_bytes()
            }),
            json_value().prop_map(String::into_bytes),
        ]
    }

    fn request() -> impl Strategy<Value = Case> {
        let method = prop_oneof![
            Just("GET"),
            Just("POST"),
            Just("PUT"),
            Just("DELETE"),
            Just("PATCH"),
            Just("OPTIONS")
        ];
        let content_type = prop_oneof![
            Just(Some("application/json")),
            Just(Some("application/json; charset=utf-8")),
            Just(Some("text/plain")),
            Just(None),
        ];
        (method, path(), query(), content_type, body()).prop_map(
            |(method, path, query, content_type, body)| {
                let target = if query.is_empty() { path } else { format!("{path}?{query}") };
                let mut head = format!(
                    "{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                );
                if let Some(content_type) = content_type {
                    head.push_str(&format!("Content-Type: {content_type}\r\n"));
                }
                head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
                let describe =
                    format!("{method} {target} ({content_type:?}, {} body bytes)", body.len());
                let mut bytes = head.into_bytes();
                bytes.extend_from_slice(&body);
                Case { bytes, describe }
            },
        )
    }

    /// `count` cases, the same every run.
    pub(super) fn generate(count: usize) -> Vec<Case> {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        );
        let strategy = request();
        (0..count).map(|_| strategy.new_tree(&mut runner).expect("a case").current()).collect()
    }
}
