//! CPU counters of the server, PostgreSQL and the client, read at the window's edges.

use crate::engine::WindowHooks;
use crate::procfs;
use crate::results::CpuSeconds;

/// Reads CPU counters at the window's edges.
pub(crate) struct CpuSampler {
    server_pid: Option<u32>,
    postgres_pid: Option<u32>,
    start: (Option<f64>, Option<f64>, f64),
    end: (Option<f64>, Option<f64>, f64),
    /// When the window opened, by the wall clock (shards compare theirs).
    pub(crate) window_started_unix_seconds: f64,
}

impl CpuSampler {
    pub(crate) fn new(server_pid: Option<u32>, postgres_pid: Option<u32>) -> Self {
        Self {
            server_pid,
            postgres_pid,
            start: (None, None, 0.0),
            end: (None, None, 0.0),
            window_started_unix_seconds: 0.0,
        }
    }

    fn read(&self) -> (Option<f64>, Option<f64>, f64) {
        (
            self.server_pid.and_then(procfs::cpu_seconds),
            self.postgres_pid.and_then(procfs::tree_cpu_seconds),
            procfs::own_cpu_seconds(),
        )
    }

    /// CPU time each spent over the window.
    pub(crate) fn seconds(&self) -> CpuSeconds {
        let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        CpuSeconds {
            server: delta(self.start.0, self.end.0),
            postgres: delta(self.start.1, self.end.1),
            client: self.end.2 - self.start.2,
        }
    }
}

impl WindowHooks for CpuSampler {
    fn measure_started(&mut self) {
        self.start = self.read();
        self.window_started_unix_seconds = super::shard::unix_seconds(std::time::SystemTime::now());
    }
    fn measure_ended(&mut self) {
        self.end = self.read();
    }
}
