//! Counts, latency histograms and the timeline: kept per client thread, merged once.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

/// Largest latency a histogram holds, in µs (a minute: beyond any request timeout).
const HISTOGRAM_MAX_US: u64 = 60_000_000;
/// Validation problems kept per thread (the first ones say enough).
const PROBLEMS_KEPT: usize = 5;

/// How one request ended (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The expected success with a valid body.
    Ok,
    /// An expected business refusal (409 `out_of_stock` in checkout scenarios).
    Rejected,
    /// Anything else: an error, of this kind.
    Error(ErrorKind),
}

/// Why a request counts as an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// A status the scenario does not expect.
    Status,
    /// The expected status with a body that fails the check.
    InvalidBody,
    /// No complete response within the request timeout.
    Timeout,
    /// The connection could not be opened.
    Connect,
    /// The connection broke while sending or reading.
    Io,
    /// Not a parsable HTTP/1.1 response with a Content-Length.
    InvalidResponse,
}

impl ErrorKind {
    /// Every kind, in report order.
    pub const ALL: [ErrorKind; 6] = [
        ErrorKind::Status,
        ErrorKind::InvalidBody,
        ErrorKind::Timeout,
        ErrorKind::Connect,
        ErrorKind::Io,
        ErrorKind::InvalidResponse,
    ];

    /// The name used in results.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Status => "status",
            ErrorKind::InvalidBody => "invalid_body",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connect => "connect",
            ErrorKind::Io => "io",
            ErrorKind::InvalidResponse => "invalid_response",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// When a response completed, relative to the windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the measurement.
    Warmup,
    /// Inside the measurement window.
    Measure,
    /// Sent before the window closed, answered after.
    Drain,
}

/// Counts of one phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseCounts {
    /// Requests that ended [`Outcome::Ok`].
    pub ok: u64,
    /// Requests that ended [`Outcome::Rejected`].
    pub rejected: u64,
    /// Errors by kind, indexed like [`ErrorKind::ALL`].
    pub errors: [u64; 6],
    /// Responses by HTTP status (responses only: connect errors and timeouts have none).
    pub by_status: BTreeMap<u16, u64>,
}

impl PhaseCounts {
    /// Errors of every kind together.
    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Every completed request.
    pub fn total(&self) -> u64 {
        self.ok + self.rejected + self.error_total()
    }

    /// Errors of `kind`.
    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors[kind.index()]
    }

    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Rejected => self.rejected += 1,
            Outcome::Error(kind) => self.errors[kind.index()] += 1,
        }
    }

    fn merge(&mut self, other: &PhaseCounts) {
        self.ok += other.ok;
        self.rejected += other.rejected;
        for (mine, theirs) in self.errors.iter_mut().zip(other.errors) {
            *mine += theirs;
        }
        for (status, count) in &other.by_status {
            *self.by_status.entry(*status).or_default() += count;
        }
    }
}

/// One second of the measurement.
#[derive(Debug, Clone)]
pub struct Second {
    /// Successes completed in this second.
    pub ok: u64,
    /// Refusals completed in this second.
    pub rejected: u64,
    /// Errors completed in this second.
    pub errors: u64,
    /// Latency of this second's successes, µs.
    pub latency_ok_us: Histogram<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, 3).expect("valid histogram bounds")
}

/// What one client thread saw.
#[derive(Debug)]
pub(crate) struct WorkerStats {
    phases: [PhaseCounts; 3],
    status_counts: [[u64; 600]; 3],
    latency_ok_us: Histogram<u64>,
    latency_rejected_us: Histogram<u64>,
    in_flight_us: u64,
    timeline: Vec<Second>,
    problems: Vec<String>,
    rejected_picks: BTreeMap<usize, [u64; 3]>,
    send_lag_us: Histogram<u64>,
    connections_peak: usize,
    cap_hit: bool,
    open: OpenCounts,
    /// Requests sent and not yet ended; when the drain gives up, the unanswered.
    in_flight: u64,
    /// The slowest answer so far, µs (the drain's grace follows it).
    slowest_answer_us: u64,
}

