//! Every composed stack — all 36 framework × serializer × access triples — is compiled into
//! its framework's binary and is what its name says: small-json answers its registry name
//! and the tags of the types it was instantiated with.

use super::*;
use bookstore_app::stacks::{self, Tags};
use bookstore_app::{DbCalls, ServeFn};
use bookstore_conformance::Stack;

/// The entry point of `tags` as its framework's binary picks it.
fn pick(tags: Tags) -> Option<ServeFn> {
    match tags.framework {
        "axum" => bookstore_any::pick::<axum_any::Axum>(tags),
        "actix-web" => bookstore_any::pick::<actix_web_any::ActixWeb>(tags),
        "hyper" => bookstore_any::pick::<hyper_any::Hyper>(tags),
        _ => None,
    }
}

#[tokio::test]
async fn all_36_triples_serve_small_json_with_their_own_name_and_tags() {
    let composed = stacks::composed();
    let axes = stacks::FRAMEWORKS.len() * stacks::SERIALIZERS.len() * stacks::ACCESSES.len();
    assert_eq!((composed.len(), axes), (36, 36));
    for info in composed {
        let serve = pick(info.tags)
            .unwrap_or_else(|| panic!("{} is not compiled in", info.identity.service));
        let t = info.tags;
        let stack = Stack::composed(*info, serve);
        let app = TestApp::spawn_with(&stack, |config| {
            config.pool.max_connections = 1;
            config.workers = 1;
            if info.db_calls == DbCalls::Blocking {
                config.blocking_threads = Some(1);
            }
        })
        .await;
        let response = app.get("/api/books/bench/small-json").await;
        assert_eq!(response.status, 200, "{}", info.identity.service);
        let body = response.json();
        assert_eq!(body["service"], info.identity.service);
        assert_eq!(
            body["tags"],
            serde_json::json!([t.framework, t.serializer, t.access, "benchmark"]),
            "{}",
            info.identity.service
        );
        // A database route too: the store behind the tag answers.
        assert_eq!(app.get("/api/books/7").await.json()["id"], 7, "{}", info.identity.service);
    }
}
