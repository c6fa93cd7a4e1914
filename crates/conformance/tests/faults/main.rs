//! The slower tier: how every stack behaves when things go wrong around it — the database
//! stops and starts again, the server is told to stop under load, 256 clients fight over
//! one book. Each behaviour is written once and expanded per stack by `per_stack!`.
//!
//! The outage tests start a throwaway cluster of their own (they stop it); the others use
//! a fresh clone of the shared seeded database like the main conformance suite.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bookstore_conformance::{Client, Session, Stack, TestApp, TestResponse, stacks};

/// Expands one behaviour into a test per stack. Adding a stack: one line below.
/// One `#[tokio::test]` per stack of the registry, each `check`ing it (defined where this
/// expands).
macro_rules! tests_per_stack {
    ($(($constant:ident, $krate:ident, $($rest:tt)*),)+) => {
        $(
            #[tokio::test]
            async fn $krate() {
                check(&stacks::$constant).await
            }
        )+
    };
}

macro_rules! per_stack {
    ($name:ident, |$stack:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn check($stack: &Stack) $body

            bookstore_app::for_each_stack!(tests_per_stack);
            // diesel-async and tokio-postgres, the accesses no preset has: diesel-async on
            // two frameworks (tokio's runtime, and actix's workers, whose pools run on
            // another runtime), tokio-postgres on axum.
            tests_per_stack! {
                (AXUM_SERDE_JSON_DIESEL_ASYNC, axum_serde_json_diesel_async,),
                (ACTIX_WEB_SERDE_JSON_DIESEL_ASYNC, actix_web_serde_json_diesel_async,),
                (AXUM_SERDE_JSON_TOKIO_POSTGRES, axum_serde_json_tokio_postgres,),
            }
        }
    };
}

/// One request of a load, as the client saw it.
#[derive(Debug)]
struct Sent {
    /// When it was sent, from the start of the load.
    at: Duration,
    /// How long the answer took.
    took: Duration,
    /// The answer, or why there was none.
    outcome: Result<TestResponse, String>,
}

/// `clients` tasks sending requests made by `request(client index, sequence)` on
/// keep-alive connections until stopped; a connection the server closes is reopened.
struct Load {
    stop: Arc<AtomicBool>,
    started: Instant,
    tasks: Vec<tokio::task::JoinHandle<Vec<Sent>>>,
}

impl Load {
    fn start(
        client: &Client,
        clients: usize,
        request: fn(usize, usize) -> hyper::Request<http_body_util::Full<bytes::Bytes>>,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let tasks = (0..clients)
            .map(|index| {
                let client = client.clone();
                let stop = Arc::clone(&stop);
                tokio::spawn(async move {
                    let mut sent = Vec::new();
                    let mut session: Option<Session> = None;
                    for sequence in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let at = started.elapsed();
                        let outcome = match &mut session {
                            Some(open) => open.send(request(index, sequence)).await,
                            None => match client.session().await {
                                Ok(mut open) => {
                                    let outcome = open.send(request(index, sequence)).await;
                                    session = Some(open);
                                    outcome
                                }
                                Err(error) => Err(format!("connect: {error}")),
                            },
                        };
                        if outcome.is_err() {
                            session = None;
                            // Do not spin on a refused connection.
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        sent.push(Sent { at, took: started.elapsed() - at, outcome });
                    }
                    sent
                })
            })
            .collect();
        Load { stop, started, tasks }
    }

    /// Time since the load started.
    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    async fn stop(self) -> Vec<Sent> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for task in self.tasks {
            all.extend(task.await.expect("a load task panicked"));
        }
        all.sort_by_key(|sent| sent.at);
        all
    }
}

/// The status and error code of an answer (`"-"` when it carries none).
fn status_and_code(response: &TestResponse) -> (u16, String) {
    let code = if response.status >= 400 {
        response.json()["error"].as_str().unwrap_or("-").to_owned()
    } else {
        "-".to_owned()
    };
    (response.status, code)
}

mod contention;
mod outage;
mod relay;
mod shutdown;
