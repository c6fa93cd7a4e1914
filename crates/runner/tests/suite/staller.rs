//! Stacks that are slow in time, not wrong: a proxy that freezes — holds every answer back
//! for `freeze` out of every `period`, its clock started with the proxy — and one that can
//! answer only one request at a time, each taking `per_request`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

use crate::proxy::{Answer, Upstream};

/// Holds every answer back while frozen.
pub(crate) struct Freezer {
    started: Instant,
    period: Duration,
    freeze: Duration,
}

impl Freezer {
    pub(crate) fn new(period: Duration, freeze: Duration) -> Self {
        Self { started: Instant::now(), period, freeze }
    }
}

impl Answer for Freezer {
    async fn answer(&self, request: Request<Bytes>, upstream: &Upstream) -> Response<Full<Bytes>> {
        let response = upstream.forward(&request).await;
        let into_period = self.started.elapsed().as_nanos() % self.period.as_nanos();
        let into_period = Duration::from_nanos(into_period as u64);
        if into_period < self.freeze {
            tokio::time::sleep(self.freeze - into_period).await;
        }
        response
    }
}

/// One request at a time, each `per_request` long: at most `1 / per_request` a second.
pub(crate) struct Throttle {
    gate: tokio::sync::Mutex<()>,
    per_request: Duration,
}

impl Throttle {
    pub(crate) fn new(per_request: Duration) -> Self {
        Self { gate: tokio::sync::Mutex::new(()), per_request }
    }
}

impl Answer for Throttle {
    async fn answer(&self, request: Request<Bytes>, upstream: &Upstream) -> Response<Full<Bytes>> {
        let _turn = self.gate.lock().await;
        tokio::time::sleep(self.per_request).await;
        upstream.forward(&request).await
    }
}
