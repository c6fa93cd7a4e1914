//! What the suite is doing: a bar with the current cell and its live rate on a terminal,
//! one plain line per finished cell otherwise (`crate::console::progress`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bookstore_client::engine::LiveCounter;
use bookstore_record::results::Cell;

/// Progress of a suite run.
pub struct Progress {
    bar: crate::console::progress::Progress,
}

impl Progress {
    /// Progress over `cells` cells; a bar only when stderr is a terminal.
    pub fn new(cells: u64) -> Self {
        Self { bar: crate::console::progress::Progress::new(cells) }
    }

    /// A line above the bar (or on stderr).
    pub fn note(&self, line: &str) {
        self.bar.note(line);
    }

    /// Shows `label` with the live rate of `live` until the returned guard is dropped.
    pub fn running(&self, label: String, live: Arc<LiveCounter>) -> Ticker {
        if !self.bar.is_drawn() {
            return Ticker { stop: None };
        }
        let bar = self.bar.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let (mut last_total, mut last_time) = (live.total(), Instant::now());
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(500));
                let (total, now) = (live.total(), Instant::now());
                let rate = (total - last_total) as f64 / (now - last_time).as_secs_f64();
                bar.set_message(format!("{label}  {rate:>9.0} req/s"));
                (last_total, last_time) = (total, now);
            }
        });
        Ticker { stop: Some((stop, thread)) }
    }

    /// One cell is done.
    pub fn finished(&self, label: &str, cell: &Cell) {
        self.bar.finished(&format!(
            "{label:<48} {:>9.0} req/s  {:>9.0} ok/s  p99 {:>7} µs  errors {}",
            cell.throughput_rps,
            cell.goodput_rps,
            cell.latency_ok_us.map_or(0, |l| l.p99_us),
            cell.counts.errors
        ));
    }

    /// Cells planned beyond those counted at the start (rounds where they are needed).
    pub fn added(&self, cells: u64) {
        self.bar.added(cells);
    }

    /// Cells that will not run (a stack that failed or crashed).
    pub fn skipped(&self, cells: u64) {
        self.bar.skipped(cells);
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish();
    }
}

/// Stops the live display when dropped.
pub struct Ticker {
    stop: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.stop.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
        }
    }
}
