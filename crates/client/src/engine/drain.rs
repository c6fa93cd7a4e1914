//! The drain's end: how long requests still in flight after the window are waited for, and
//! how they are given up.
//!
//! A request sent in the window and not answered when it closes is waited for — a write
//! audit adds up everything the server was asked to do — but not for the whole request
//! timeout: a server that stopped answering would hold every run for it (a silent server
//! held `loadgen http -z 3s` for 10 s, the timeout, before this). The wait is
//! [`grace`]: twice the slowest answer the run has seen, at least [`DRAIN_GRACE_MIN`], at
//! most the request timeout. A request still in flight then is *unanswered*: counted
//! apart ([`super::LoadReport::unanswered`]), in no phase, and the client stops.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The least the drain waits for answers after the window, when the run has seen only fast
/// ones (a silent server: none). The rest follows the run itself: the slowest answers of
/// the default runs then were `aggregateReport`'s at 256 connections, 1.4–1.7 s
/// (`latency_ok_us.max_us` in `2713e02:summary/results/2026-12-04T01-00-58Z-sequential-*.json`),
/// and such a run waits twice that.
pub const DRAIN_GRACE_MIN: Duration = Duration::from_secs(1);

/// How long after the window's end a request still in flight is waited for, given the
/// slowest answer seen so far.
pub fn grace(slowest_answer: Duration, request_timeout: Duration) -> Duration {
    (slowest_answer * 2).max(DRAIN_GRACE_MIN).min(request_timeout)
}

/// What the client threads and the orchestrating thread share about the drain.
#[derive(Debug)]
pub(super) struct Drain {
    /// The slowest answer per client thread, µs (one cache line each: written only when a
    /// thread's own slowest grows, which after the first requests is rare).
    slowest_us: Vec<Slot>,
    given_up: AtomicBool,
    wake: Notify,
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Slot(AtomicU64);

impl Drain {
    pub(super) fn new(threads: usize) -> Self {
        Self {
            slowest_us: (0..threads.max(1)).map(|_| Slot::default()).collect(),
            given_up: AtomicBool::new(false),
            wake: Notify::new(),
        }
    }

    /// Thread `thread`'s slowest answer is now `latency_us`.
    pub(super) fn note_slowest(&self, thread: usize, latency_us: u64) {
        if let Some(slot) = self.slowest_us.get(thread) {
            slot.0.store(latency_us, Ordering::Relaxed);
        }
    }

    /// The slowest answer of any thread so far.
    pub(super) fn slowest(&self) -> Duration {
        let us = self.slowest_us.iter().map(|s| s.0.load(Ordering::Relaxed)).max();
        Duration::from_micros(us.unwrap_or(0))
    }

    /// Tells every client thread to stop waiting.
    pub(super) fn give_up(&self) {
        self.given_up.store(true, Ordering::Release);
        self.wake.notify_waiters();
    }

    /// Resolves once [`Self::give_up`] is called (at once if it was already).
    pub(super) async fn given_up(&self) {
        let notified = self.wake.notified();
        tokio::pin!(notified);
        // Registered before the flag is read, so a `give_up` between the two still wakes it.
        notified.as_mut().enable();
        if self.given_up.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_is_twice_the_slowest_answer_within_its_floor_and_the_timeout() {
        let timeout = Duration::from_secs(10);
        assert_eq!(grace(Duration::ZERO, timeout), DRAIN_GRACE_MIN);
        assert_eq!(grace(Duration::from_millis(40), timeout), DRAIN_GRACE_MIN);
        assert_eq!(grace(Duration::from_secs(3), timeout), Duration::from_secs(6));
        assert_eq!(grace(Duration::from_secs(8), timeout), timeout);
        // A timeout below the floor is the limit: no request outlives its timeout.
        let short = Duration::from_millis(300);
        assert_eq!(grace(Duration::ZERO, short), short);
    }

    #[test]
    fn a_thread_that_waits_after_the_give_up_is_not_left_waiting() {
        let drain = Drain::new(2);
        drain.note_slowest(0, 1_500);
        drain.note_slowest(1, 900);
        assert_eq!(drain.slowest(), Duration::from_micros(1_500));
        drain.give_up();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let waited = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), drain.given_up()).await
        });
        assert!(waited.is_ok(), "given_up() after give_up() must resolve at once");
    }
}
