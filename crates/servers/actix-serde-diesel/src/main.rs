//! `actix-serde-diesel` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stack = actix_serde_diesel::STACK;
    bookstore_app::cli::main(stack.identity, stack.db_calls, actix_serde_diesel::serve)
}
