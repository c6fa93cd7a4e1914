//! `actix-simd-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stack = actix_simd_sqlx::STACK;
    bookstore_app::cli::main(stack.identity, stack.db_calls, actix_simd_sqlx::serve)
}
