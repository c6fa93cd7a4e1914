//! Ctrl-C for the long runs (`loadgen suite`, `dbbench run`): the first SIGINT or SIGTERM
//! asks the run to stop after the cell it is measuring, keeping what was measured; the
//! second exits at once (child servers die with the process: parent-death signal).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag set on the first SIGINT/SIGTERM (saying `what` happens next, as `program`); the
/// second signal exits with status 130.
pub fn stop_on_signal(program: &'static str, what: &'static str) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("signal runtime");
        runtime.block_on(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler");
            for round in 0..2 {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
                if round == 0 {
                    eprintln!("{program}: {what} (again to quit at once)");
                    flag.store(true, Ordering::Relaxed);
                } else {
                    std::process::exit(130);
                }
            }
        });
    });
    stop
}