/// What only an open loop counts (its phase counts go by when requests were due).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenCounts {
    /// Answers of any kind (successes and refusals; not errors) that came while the window
    /// was open, whenever they were due: the throughput.
    pub answers: u64,
    /// The successes among them: the goodput.
    pub ok: u64,
    /// Requests due in the window answered by its end plus the grace
    /// ([`super::open_loop_grace`]): the server kept up with these.
    pub in_time: u64,
    /// Requests due in the window still waiting in the client when the grace ran out: not
    /// sent (a server that far behind is saturated, and its queue is not worth waiting for).
    pub dropped: u64,
}

impl WorkerStats {
    pub(crate) fn new(window: Duration) -> Self {
        let seconds = window.as_secs_f64().ceil().max(1.0) as usize;
        Self {
            phases: Default::default(),
            status_counts: [[0; 600]; 3],
            latency_ok_us: histogram(),
            latency_rejected_us: histogram(),
            in_flight_us: 0,
            timeline: (0..seconds)
                .map(|_| Second { ok: 0, rejected: 0, errors: 0, latency_ok_us: histogram() })
                .collect(),
            problems: Vec::new(),
            rejected_picks: BTreeMap::new(),
            send_lag_us: histogram(),
            connections_peak: 0,
            cap_hit: false,
            open: OpenCounts::default(),
            in_flight: 0,
            slowest_answer_us: 0,
        }
    }

    /// A request went out.
    #[inline]
    pub(crate) fn note_sent(&mut self) {
        self.in_flight += 1;
    }

    /// A request ended: answered, failed or timed out.
    #[inline]
    pub(crate) fn note_ended(&mut self) {
        self.in_flight -= 1;
    }

    /// An answer took `latency_us`; whether it is this thread's slowest yet.
    #[inline]
    pub(crate) fn note_answer_us(&mut self, latency_us: u64) -> bool {
        let slowest = latency_us > self.slowest_answer_us;
        if slowest {
            self.slowest_answer_us = latency_us;
        }
        slowest
    }

    /// An open loop's request due in `due` ended in `finished` (by the clock), in time or
    /// not (see [`OpenCounts::in_time`]).
    pub(crate) fn note_finished(
        &mut self,
        due: Phase,
        finished: Phase,
        outcome: Outcome,
        in_time: bool,
    ) {
        let answered = matches!(outcome, Outcome::Ok | Outcome::Rejected);
        if finished == Phase::Measure {
            self.open.answers += u64::from(answered);
            self.open.ok += u64::from(outcome == Outcome::Ok);
        }
        if due == Phase::Measure {
            self.open.in_time += u64::from(answered && in_time);
        }
    }

    /// `count` requests due in the window were dropped unsent.
    pub(crate) fn note_dropped(&mut self, count: u64) {
        self.open.dropped += count;
    }

    /// How late the open loop's scheduler put a request on its queue (the client's own
    /// lateness, not the server's), for requests due in the window.
    pub(crate) fn record_send_lag(&mut self, phase: Phase, late: Duration) {
        if phase == Phase::Measure {
            self.send_lag_us
                .saturating_record((late.as_micros() as u64).clamp(1, HISTOGRAM_MAX_US));
        }
    }

    /// The open loop now has `open` connections.
    pub(crate) fn note_connections(&mut self, open: usize) {
        self.connections_peak = self.connections_peak.max(open);
    }

    /// A request due in `phase` found every connection busy and the cap reached.
    pub(crate) fn note_cap_hit(&mut self, phase: Phase) {
        self.cap_hit |= phase == Phase::Measure;
    }

