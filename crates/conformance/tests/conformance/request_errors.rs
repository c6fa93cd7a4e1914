//! Requests the contract refuses: each with its status, code and a message that names what
//! to fix — and nothing written to the database.

use super::*;
use bookstore_conformance::{chunked_checkout_request, wait_for_lock_waiters};

async fn checkout_rows(app: &TestApp) -> i64 {
    let mut db = app.db().await;
    sqlx::query_scalar("SELECT count(*) FROM checkouts").fetch_one(&mut db).await.unwrap()
}

conformance!(malformed_json_is_400, |app| {
    for body in
        ["{", "not json", "", r#"{"bookId":3,"#, "[1,2]", "null", "\"text\"", r#"{"bookId":3}}"#]
    {
        let message = app.post_json("/api/checkouts", body).await.error(400, "bad_request");
        assert!(message.contains("JSON"), "{body}: {message}");
    }
    assert_eq!(checkout_rows(app).await, 0);
});

conformance!(wrong_json_types_are_400_naming_the_field, |app| {
    for (body, field) in [
        (r#"{"bookId":"3","customerName":"A","customerEmail":"a@b"}"#, "bookId"),
        (r#"{"bookId":3.5,"customerName":"A","customerEmail":"a@b"}"#, "bookId"),
        (r#"{"bookId":9223372036854775808,"customerName":"A","customerEmail":"a@b"}"#, "bookId"),
        (r#"{"bookId":3,"customerName":5,"customerEmail":"a@b"}"#, "customerName"),
        (r#"{"bookId":3,"customerName":"A","customerEmail":null}"#, "customerEmail"),
        (r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":"2"}"#, "quantity"),
        (
            r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":2147483648}"#,
            "quantity",
        ),
        (r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":[1]}"#, "quantity"),
    ] {
        let message = app.post_json("/api/checkouts", body).await.error(400, "bad_request");
        assert!(message.contains(field), "{body}: {message}");
    }
    assert_eq!(checkout_rows(app).await, 0);
});

conformance!(missing_required_fields_are_400_naming_them, |app| {
    for (body, field) in [
        (r#"{"customerName":"A","customerEmail":"a@b"}"#, "bookId"),
        (r#"{"bookId":3,"customerEmail":"a@b"}"#, "customerName"),
        (r#"{"bookId":3,"customerName":"A"}"#, "customerEmail"),
        ("{}", "bookId"),
    ] {
        let message = app.post_json("/api/checkouts", body).await.error(400, "bad_request");
        assert!(message.contains(field), "{body}: {message}");
    }
});

conformance!(broken_rules_are_422_naming_the_field, |app| {
    let long_name = "n".repeat(121);
    let long_email = format!("{}@example.com", "e".repeat(244));
    let cases = [
        (r#"{"bookId":0,"customerName":"A","customerEmail":"a@b"}"#.to_owned(), "bookId"),
        (r#"{"bookId":-7,"customerName":"A","customerEmail":"a@b"}"#.to_owned(), "bookId"),
        (r#"{"bookId":3,"customerName":"   ","customerEmail":"a@b"}"#.to_owned(), "customerName"),
        (r#"{"bookId":3,"customerName":"","customerEmail":"a@b"}"#.to_owned(), "customerName"),
        (
            format!(r#"{{"bookId":3,"customerName":"{long_name}","customerEmail":"a@b"}}"#),
            "customerName",
        ),
        (r#"{"bookId":3,"customerName":"A","customerEmail":" "}"#.to_owned(), "customerEmail"),
        (
            r#"{"bookId":3,"customerName":"A","customerEmail":"no-at-sign"}"#.to_owned(),
            "customerEmail",
        ),
        (
            format!(r#"{{"bookId":3,"customerName":"A","customerEmail":"{long_email}"}}"#),
            "customerEmail",
        ),
        (
            r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":0}"#.to_owned(),
            "quantity",
        ),
        (
            r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":101}"#.to_owned(),
            "quantity",
        ),
        (
            r#"{"bookId":3,"customerName":"A","customerEmail":"a@b","quantity":-1}"#.to_owned(),
            "quantity",
        ),
    ];
    for (body, field) in cases {
        let message =
            app.post_json("/api/checkouts", body.clone()).await.error(422, "validation_failed");
        assert!(message.starts_with(field), "{body}: {message}");
    }
    assert_eq!(checkout_rows(app).await, 0);
});

conformance!(values_at_the_limits_of_the_rules_are_accepted, |app| {
    let name = "ü".repeat(120);
    let email = format!("{}@example.com", "e".repeat(243));
    assert_eq!(email.chars().count(), 255);
    let body = format!(
        r#"{{"bookId":1,"customerName":"{name}","customerEmail":"{email}","quantity":100}}"#
    );
    let response = app.post_json("/api/checkouts", body).await;
    assert_eq!(response.status, 201, "{}", response.text());
    assert_eq!(response.json()["customerName"], name.as_str());
});

/// A checkout body of exactly `len` bytes (valid JSON, padded with spaces).
fn body_of_length(len: usize) -> String {
    let body = checkout_body(3);
    format!("{body}{}", " ".repeat(len - body.len()))
}

conformance!(bodies_over_16_kib_are_413, |app| {
    let at_limit = app.post_json("/api/checkouts", body_of_length(16 * 1024)).await;
    assert_eq!(at_limit.status, 201, "exactly 16 KiB is allowed: {}", at_limit.text());
    let message = app
        .post_json("/api/checkouts", body_of_length(16 * 1024 + 1))
        .await
        .error(413, "payload_too_large");
    assert!(message.contains("16384"), "{message}");

    // The same without a declared length: chunked transfer encoding.
    app.raw(&chunked_checkout_request(17)).await.error(413, "payload_too_large");
    assert_eq!(stock_and_checkouts(app, 3).await.1, 1, "only the body at the limit was written");
});

conformance!(posts_without_a_json_content_type_are_415, |app| {
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/jsonx"),
    ] {
        let response = app.post("/api/checkouts", content_type, checkout_body(3)).await;
        let message = response.error(415, "unsupported_media_type");
        assert!(message.contains("application/json"), "{content_type:?}: {message}");
    }
    assert_eq!(checkout_rows(app).await, 0);
    let with_charset =
        app.post("/api/checkouts", Some("application/json; charset=utf-8"), checkout_body(3)).await;
    assert_eq!(with_charset.status, 201);
});

conformance!(unknown_routes_are_404_naming_the_path, |app| {
    for path in
        ["/", "/nope", "/api", "/api/books/1/extra", "/api/bookz", "/health/", "/api/checkouts/1"]
    {
        let message = app.get(path).await.error(404, "not_found");
        assert!(message.contains(path), "{path}: {message}");
    }
});

conformance!(wrong_methods_on_known_routes_are_405_with_allow, |app| {
    for (method, path, allowed) in [
        ("POST", "/health", "GET"),
        ("DELETE", "/api/books/1", "GET"),
        ("GET", "/api/checkouts", "POST"),
        ("PUT", "/api/books", "GET"),
        ("PATCH", "/api/books/search", "GET"),
        ("POST", "/api/books/bench/small-json", "GET"),
    ] {
        let response = app.request(method, path).await;
        let message = response.error(405, "method_not_allowed");
        assert!(message.contains(method) && message.contains(path), "{method} {path}: {message}");
        let allow = response.headers.get("allow").and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert!(allow.contains(allowed), "{method} {path}: Allow: {allow:?}");
    }
});

conformance!(
    no_free_connection_within_the_acquire_timeout_is_503_and_the_server_recovers,
    config = |config| {
        config.pool.max_connections = 1;
        config.pool.acquire_timeout = std::time::Duration::from_millis(300);
    },
    |app| {
        // Hold book 3's row lock so the server's only connection waits inside a checkout.
        let mut locker = app.db().await;
        let mut lock = sqlx::Connection::begin(&mut locker).await.unwrap();
        sqlx::query("SELECT 1 FROM books WHERE id = 3 FOR UPDATE")
            .execute(&mut *lock)
            .await
            .unwrap();
        let client = app.client();
        let blocked =
            tokio::spawn(async move { client.post_json("/api/checkouts", checkout_body(3)).await });
        let mut watcher = app.db().await;
        wait_for_lock_waiters(&mut watcher, 1).await;

        let message = app.get("/health/db").await.error(503, "db_unavailable");
        assert!(!message.contains("127.0.0.1"), "no connection details: {message}");
        app.get("/api/books/3").await.error(503, "db_unavailable");

        lock.rollback().await.unwrap();
        assert_eq!(blocked.await.unwrap().status, 201, "the waiting checkout completes");
        assert_eq!(app.get("/health/db").await.status, 200, "and the server serves again");
    }
);
