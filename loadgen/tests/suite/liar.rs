//! A stack that lies: a proxy in front of a real stack that passes everything through but
//! the checkouts, which it answers in one of the ways a broken or dishonest service could —
//! and that the contract check before measuring cannot see (every answer is well formed).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

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

/// Starts the proxy in front of `upstream` on a free port of its own thread; its address.
pub(crate) fn start(upstream: SocketAddr, lie: Lie) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let counter = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    let Ok(upstream) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    let Ok((sender, connection)) =
                        hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await
                    else {
                        return;
                    };
                    tokio::spawn(connection);
                    let sender = Arc::new(tokio::sync::Mutex::new(sender));
                    let service = hyper::service::service_fn(move |request| {
                        let (sender, counter) = (Arc::clone(&sender), Arc::clone(&counter));
                        async move { Ok::<_, Infallible>(answer(request, lie, &sender, &counter).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    addr
}

type Sender = tokio::sync::Mutex<hyper::client::conn::http1::SendRequest<Full<Bytes>>>;

async fn forward(sender: &Sender, request: &Request<Bytes>) -> Response<Full<Bytes>> {
    let mut upstream = Request::builder().method(request.method()).uri(request.uri());
    for (name, value) in request.headers() {
        upstream = upstream.header(name, value);
    }
    let upstream = upstream.body(Full::new(request.body().clone())).unwrap();
    let response = sender.lock().await.send_request(upstream).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Response::from_parts(parts, Full::new(body))
}

fn json(status: u16, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

async fn answer(
    request: Request<Incoming>,
    lie: Lie,
    sender: &Sender,
    counter: &AtomicU64,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let request = Request::from_parts(parts, body.collect().await.unwrap().to_bytes());
    let checkout =
        request.method() == hyper::Method::POST && request.uri().path() == "/api/checkouts";
    if !checkout {
        return forward(sender, &request).await;
    }
    let order: serde_json::Value = serde_json::from_slice(request.body()).unwrap();
    let book = order["bookId"].as_i64().unwrap();
    match lie {
        Lie::AcknowledgeWithoutWriting => {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            json(
                201,
                format!(
                    r#"{{"id":"00000000-0000-4000-8000-{n:012}","bookId":{book},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1,"checkedOutAt":"2026-12-01T00:00:00.000000Z"}}"#
                ),
            )
        }
        Lie::WriteTwice => {
            let first = forward(sender, &request).await;
            let _ = forward(sender, &request).await;
            first
        }
        Lie::RefuseEverything => json(
            409,
            format!(r#"{{"error":"out_of_stock","message":"book {book} is out of stock"}}"#),
        ),
    }
}
