//! `actix-serde-diesel` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stack = bookstore_app::stacks::ACTIX_SERDE_DIESEL;
    bookstore_app::cli::main(stack.identity, stack.db_calls, actix_serde_diesel::serve)
}
