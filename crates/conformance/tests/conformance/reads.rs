//! The read routes: health, small-json, large-json, book by id, list, search, report.

use super::*;
use bookstore_conformance::query_escape;

conformance!(health_answers_up, |app| {
    let response = app.get("/health").await;
    assert_eq!(response.status, 200);
    assert_eq!(response.text(), r#"{"status":"UP"}"#);
});

conformance!(health_db_answers_up_when_the_database_answers, |app| {
    let response = app.get("/health/db").await;
    assert_eq!(response.status, 200);
    assert_eq!(response.text(), r#"{"status":"UP"}"#);
});

conformance!(small_json_names_the_stack_its_tags_and_the_current_time, |app| {
    let response = app.get("/api/books/bench/small-json").await;
    assert_eq!(response.status, 200);
    assert_key_order(response.text(), &["service", "version", "now", "tags"]);
    let body = response.json();
    assert_eq!(body["service"], app.name());
    assert_eq!(body["version"], 1);
    assert_eq!(body["tags"], json!(app.stack().tags));
    let now = body["now"].as_str().expect("now is a string");
    assert!(is_contract_timestamp(now), "{now}");
    let parsed =
        time::OffsetDateTime::parse(now, &time::format_description::well_known::Rfc3339).unwrap();
    let drift = (time::OffsetDateTime::now_utc() - parsed).abs();
    assert!(drift < time::Duration::minutes(5), "now is {now}, {drift} away from this clock");
    assert_eq!(body.as_object().unwrap().len(), 4);
});

conformance!(large_json_holds_the_first_200_books_and_their_checksum, |app| {
    let response = app.get("/api/books/bench/large-json").await;
    assert_eq!(response.status, 200);
    let text = response.text();
    assert_key_order(
        text,
        &["service", "generatedAt", "summary", "itemCount", "checksum", "items"],
    );
    assert_key_order(
        text,
        &[
            "items",
            "id",
            "title",
            "authorName",
            "description",
            "publishedAt",
            "priceCents",
            "stock",
        ],
    );
    let body = response.json();
    assert_eq!(body["service"], app.name());
    assert!(
        is_contract_timestamp(body["generatedAt"].as_str().unwrap()),
        "{}",
        body["generatedAt"]
    );
    let items: Vec<Value> = (1..=200).map(expected::large_item).collect();
    assert_eq!(body["items"], Value::Array(items));
    let checksum: i64 = (1..=200)
        .map(seed::book)
        .map(|b| b.id + i64::from(b.price_cents) + i64::from(b.stock))
        .sum();
    assert_eq!(body["summary"], json!({"itemCount": 200, "checksum": checksum}));
});

conformance!(large_json_limit_is_50_to_500, |app| {
    for (limit, count) in [(50, 50), (500, 500)] {
        let body = app.get(&format!("/api/books/bench/large-json?limit={limit}")).await.json();
        assert_eq!(body["items"].as_array().unwrap().len(), count);
        assert_eq!(body["summary"]["itemCount"], count);
    }
    for limit in ["49", "501", "abc", "", "1e2"] {
        let response = app.get(&format!("/api/books/bench/large-json?limit={limit}")).await;
        let message = response.error(400, "bad_request");
        assert!(message.contains("`limit`") && message.contains("50 to 500"), "{limit}: {message}");
    }
});

conformance!(book_by_id_returns_the_seeded_book_field_for_field, |app| {
    let response = app.get("/api/books/20000").await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.text(),
        r#"{"id":20000,"isbn":"0000000020000","title":"Benchmark Book 20000","description":"Synthetic benchmark book description 20000","author":{"id":500,"name":"Author 500","bio":"Benchmark author biography 500"},"priceCents":4999,"stock":54,"publishedAt":"2024-10-15"}"#
    );
    let hotspot = app.get("/api/books/1").await.json();
    assert_eq!(hotspot["stock"], 1_000_000);
    assert_eq!(
        hotspot["author"],
        json!({"id": 1, "name": "Author 1", "bio": "Benchmark author biography 1"})
    );
});

conformance!(book_id_segment_is_percent_decoded_before_parsing, |app| {
    let response = app.get("/api/books/%32%30%30%30%30").await;
    assert_eq!(response.json()["id"], 20000);
});

conformance!(unknown_book_id_is_404_naming_the_id, |app| {
    for id in ["20001", "9223372036854775807"] {
        let message = app.get(&format!("/api/books/{id}")).await.error(404, "not_found");
        assert!(message.contains(id), "{message}");
    }
});

conformance!(book_id_must_be_a_positive_integer, |app| {
    for id in ["abc", "0", "-1", "1.5", "9223372036854775808", "%FF", "1%20"] {
        let message = app.get(&format!("/api/books/{id}")).await.error(400, "bad_request");
        assert!(message.contains("`id`"), "{id}: {message}");
    }
});

conformance!(book_list_defaults_to_the_first_50_books_by_id, |app| {
    let response = app.get("/api/books").await;
    assert_eq!(response.status, 200);
    assert_key_order(
        response.text(),
        &["id", "title", "authorName", "priceCents", "stock", "publishedAt"],
    );
    let expected: Vec<Value> = (1..=50).map(expected::book_summary).collect();
    assert_eq!(response.json(), Value::Array(expected));
});

conformance!(book_list_limit_is_1_to_500, |app| {
    for (limit, count) in [(1, 1), (500, 500)] {
        let body = app.get(&format!("/api/books?limit={limit}")).await.json();
        let items = body.as_array().unwrap();
        assert_eq!(items.len(), count);
        assert_eq!(items[count - 1], expected::book_summary(count as i64));
    }
    for limit in ["0", "501", "-1", "x", "99999999999999999999"] {
        let message = app.get(&format!("/api/books?limit={limit}")).await.error(400, "bad_request");
        assert!(message.contains("`limit`") && message.contains("1 to 500"), "{limit}: {message}");
    }
});

conformance!(the_first_of_duplicated_query_parameters_wins, |app| {
    let body = app.get("/api/books?limit=3&limit=4").await.json();
    assert_eq!(body.as_array().unwrap().len(), 3);
});

conformance!(search_matches_title_or_author_ignoring_case, |app| {
    for (q, limit) in [("Book", 20), ("bOOK", 20), ("author 7", 50), ("Book 1999", 200)] {
        let response =
            app.get(&format!("/api/books/search?q={}&limit={limit}", query_escape(q))).await;
        assert_eq!(response.status, 200, "{q}");
        let expected: Vec<Value> =
            expected::search_ids(q, limit).into_iter().map(expected::book_summary).collect();
        assert!(!expected.is_empty());
        assert_eq!(response.json(), Value::Array(expected), "q={q}");
    }
});

conformance!(search_defaults_to_20_results_and_limit_is_1_to_200, |app| {
    assert_eq!(app.get("/api/books/search?q=Book").await.json().as_array().unwrap().len(), 20);
    assert_eq!(
        app.get("/api/books/search?q=Book&limit=200").await.json().as_array().unwrap().len(),
        200
    );
    assert_eq!(
        app.get("/api/books/search?q=Book&limit=1").await.json().as_array().unwrap().len(),
        1
    );
    for limit in ["0", "201", "ten"] {
        let message = app
            .get(&format!("/api/books/search?q=Book&limit={limit}"))
            .await
            .error(400, "bad_request");
        assert!(message.contains("`limit`") && message.contains("1 to 200"), "{limit}: {message}");
    }
});

conformance!(search_text_is_required_trimmed_and_at_most_100_characters, |app| {
    let missing = app.get("/api/books/search?limit=5").await.error(400, "bad_request");
    assert!(missing.contains("`q`"), "{missing}");
    let blank = app.get("/api/books/search?q=%20%20+").await.error(400, "bad_request");
    assert!(blank.contains("`q`"), "{blank}");
    let too_long = app
        .get(&format!("/api/books/search?q={}", "x".repeat(101)))
        .await
        .error(400, "bad_request");
    assert!(too_long.contains("`q`") && too_long.contains("100"), "{too_long}");
    let at_limit = app.get(&format!("/api/books/search?q={}", "x".repeat(100))).await;
    assert_eq!(at_limit.text(), "[]");
    let padded = app.get("/api/books/search?q=%20%20Book%201999%20&limit=5").await;
    assert_eq!(padded.json()[0]["id"], 1999, "surrounding spaces are trimmed");
});

conformance!(search_matches_like_wildcards_and_backslash_literally, |app| {
    for q in ["%", "_", "\\", "Book%", "Book_1", "%Book", "Book\\%"] {
        let response = app.get(&format!("/api/books/search?q={}", query_escape(q))).await;
        assert_eq!(response.status, 200, "{q}");
        assert_eq!(
            response.text(),
            "[]",
            "{q} must match literally, and no seeded title contains it"
        );
    }
});

conformance!(injection_looking_search_text_is_only_text, |app| {
    for q in [
        "' OR '1'='1",
        "Book'; DROP TABLE books; --",
        "\") OR 1=1 --",
        "Book' UNION SELECT 1,2,3,4,5,6 --",
    ] {
        let response = app.get(&format!("/api/books/search?q={}", query_escape(q))).await;
        assert_eq!(response.status, 200, "{q}");
        assert_eq!(response.text(), "[]", "{q}");
    }
    assert_eq!(app.get("/api/books/20000").await.status, 200, "books is still there");
});

conformance!(query_values_that_are_not_utf8_are_400, |app| {
    let message = app.get("/api/books/search?q=%FF%FE").await.error(400, "bad_request");
    assert!(message.contains("`q`") && message.contains("UTF-8"), "{message}");
    let message = app.get("/api/books?limit=%C3%28").await.error(400, "bad_request");
    assert!(message.contains("`limit`"), "{message}");
});

conformance!(aggregate_report_groups_books_by_author_in_one_ordering, |app| {
    let response = app.get("/api/books/bench/aggregate-report").await;
    assert_eq!(response.status, 200);
    assert_key_order(
        response.text(),
        &["authorId", "authorName", "bookCount", "totalStock", "averagePriceCents"],
    );
    let all = expected::author_inventory();
    assert_eq!(response.json(), Value::Array(all[..50].to_vec()));
    for (limit, count) in [(10, 10), (200, 200)] {
        let body =
            app.get(&format!("/api/books/bench/aggregate-report?limit={limit}")).await.json();
        assert_eq!(body, Value::Array(all[..count].to_vec()));
    }
    for limit in ["9", "201", "fifty"] {
        let message = app
            .get(&format!("/api/books/bench/aggregate-report?limit={limit}"))
            .await
            .error(400, "bad_request");
        assert!(message.contains("`limit`") && message.contains("10 to 200"), "{limit}: {message}");
    }
});

conformance!(average_price_is_rounded_down, |app| {
    // Every seeded author's average is a whole number; make author 1's end in .975.
    let mut db = app.db().await;
    sqlx::query("UPDATE books SET price_cents = price_cents + 39 WHERE id = 1")
        .execute(&mut db)
        .await
        .unwrap();
    let body = app.get("/api/books/bench/aggregate-report?limit=10").await.json();
    let seeded = &expected::author_inventory()[0];
    assert_eq!(body[0]["authorId"], 1);
    assert_eq!(
        body[0]["averagePriceCents"], seeded["averagePriceCents"],
        "2750.975 is floored to 2750"
    );
});

conformance!(report_orders_by_book_count_then_author_id, |app| {
    // Every seeded author has 40 books; give author 7 two more (taken from authors 1 and 2).
    let mut db = app.db().await;
    sqlx::query("UPDATE books SET author_id = 7 WHERE id IN (1, 2)")
        .execute(&mut db)
        .await
        .unwrap();
    let body = app.get("/api/books/bench/aggregate-report?limit=10").await.json();
    let order: Vec<i64> =
        body.as_array().unwrap().iter().map(|row| row["authorId"].as_i64().unwrap()).collect();
    assert_eq!(order, [7, 3, 4, 5, 6, 8, 9, 10, 11, 12]);
    assert_eq!(body[0]["bookCount"], 42);
});

conformance!(head_is_answered_on_get_routes_without_a_body, |app| {
    let head = app.request("HEAD", "/api/books/20000").await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let get = app.get("/api/books/20000").await;
    assert_eq!(head.headers["content-length"], get.body.len().to_string().as_str());
});
