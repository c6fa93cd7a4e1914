//! `hyper-sonic-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stack = hyper_sonic_sqlx::STACK;
    bookstore_app::cli::main(stack.identity, stack.db_calls, hyper_sonic_sqlx::serve)
}
