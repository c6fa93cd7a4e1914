//! `axum-serde-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stack = axum_serde_sqlx::STACK;
    bookstore_app::cli::main(stack.identity, stack.db_calls, axum_serde_sqlx::serve)
}
