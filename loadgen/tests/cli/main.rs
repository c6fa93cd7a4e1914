//! The command line as a user meets it: a misspelt stack or scenario is a usage error (exit
//! status 2) that suggests the right name, and `--help` lists the valid ones.

use std::process::{Command, Output};

use bookstore_app::stacks;
use loadgen::scenario::Scenario;

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadgen")).args(args).output().unwrap()
}

#[test]
fn a_misspelt_stack_or_scenario_is_a_usage_error_that_suggests_the_name() {
    for (args, meant) in [
        (["suite", "--stacks", "axum-serde-sqx"], "axum-serde-sqlx"),
        (["suite", "--scenarios", "bookByID"], "bookById"),
        (["http", "--scenario", "checkoutCreat"], "checkoutCreate"),
    ] {
        let output = loadgen(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("'{meant}'")), "{args:?} suggests {meant}: {stderr}");
    }
}

#[test]
fn the_suites_help_lists_every_stack_and_scenario() {
    let output = loadgen(&["suite", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for name in stacks::names().into_iter().chain(Scenario::ALL.iter().map(|s| s.name())) {
        assert!(help.contains(name), "--help lacks {name}");
    }
}
