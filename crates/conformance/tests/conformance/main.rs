//! The contract of SPEC §3, checked over real HTTP against every stack.
//!
//! Each `conformance!` block is one behaviour, written once; the macro expands it into one
//! `#[tokio::test]` per stack (`<behaviour>::<stack>`), each with its own server on
//! `127.0.0.1:0` and its own freshly cloned seeded database. Every response the client
//! reads has already been checked for `Content-Type: application/json` and a correct
//! `Content-Length`. Expected values come from the seed's formulas, not from the database.

use bookstore_app::ServerConfig;
use bookstore_conformance::{
    TestApp, assert_key_order, checkout_body, expected, is_contract_timestamp, stacks,
};
use bookstore_fixture::seed;
use serde_json::{Value, json};

/// One `#[tokio::test]` per stack under test (the presets and the composed ones), each `check`ing the stack spawned with
/// `adjust` (both defined where this expands).
macro_rules! tests_per_stack {
    ($(($constant:ident, $krate:ident $($rest:tt)*),)+) => {
        $(
            #[tokio::test]
            async fn $krate() {
                check(&TestApp::spawn_with(&stacks::$constant, adjust).await).await
            }
        )+
    };
}

/// Expands one behaviour into a test per stack under test.
macro_rules! conformance {
    ($name:ident, |$app:ident| $body:block) => {
        conformance!($name, config = |_config| {}, |$app| $body);
    };
    ($name:ident, config = |$config:ident| $adjust:block, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[allow(unused_variables)]
            fn adjust($config: &mut ServerConfig) $adjust

            async fn check($app: &TestApp) $body

            bookstore_app::for_each_stack!(tests_per_stack);
            bookstore_conformance::for_each_composed_under_test!(tests_per_stack);

            /// The sample in the per-core layout: the behaviour's own configuration, then
            /// the layout.
            mod per_core {
                #[allow(unused_imports)]
                use super::*;

                fn adjust(config: &mut ServerConfig) {
                    super::adjust(config);
                    config.layout = bookstore_app::stacks::Layout::PerCore;
                    // Each worker has a blocking pool of its own in this layout: one shared
                    // by all is the other layout, which actix-web refuses to mix with it.
                    config.blocking_pool = None;
                    // A pool of its own per worker: a behaviour with fewer connections
                    // than workers runs with one worker per connection.
                    config.workers = config.workers.min(config.pool.max_connections as usize);
                }

                bookstore_conformance::for_each_per_core_under_test!(tests_per_stack);
            }
        }
    };
}

/// The stock of book `id` and its number of checkout rows, read from the database.
async fn stock_and_checkouts(app: &TestApp, id: i64) -> (i32, i64) {
    let mut db = app.db().await;
    sqlx::query_as(
        "SELECT (SELECT stock FROM books WHERE id = $1), (SELECT count(*) FROM checkouts WHERE book_id = $1)",
    )
    .bind(id)
    .fetch_one(&mut db)
    .await
    .expect("read stock and checkouts")
}

mod checkouts;
mod composed;
mod cross_stack;
mod hostile;
mod reads;
mod request_errors;
