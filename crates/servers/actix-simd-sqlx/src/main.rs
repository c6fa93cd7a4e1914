//! `actix-simd-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

use bookstore_app::DbCalls;

fn main() -> ExitCode {
    bookstore_app::cli::main(actix_simd_sqlx::IDENTITY, DbCalls::Async, actix_simd_sqlx::serve)
}
