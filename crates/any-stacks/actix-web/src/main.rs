//! `actix-web-any` binary: the composed stack its `--serializer` and `--access` name on actix-web.

fn main() -> std::process::ExitCode {
    bookstore_any::main::<actix_web_any::ActixWeb>()
}
