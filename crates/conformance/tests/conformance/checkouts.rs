//! `POST /api/checkouts`: what a checkout answers and what it does to the database.

use super::*;

conformance!(checkout_is_created_and_takes_the_stock, |app| {
    let response = app.post_json("/api/checkouts", checkout_body(3)).await;
    assert_eq!(response.status, 201, "{}", response.text());
    assert_key_order(
        response.text(),
        &["id", "bookId", "customerName", "customerEmail", "quantity", "checkedOutAt"],
    );
    let body = response.json();
    let id = uuid::Uuid::parse_str(body["id"].as_str().unwrap()).expect("id is a UUID");
    assert_eq!(id.get_version_num(), 4);
    assert_eq!(body["bookId"], 3);
    assert_eq!(body["customerName"], "Benchmark User");
    assert_eq!(body["customerEmail"], "bench@example.com");
    assert_eq!(body["quantity"], 1);
    let checked_out_at = body["checkedOutAt"].as_str().unwrap();
    assert!(is_contract_timestamp(checked_out_at), "{checked_out_at}");

    assert_eq!(stock_and_checkouts(app, 3).await, (seed::book(3).stock - 1, 1));
    let mut db = app.db().await;
    let row: (i64, String, String, i32, String) = sqlx::query_as(
        r#"SELECT book_id, customer_name, customer_email, quantity,
                  to_char(checked_out_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
           FROM checkouts WHERE id = $1"#,
    )
    .bind(id)
    .fetch_one(&mut db)
    .await
    .expect("the checkout row has the id the response gave");
    assert_eq!(
        row,
        (3, "Benchmark User".into(), "bench@example.com".into(), 1, checked_out_at.into())
    );
});

conformance!(quantity_is_optional_and_defaults_to_one, |app| {
    let without = r#"{"bookId":4,"customerName":"A","customerEmail":"a@b"}"#;
    assert_eq!(app.post_json("/api/checkouts", without).await.json()["quantity"], 1);
    let null = r#"{"bookId":4,"customerName":"A","customerEmail":"a@b","quantity":null}"#;
    assert_eq!(app.post_json("/api/checkouts", null).await.json()["quantity"], 1);
    let five = r#"{"bookId":4,"customerName":"A","customerEmail":"a@b","quantity":5}"#;
    assert_eq!(app.post_json("/api/checkouts", five).await.json()["quantity"], 5);
    assert_eq!(stock_and_checkouts(app, 4).await, (seed::book(4).stock - 7, 3));
});

conformance!(unknown_fields_in_the_body_are_ignored, |app| {
    let body = r#"{"bookId":5,"customerName":"A","customerEmail":"a@b","coupon":{"code":[1,2]},"note":null}"#;
    let response = app.post_json("/api/checkouts", body).await;
    assert_eq!(response.status, 201, "{}", response.text());
    assert_eq!(response.json().as_object().unwrap().len(), 6, "unknown fields are not echoed");
});

conformance!(checkout_of_an_unknown_book_is_404_and_writes_nothing, |app| {
    let message =
        app.post_json("/api/checkouts", checkout_body(20001)).await.error(404, "not_found");
    assert!(message.contains("20001"), "{message}");
    let mut db = app.db().await;
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM checkouts").fetch_one(&mut db).await.unwrap();
    assert_eq!(rows, 0);
});

conformance!(checkout_beyond_the_stock_is_409_and_writes_nothing, |app| {
    let eleven = r#"{"bookId":2,"customerName":"A","customerEmail":"a@b","quantity":11}"#;
    let message = app.post_json("/api/checkouts", eleven).await.error(409, "out_of_stock");
    assert!(message.contains("book 2"), "{message}");
    assert_eq!(stock_and_checkouts(app, 2).await, (10, 0));
    let ten = r#"{"bookId":2,"customerName":"A","customerEmail":"a@b","quantity":10}"#;
    assert_eq!(app.post_json("/api/checkouts", ten).await.status, 201);
    app.post_json("/api/checkouts", checkout_body(2)).await.error(409, "out_of_stock");
    assert_eq!(stock_and_checkouts(app, 2).await, (0, 1));
});

conformance!(
    the_sold_out_book_sells_exactly_its_stock_to_concurrent_buyers,
    config = |config| {
        config.pool.max_connections = 8;
    },
    |app| {
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..60 {
            let client = app.client();
            requests
                .spawn(async move { client.post_json("/api/checkouts", checkout_body(2)).await });
        }
        let (mut created, mut refused) = (0, 0);
        while let Some(response) = requests.join_next().await {
            let response = response.expect("request task");
            match response.status {
                201 => created += 1,
                409 => {
                    response.error(409, "out_of_stock");
                    refused += 1;
                }
                other => panic!("unexpected {other}: {}", response.text()),
            }
        }
        assert_eq!((created, refused), (10, 50));
        assert_eq!(stock_and_checkouts(app, 2).await, (0, 10));
    }
);

conformance!(
    concurrent_checkouts_of_the_hotspot_book_are_all_recorded,
    config = |config| {
        config.pool.max_connections = 8;
    },
    |app| {
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..40 {
            let client = app.client();
            requests.spawn(async move {
                client.post_json("/api/checkouts", checkout_body(1)).await.status
            });
        }
        while let Some(status) = requests.join_next().await {
            assert_eq!(status.expect("request task"), 201);
        }
        assert_eq!(stock_and_checkouts(app, 1).await, (seed::HOTSPOT_STOCK - 40, 40));
    }
);

conformance!(
    one_blocking_pool_shared_by_the_workers_serves_alike,
    config = |config| {
        // `--blocking-pool shared`: actix's workers then share one pool (tokio's runtime
        // has only that kind); async stacks have no blocking pool to share.
        if config.blocking_threads.is_some() {
            config.blocking_pool = Some(bookstore_app::BlockingPool::Shared);
        }
    },
    |app| {
        let read = app.get("/api/books/5").await;
        assert_eq!(read.status, 200, "{}", read.text());
        assert_eq!(read.json()["id"], 5);
        let response = app.post_json("/api/checkouts", checkout_body(6)).await;
        assert_eq!(response.status, 201, "{}", response.text());
        assert_eq!(stock_and_checkouts(app, 6).await, (seed::book(6).stock - 1, 1));
    }
);
