//! The open loop's clock: waits until an instant to within tens of microseconds.
//!
//! tokio's timer rounds every deadline up to its next millisecond tick, so a request due at
//! 10.2 ms goes out at 11 ms: an open loop on it is up to a millisecond late on every
//! request, and since latency counts from the intended send, that millisecond lands in
//! every figure — more than a fast stack's whole answer (the responder's, `ceilings.http[]`
//! `latency_ok_us` in the run `2713e02:summary/results/2026-12-01T18-45-30Z.json`). A Linux
//! timerfd armed for the exact remaining time and polled through the runtime's own epoll
//! wakes the thread on time instead; what lateness is left is the client's own — a busy
//! thread, and the wake-up itself, which the thread's timer slack does not shorten — and
//! the open loop records it as its send lag (`open_loop.send_lag_us` of every equal-load
//! window, `stacks[].equal_load[]` in the same file).

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Instant;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

/// A timerfd, as tokio's reactor wants it.
struct Timer(TimerFd);

impl AsRawFd for Timer {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// One client thread's precise clock (inside its runtime).
pub(super) struct Pacer {
    timer: AsyncFd<Timer>,
}

impl Pacer {
    pub(super) fn new() -> std::io::Result<Self> {
        let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
        let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, flags)?;
        #[allow(unsafe_code)]
        // SAFETY: a `TimerFd` owns its file descriptor: it is open, and `as_raw_fd` returns
        // that same descriptor, until the timer is dropped — which only happens when this
        // `AsyncFd` is.
        let registered = unsafe { AsyncFd::register(Timer(timer)) };
        Ok(Self { timer: registered.map_err(std::io::Error::from)? })
    }

    /// Returns at `deadline` (at once if it has passed).
    pub(super) async fn until(&self, deadline: Instant) -> std::io::Result<()> {
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Ok(());
            }
            // Relative: std's Instant is CLOCK_MONOTONIC but opaque. Arming anew also
            // discards an expiry of an earlier deadline not yet read.
            let expiration = Expiration::OneShot(TimeSpec::from_duration(remaining));
            self.timer.get_ref().0.set(expiration, TimerSetTimeFlags::empty())?;
            let mut ready = self.timer.readable().await?;
            // The expiry count (8 bytes); `WouldBlock` when the readiness was stale.
            let _ = ready.try_io(|timer| timer.get_ref().0.wait().map_err(std::io::Error::from));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_pacer_never_returns_before_its_deadline() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let pacer = Pacer::new().unwrap();
            for micros in [0, 150, 900, 2_500] {
                let deadline = Instant::now() + Duration::from_micros(micros);
                pacer.until(deadline).await.unwrap();
                assert!(Instant::now() >= deadline, "{micros} µs");
            }
            // A deadline that has passed returns at once.
            pacer.until(Instant::now() - Duration::from_millis(1)).await.unwrap();
        });
    }
}