    /// Which request was refused, for the audit to check that its book really was out of
    /// stock (a refusal is rare outside the sold-out scenario: no cost on the hot path).
    pub(crate) fn note_rejected(&mut self, phase: Phase, pick: usize) {
        self.rejected_picks.entry(pick).or_default()[phase as usize] += 1;
    }

    /// Records one completed request; `second` is its index in the measurement timeline.
    /// `in_window_us` is the part of its time in flight that fell inside the window.
    #[inline]
    pub(crate) fn record(
        &mut self,
        phase: Phase,
        second: usize,
        outcome: Outcome,
        latency_us: u64,
        in_window_us: u64,
    ) {
        self.phases[phase as usize].add(outcome);
        self.in_flight_us += in_window_us;
        if phase != Phase::Measure {
            return;
        }
        let latency = latency_us.clamp(1, HISTOGRAM_MAX_US);
        let slot = self.timeline.get_mut(second);
        match outcome {
            Outcome::Ok => {
                self.latency_ok_us.saturating_record(latency);
                if let Some(slot) = slot {
                    slot.ok += 1;
                    slot.latency_ok_us.saturating_record(latency);
                }
            }
            Outcome::Rejected => {
                self.latency_rejected_us.saturating_record(latency);
                if let Some(slot) = slot {
                    slot.rejected += 1;
                }
            }
            Outcome::Error(_) => {
                if let Some(slot) = slot {
                    slot.errors += 1;
                }
            }
        }
    }

    /// Records the status of a response.
    #[inline]
    pub(crate) fn record_status(&mut self, phase: Phase, status: u16) {
        if let Some(count) = self.status_counts[phase as usize].get_mut(usize::from(status)) {
            *count += 1;
        }
    }

    /// Keeps the first few validation problems.
    pub(crate) fn note_invalid(&mut self, problem: String) {
        if self.problems.len() < PROBLEMS_KEPT {
            self.problems.push(problem);
        }
    }
}

/// Everything the client saw during one run, merged over its threads.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// The measurement window as it was (the planned one, or longer when it settled).
    pub window: Duration,
    /// From the start of the load to the window: the warm-up as it was.
    pub warmup_elapsed: Duration,
    /// Counts while warming up.
    pub warmup: PhaseCounts,
    /// Counts inside the measurement window.
    pub measure: PhaseCounts,
    /// Counts of requests sent in the window and answered after it.
    pub drain: PhaseCounts,
    /// Latency of successes in the window, µs.
    pub latency_ok_us: Histogram<u64>,
    /// Latency of refusals in the window, µs.
    pub latency_rejected_us: Histogram<u64>,
    /// Time requests spent in flight inside the window, summed over requests, µs.
    pub in_flight_us: u64,
    /// The window second by second.
    pub timeline: Vec<Second>,
    /// The first validation problems, for the report.
    pub problems: Vec<String>,
    /// The run was stopped before the window closed (Ctrl-C).
    pub stopped_early: bool,
    /// Refusals by request pick: how many in the warm-up, the window and the drain.
    pub rejected_picks: BTreeMap<usize, [u64; 3]>,
    /// A settled warm-up that reached its longest first: how many connections had an answer.
    pub unsettled_warmup: Option<u64>,
    /// A settled window that reached its longest before holding its answers.
    pub window_capped: bool,
    /// Open loop: how late the client's scheduler was against the schedule, µs (requests
    /// due in the window).
    pub send_lag_us: Histogram<u64>,
    /// Open loop: the most connections open at once (summed over the client threads).
    pub connections_peak: usize,
    /// Open loop: a request due in the window found every connection busy at the cap.
    pub cap_hit: bool,
    /// What only an open loop counts (`None` for a closed loop).
    pub open: Option<OpenCounts>,
    /// Requests sent (in the warm-up or the window) still without an answer when the drain
    /// ended ([`super::drain_grace`] after the window): counted in no phase.
    pub unanswered: u64,
    /// From the window's end until the client stopped waiting for answers.
    pub drain_elapsed: Duration,
}

