//! A proxy in front of a real stack that answers each request its own way — passing it on,
//! changing the answer, or holding it back — for stacks that misbehave in ways the
//! contract check before measuring cannot see.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// How the proxy answers one request (its body read whole), with `upstream` the stack on
/// this client connection's own upstream connection.
pub(crate) trait Answer: Send + Sync + 'static {
    fn answer(
        &self,
        request: Request<Bytes>,
        upstream: &Upstream,
    ) -> impl Future<Output = Response<Full<Bytes>>> + Send;
}

/// One keep-alive connection to the stack.
pub(crate) struct Upstream {
    sender: tokio::sync::Mutex<hyper::client::conn::http1::SendRequest<Full<Bytes>>>,
}

impl Upstream {
    /// `request` passed to the stack, and its answer.
    pub(crate) async fn forward(&self, request: &Request<Bytes>) -> Response<Full<Bytes>> {
        let mut upstream = Request::builder().method(request.method()).uri(request.uri());
        for (name, value) in request.headers() {
            upstream = upstream.header(name, value);
        }
        let upstream = upstream.body(Full::new(request.body().clone())).unwrap();
        let response = self.sender.lock().await.send_request(upstream).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        Response::from_parts(parts, Full::new(body))
    }
}

/// Starts the proxy in front of `upstream` on a free port of its own thread; its address.
pub(crate) fn start(upstream: SocketAddr, answer: impl Answer) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let answer = Arc::clone(&answer);
                tokio::spawn(async move {
                    let Ok(connection) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    let Ok((sender, connection)) =
                        hyper::client::conn::http1::handshake(TokioIo::new(connection)).await
                    else {
                        return;
                    };
                    tokio::spawn(connection);
                    let upstream = Arc::new(Upstream { sender: tokio::sync::Mutex::new(sender) });
                    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                        let (answer, upstream) = (Arc::clone(&answer), Arc::clone(&upstream));
                        async move {
                            let (parts, body) = request.into_parts();
                            let body: Bytes = body.collect().await.unwrap().to_bytes();
                            let request = Request::from_parts(parts, body);
                            Ok::<_, Infallible>(answer.answer(request, &upstream).await)
                        }
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

/// A JSON answer.
pub(crate) fn json(status: u16, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}
