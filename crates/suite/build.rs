//! Records the commit, dirty flag and rustc this binary is built from (bookstore-build-info).

fn main() {
    bookstore_build_info::emit();
}
