//! The client engine: closed- or open-loop load with exact windows.
//!
//! `workers` threads, each running its own current-thread tokio runtime, share the virtual
//! users round-robin; each user is one task that does a request, waits for the whole
//! answer, and does the next (closed loop). With a rate, each thread instead offers its
//! share of requests at their intended times over connections opened as needed, and times
//! each from when it was due (the open loop of `open.rs`: no coordinated omission, as wrk2).
//! What a request *is* comes from a [`Client`]: an HTTP/1.1 exchange on a keep-alive
//! connection ([`HttpClient`]), or a store call for the database ceiling.
//!
//! Nothing is shared between threads while the load runs: HTTP requests are pre-built bytes
//! picked by index, responses are parsed in place from a per-connection buffer, and every
//! count and histogram belongs to one thread and is merged once at the end.
//!
//! Time is split into three phases by when a closed loop's request *completes*: warm-up,
//! measurement (histograms, timeline and throughput come only from here), and drain —
//! requests started before the measurement closed and answered after. Drained requests are
//! counted apart, so a write audit can add up everything the server was asked to do; the
//! drain ends when every request has its answer or after a grace (`drain.rs`), and what is
//! still in flight then is counted as unanswered. An
//! open loop's requests count in the phase they were *due* in, so that the window's
//! latencies are those of exactly the requests it offered, the stalled ones included; its
//! throughput is still what completed in the window.

mod closed;
pub(crate) mod conn;
mod drain;
mod exchange;
mod http_client;
mod open;
mod pacer;
pub mod picker;
mod plan;
pub mod stats;

pub use closed::{START_DELAY, run};
pub use conn::Response;
pub use drain::{DRAIN_GRACE_MIN, grace as drain_grace};
pub use exchange::{Client, Done, Workload, open_loop_grace};
pub use http_client::{HttpClient, HttpConnection, run_http};
pub use picker::Picker;
pub use plan::{Arrivals, LiveCounter, LoadPlan, Settle, WindowHooks};
pub use stats::{ErrorKind, LoadReport, OpenCounts, Outcome, Phase, PhaseCounts};