impl LoadReport {
    /// An empty report of a `window`, as a window in which nothing was answered reads.
    pub fn new(window: Duration) -> Self {
        let empty = WorkerStats::new(window);
        Self {
            window,
            warmup_elapsed: Duration::ZERO,
            warmup: PhaseCounts::default(),
            measure: PhaseCounts::default(),
            drain: PhaseCounts::default(),
            latency_ok_us: empty.latency_ok_us,
            latency_rejected_us: empty.latency_rejected_us,
            in_flight_us: 0,
            timeline: empty.timeline,
            problems: Vec::new(),
            stopped_early: false,
            rejected_picks: BTreeMap::new(),
            unsettled_warmup: None,
            window_capped: false,
            send_lag_us: empty.send_lag_us,
            connections_peak: 0,
            cap_hit: false,
            open: None,
            unanswered: 0,
            drain_elapsed: Duration::ZERO,
        }
    }

    pub(crate) fn merge(&mut self, mut worker: WorkerStats) {
        for (phase, statuses) in worker.phases.iter_mut().zip(worker.status_counts.iter()) {
            for (status, count) in statuses.iter().enumerate().filter(|(_, count)| **count > 0) {
                phase.by_status.insert(status as u16, *count);
            }
        }
        let [warmup, measure, drain] = &worker.phases;
        self.warmup.merge(warmup);
        self.measure.merge(measure);
        self.drain.merge(drain);
        self.latency_ok_us.add(&worker.latency_ok_us).expect("same histogram bounds");
        self.latency_rejected_us.add(&worker.latency_rejected_us).expect("same histogram bounds");
        self.in_flight_us += worker.in_flight_us;
        for (mine, theirs) in self.timeline.iter_mut().zip(&worker.timeline) {
            mine.ok += theirs.ok;
            mine.rejected += theirs.rejected;
            mine.errors += theirs.errors;
            mine.latency_ok_us.add(&theirs.latency_ok_us).expect("same histogram bounds");
        }
        for problem in worker.problems {
            if self.problems.len() < PROBLEMS_KEPT {
                self.problems.push(problem);
            }
        }
        self.send_lag_us.add(&worker.send_lag_us).expect("same histogram bounds");
        self.connections_peak += worker.connections_peak;
        self.cap_hit |= worker.cap_hit;
        self.unanswered += worker.in_flight;
        if let Some(open) = &mut self.open {
            open.answers += worker.open.answers;
            open.ok += worker.open.ok;
            open.in_time += worker.open.in_time;
            open.dropped += worker.open.dropped;
        }
        for (pick, counts) in worker.rejected_picks {
            let mine = self.rejected_picks.entry(pick).or_default();
            for (mine, theirs) in mine.iter_mut().zip(counts) {
                *mine += theirs;
            }
        }
    }

    /// Every response completed in the window per second (an open loop's answers only:
    /// its errors include requests that never left the client).
    pub fn throughput_rps(&self) -> f64 {
        let completed = self.open.map_or(self.measure.total(), |a| a.answers);
        self.per_second(completed)
    }

    /// `count` per second of the window; 0 for a window that never opened (stopped during
    /// the warm-up).
    fn per_second(&self, count: u64) -> f64 {
        let seconds = self.window.as_secs_f64();
        if seconds > 0.0 { count as f64 / seconds } else { 0.0 }
    }

    /// Successes completed in the window per second.
    pub fn goodput_rps(&self) -> f64 {
        let ok = self.open.map_or(self.measure.ok, |a| a.ok);
        self.per_second(ok)
    }

