//! `docker-compose.yml`, the `Dockerfile` and `.dockerignore` against the stacks this
//! workspace builds (SPEC §1). No Docker engine runs where this project is developed, so
//! these checks (and `docker-compose config` in CI, when it installs) are what keeps the
//! Docker path from drifting: a renamed stack, a port or an environment variable that no
//! longer matches, a second copy of the schema.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use bookstore_app::stacks;
use yaml_rust2::{Yaml, YamlLoader};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compose() -> Yaml {
    let mut docs = YamlLoader::load_from_str(&read("docker-compose.yml")).expect("valid YAML");
    assert_eq!(docs.len(), 1, "one document");
    docs.remove(0)
}

/// A scalar as text, whatever YAML typed it as (`2`, `"2"`, `2.0`).
fn scalar(value: &Yaml) -> String {
    match value {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn strings(value: &Yaml) -> Vec<String> {
    value.as_vec().unwrap_or_else(|| panic!("not a list: {value:?}")).iter().map(scalar).collect()
}

/// `environment:` as a map (the file uses the map form).
fn environment(service: &Yaml) -> BTreeMap<String, String> {
    service["environment"]
        .as_hash()
        .expect("environment as a map")
        .iter()
        .map(|(k, v)| (scalar(k), scalar(v)))
        .collect()
}

#[test]
fn every_stack_is_a_service_on_its_spec_port_with_the_same_environment_and_limits() {
    let doc = compose();
    let mut shared: Option<(BTreeMap<String, String>, String, String)> = None;
    for stack in stacks::ALL {
        let name = stack.identity.service;
        let port = stack.identity.default_port;
        let service = &doc["services"][name];
        assert!(!service.is_badvalue(), "no service {name}");
        assert_eq!(service["build"]["args"]["STACK"].as_str(), Some(name), "{name}: STACK");
        assert_eq!(service["build"]["context"].as_str(), Some("."), "{name}: build context");
        // Published on loopback only: load is sent to 127.0.0.1 (SPEC §1 ports).
        assert_eq!(strings(&service["ports"]), [format!("127.0.0.1:{port}:{port}")], "{name}");
        let mut env = environment(service);
        assert_eq!(env.remove("BIND"), Some(format!("0.0.0.0:{port}")), "{name}: BIND");
        assert_eq!(env.get("DB_POOL_MAX").map(String::as_str), Some("32"), "{name}");
        let url = env.get("DATABASE_URL").unwrap_or_else(|| panic!("{name}: DATABASE_URL"));
        assert!(url.starts_with("postgres://") && url.contains("@postgres:5432/"), "{url}");
        assert_eq!(
            service["depends_on"]["postgres"]["condition"].as_str(),
            Some("service_healthy")
        );
        let cpus = scalar(&service["cpus"]);
        let memory = scalar(&service["mem_limit"]);
        // A container sees the host's CPU count: the worker count must follow the limit.
        assert_eq!(env.get("WORKERS").map(|w| w.parse::<f64>().unwrap()), cpus.parse().ok());
        let this = (env, cpus, memory);
        match &shared {
            None => shared = Some(this),
            Some(first) => assert_eq!(&this, first, "{name} differs from the first stack"),
        }
    }
    let names: Vec<String> =
        doc["services"].as_hash().expect("services").keys().map(scalar).collect();
    let expected = stacks::ALL.len() + 2; // and postgres, loadgen
    assert_eq!(names.len(), expected, "services: {names:?}");
}

#[test]
fn the_loadgen_service_runs_the_suite_against_every_stack_of_the_file() {
    let doc = compose();
    let loadgen = &doc["services"]["loadgen"];
    // Only on demand: `docker compose up` alone starts the stacks, not a benchmark.
    assert_eq!(strings(&loadgen["profiles"]), ["loadgen"]);
    assert_eq!(loadgen["build"]["args"]["STACK"].as_str(), Some("loadgen"));
    let command = strings(&loadgen["command"]);
    assert_eq!(command[0], "suite");
    let value_of = |flag: &str| {
        let at = command.iter().position(|arg| arg == flag).unwrap_or_else(|| panic!("{flag}"));
        command[at + 1].clone()
    };
    let expected: Vec<String> = stacks::ALL
        .iter()
        .map(|s| format!("{0}=http://{0}:{1}", s.identity.service, s.identity.default_port))
        .collect();
    assert_eq!(value_of("--targets").split(',').collect::<Vec<_>>(), expected);
    // The database the stacks use, reached inside the compose network.
    let stack_url = environment(&doc["services"][stacks::ALL[0].identity.service])
        .remove("DATABASE_URL")
        .unwrap();
    assert_eq!(value_of("--database-url"), stack_url);
    assert_eq!(value_of("--bin-dir"), "/usr/local/bin", "where the image puts the binaries");
    for stack in stacks::ALL {
        assert!(!loadgen["depends_on"][stack.identity.service].is_badvalue());
    }
    assert_eq!(loadgen["depends_on"]["postgres"]["condition"].as_str(), Some("service_healthy"));
}

#[test]
fn the_database_is_postgres_17_seeded_from_the_one_sql_source_with_statements_tracked() {
    let doc = compose();
    let postgres = &doc["services"]["postgres"];
    // The fixture's container image and its clusters' locale: byte-order collation, so
    // sort order and comparisons are those the tests and the suite's own servers have.
    let (name, tag) = bookstore_fixture::container::IMAGE;
    assert_eq!(postgres["image"].as_str().unwrap(), format!("{name}:{tag}"));
    assert_eq!(tag, "17");
    assert_eq!(
        environment(postgres)["POSTGRES_INITDB_ARGS"],
        bookstore_fixture::cluster::INITDB_LOCALE_ARGS.join(" ")
    );
    let command = strings(&postgres["command"]).join(" ");
    assert!(command.contains("shared_preload_libraries=pg_stat_statements"), "{command}");
    // Five pools of 32 connections, plus the load generator's own.
    let max_connections: u32 = command
        .split_whitespace()
        .find_map(|arg| arg.strip_prefix("max_connections="))
        .expect("max_connections set")
        .parse()
        .unwrap();
    assert!(max_connections >= 5 * 32 + 50, "max_connections={max_connections}");
    assert!(!postgres["healthcheck"]["test"].is_badvalue(), "a healthcheck");

    // The init scripts run in file-name order: extension, schema, seed — each mounted from
    // the file the fixture itself uses, never a copy.
    let mut mounts: Vec<(String, String)> = strings(&postgres["volumes"])
        .iter()
        .map(|m| {
            let parts: Vec<&str> = m.split(':').collect();
            (parts[1].to_owned(), parts[0].to_owned())
        })
        .filter(|(target, _)| target.starts_with("/docker-entrypoint-initdb.d/"))
        .collect();
    mounts.sort();
    let sources: Vec<&str> = mounts.iter().map(|(_, source)| source.as_str()).collect();
    assert_eq!(
        sources,
        [
            "./docker/00-pg-stat-statements.sql",
            "./crates/fixture/sql/schema.sql",
            "./crates/fixture/sql/seed.sql"
        ]
    );
    for source in sources {
        assert!(workspace().join(source).is_file(), "{source} does not exist");
    }
    assert!(read("docker/00-pg-stat-statements.sql").contains("CREATE EXTENSION"));
}

#[test]
fn the_dockerfile_builds_every_stack_name_the_compose_file_asks_for() {
    let dockerfile = read("Dockerfile");
    assert!(dockerfile.contains("ARG STACK"), "the Dockerfile takes STACK");
    assert!(dockerfile.contains(r#"bins="$STACK""#), "and builds that binary");
    assert!(
        dockerfile.contains(r#"bins="loadgen responder""#),
        "the load generator with its HTTP ceiling"
    );
    assert!(dockerfile.contains("--locked"), "from Cargo.lock");
    assert!(
        read(".dockerignore").lines().any(|line| line.trim() == "target/"),
        ".dockerignore keeps target/ out of the build context"
    );

    // The binaries the workspace really has, from cargo itself.
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(workspace())
        .output()
        .expect("cargo metadata");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let binaries: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();

    let doc = compose();
    for (_, service) in doc["services"].as_hash().unwrap() {
        if let Some(stack) = service["build"]["args"]["STACK"].as_str() {
            assert!(binaries.contains(&stack), "STACK={stack} is no binary of {binaries:?}");
        }
    }
    for needed in stacks::ALL.iter().map(|s| s.identity.service).chain(["loadgen", "responder"]) {
        assert!(binaries.contains(&needed), "{needed} is no binary of {binaries:?}");
    }
}
