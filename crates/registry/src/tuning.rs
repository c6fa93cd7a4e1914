//! What a measuring harness sets on every stack it starts, and the listen backlog every
//! stack binds with (SPEC §1 parity).

use crate::identity::DbCalls;

/// The long names of the flags a harness sets on every stack it starts ([`Tuning`]),
/// written once: clap below and [`Tuning`] both take them from here.
pub mod flags {
    /// `--pool-max`.
    pub const POOL_MAX: &str = "pool-max";
    /// `--workers`.
    pub const WORKERS: &str = "workers";
    /// `--blocking-threads`.
    pub const BLOCKING_THREADS: &str = "blocking-threads";
    /// `--serializer`, of a composed stack's binary.
    pub const SERIALIZER: &str = "serializer";
    /// `--access`, of a composed stack's binary.
    pub const ACCESS: &str = "access";
    /// `--layout`: the framework's own runtime layout, or `per-core`.
    pub const LAYOUT: &str = "layout";
}

/// What a measuring harness (the suite, `loadgen faults`) sets on every stack it starts:
/// the pool's size, the runtime's workers, and for a blocking stack its blocking threads.
/// A variant's own flags override them ([`Tuning::overridden_by`]), so a page reads a
/// party's pool from the same place the party was started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// `--pool-max`.
    pub pool_max: u32,
    /// `--workers`.
    pub workers: usize,
    /// `--blocking-threads` (blocking stacks only).
    pub blocking_threads: usize,
}

impl Tuning {
    /// The flags to start a stack whose database calls are `calls` with.
    pub fn args(&self, calls: DbCalls) -> Vec<String> {
        let mut args = vec![
            format!("--{}", flags::POOL_MAX),
            self.pool_max.to_string(),
            format!("--{}", flags::WORKERS),
            self.workers.to_string(),
        ];
        if calls == DbCalls::Blocking {
            args.extend([
                format!("--{}", flags::BLOCKING_THREADS),
                self.blocking_threads.to_string(),
            ]);
        }
        args
    }

    /// This tuning with whatever `args` (a variant's own `--flag value` pairs, given after
    /// the harness's, so they win) set instead; values that do not parse are left to the
    /// server to refuse.
    pub fn overridden_by(mut self, args: &[String]) -> Self {
        for pair in args.chunks(2) {
            let (Some(name), Some(value)) = (pair[0].strip_prefix("--"), pair.get(1)) else {
                continue;
            };
            match name {
                flags::POOL_MAX => self.pool_max = value.parse().unwrap_or(self.pool_max),
                flags::WORKERS => self.workers = value.parse().unwrap_or(self.workers),
                flags::BLOCKING_THREADS => {
                    self.blocking_threads = value.parse().unwrap_or(self.blocking_threads)
                }
                _ => {}
            }
        }
        self
    }
}

/// The listen backlog of every stack: the connections the kernel completes before the
/// server accepts them. `std::net::TcpListener::bind` asks for 128; a client opening 256
/// connections at once then has the rest of its SYNs dropped, and they come back after
/// TCP's 1 s retransmission timeout. tokio's and actix's own `bind` ask for 1024 and 2048:
/// 1024 is what an ordinary service built on these crates gets (the kernel caps it at
/// `net.core.somaxconn`).
pub const LISTEN_BACKLOG: i32 = 1024;
