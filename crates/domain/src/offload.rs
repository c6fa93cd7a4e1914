//! Where a blocking store's calls run: the hand-off from an async worker to a thread where
//! blocking is allowed. The trait lives here, beside [`crate::store::Store`], so that a
//! framework can offer its own pool (`actix_web::web::block`) without depending on the
//! blocking store, and a stack that never blocks builds neither.

use std::future::Future;

use crate::Error;

/// A place to run blocking work from async code.
pub trait Offload: Clone + Default + Send + Sync + 'static {
    /// The framework's name for it (`tokio::task::spawn_blocking`, …).
    const NAME: &'static str;

    /// Runs `work` on a thread where blocking is allowed and waits for its result without
    /// blocking the calling worker. A panic or a refusal of the pool (shutting down) is
    /// [`Error::Internal`].
    fn run<F, T>(&self, work: F) -> impl Future<Output = Result<T, Error>> + Send
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static;
}