    /// Mean requests in flight during the window: the time every request spent in flight
    /// inside the window, divided by the window — the exact time average, where Little's law
    /// (throughput × mean latency) is its steady-state estimate and errs at the window's
    /// edges when latency is a sizeable part of the window.
    pub fn mean_in_flight(&self) -> f64 {
        self.in_flight_us as f64 / self.window.as_micros().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> WorkerStats {
        WorkerStats::new(Duration::from_secs(3))
    }

    #[test]
    fn only_the_measurement_window_feeds_histograms_and_timeline() {
        let mut s = stats();
        s.record(Phase::Warmup, 0, Outcome::Ok, 100, 0);
        s.record(Phase::Measure, 1, Outcome::Ok, 200, 200);
        s.record(Phase::Drain, 0, Outcome::Ok, 300, 100);
        assert_eq!(s.latency_ok_us.len(), 1);
        assert_eq!(s.latency_ok_us.max(), 200);
        assert_eq!((s.timeline[0].ok, s.timeline[1].ok), (0, 1));
        assert_eq!(
            (s.phases[0].ok, s.phases[1].ok, s.phases[2].ok),
            (1, 1, 1),
            "every phase is counted"
        );
    }

    #[test]
    fn outcomes_are_counted_apart_and_refusals_have_their_own_histogram() {
        let mut s = stats();
        s.record(Phase::Measure, 0, Outcome::Ok, 10, 10);
        s.record(Phase::Measure, 0, Outcome::Rejected, 20, 20);
        s.record(Phase::Measure, 0, Outcome::Error(ErrorKind::Timeout), 30, 30);
        s.record(Phase::Measure, 0, Outcome::Error(ErrorKind::Status), 40, 40);
        let measure = &s.phases[1];
        assert_eq!((measure.ok, measure.rejected, measure.error_total()), (1, 1, 2));
        assert_eq!(measure.errors_of(ErrorKind::Timeout), 1);
        assert_eq!((s.latency_ok_us.len(), s.latency_rejected_us.len()), (1, 1));
        assert_eq!(s.in_flight_us, 100, "errors were in flight too");
    }

    #[test]
    fn merging_threads_adds_counts_histograms_and_seconds() {
        let mut report = LoadReport::new(Duration::from_secs(2));
        for latency in [100, 300] {
            let mut s = WorkerStats::new(Duration::from_secs(2));
            s.record(Phase::Measure, 1, Outcome::Ok, latency, latency);
            s.record_status(Phase::Measure, 200);
            s.record(Phase::Drain, 0, Outcome::Rejected, 5, 5);
            report.merge(s);
        }
        assert_eq!(report.measure.ok, 2);
        assert_eq!(report.drain.rejected, 2);
        assert_eq!(report.measure.by_status[&200], 2);
        assert_eq!(report.latency_ok_us.len(), 2);
        assert_eq!(report.latency_ok_us.max(), 300);
        assert_eq!(report.timeline[1].ok, 2);
        assert_eq!(report.timeline[1].latency_ok_us.len(), 2);
    }

    #[test]
    fn rates_and_requests_in_flight_come_from_the_window() {
        let mut report = LoadReport::new(Duration::from_secs(2));
        let mut s = WorkerStats::new(Duration::from_secs(2));
        for _ in 0..1000 {
            s.record(Phase::Measure, 0, Outcome::Ok, 4_000, 4_000); // 4 ms each, all inside
        }
        s.record(Phase::Measure, 0, Outcome::Error(ErrorKind::Io), 0, 0);
        // Started in the warm-up, 1 ms of it inside the window; answered in the drain, 3 ms inside.
        s.record(Phase::Measure, 0, Outcome::Ok, 5_000, 1_000);
        s.record(Phase::Drain, 0, Outcome::Ok, 5_000, 3_000);
        report.merge(s);
        assert_eq!(report.throughput_rps(), 501.0);
        assert_eq!(report.goodput_rps(), 500.5);
        // (1000 × 4 ms + 1 ms + 3 ms) in a 2 s window: on average 2.002 in flight.
        assert!((report.mean_in_flight() - 2.002).abs() < 1e-9);
    }
}
