//! `hyper-any` binary: the composed stack its `--serializer` and `--access` name on hyper.

fn main() -> std::process::ExitCode {
    bookstore_any::main::<hyper_any::Hyper>()
}
