//! `axum-any` binary: the composed stack its `--serializer` and `--access` name on axum.

fn main() -> std::process::ExitCode {
    bookstore_any::main::<axum_any::Axum>()
}
