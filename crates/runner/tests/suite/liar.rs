//! A stack that lies: a proxy in front of a real stack that passes everything through but
//! the checkouts, which it answers in one of the ways a broken or dishonest service could —
//! and that the contract check before measuring cannot see (every answer is well formed).

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

use crate::proxy::{Answer, Upstream, json};

/// How the checkouts are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lie {
    /// 201 with a well-formed checkout, nothing written.
    AcknowledgeWithoutWriting,
    /// The checkout sent to the stack twice (two rows), one 201 returned.
    WriteTwice,
    /// 409 `out_of_stock` to every checkout, whatever the stock.
    RefuseEverything,
}

/// The answers of a proxy that lies `lie`.
pub(crate) struct Liar {
    lie: Lie,
    /// Checkouts acknowledged, for distinct made-up ids.
    counter: AtomicU64,
}

impl Liar {
    pub(crate) fn new(lie: Lie) -> Self {
        Self { lie, counter: AtomicU64::new(0) }
    }
}

impl Answer for Liar {
    async fn answer(&self, request: Request<Bytes>, upstream: &Upstream) -> Response<Full<Bytes>> {
        let checkout =
            request.method() == hyper::Method::POST && request.uri().path() == "/api/checkouts";
        if !checkout {
            return upstream.forward(&request).await;
        }
        let order: serde_json::Value = serde_json::from_slice(request.body()).unwrap();
        let book = order["bookId"].as_i64().unwrap();
        match self.lie {
            Lie::AcknowledgeWithoutWriting => {
                let n = self.counter.fetch_add(1, Ordering::Relaxed);
                json(
                    201,
                    format!(
                        r#"{{"id":"00000000-0000-4000-8000-{n:012}","bookId":{book},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1,"checkedOutAt":"2026-12-01T00:00:00.000000Z"}}"#
                    ),
                )
            }
            Lie::WriteTwice => {
                let first = upstream.forward(&request).await;
                let _ = upstream.forward(&request).await;
                first
            }
            Lie::RefuseEverything => json(
                409,
                format!(r#"{{"error":"out_of_stock","message":"book {book} is out of stock"}}"#),
            ),
        }
    }
}
