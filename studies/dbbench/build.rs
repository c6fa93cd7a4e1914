//! Records the commit, dirty flag and rustc this binary is built from.

#[path = "../../crates/record/build_info.rs"]
mod build_info;

fn main() {
    build_info::emit();
}
