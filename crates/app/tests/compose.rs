//! `docker-compose.yml`, the `Dockerfile` and `.dockerignore` against the stacks this
//! workspace builds (SPEC §1): a renamed stack, a port or an environment variable that no
//! longer matches, a second copy of the schema. scripts/compose-test.sh runs the file on a
//! real engine in CI; these checks say which line drifted, without one.

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
        // Healthy when the stack's own binary gets 200 from /health/db (no curl in the image).
        assert_eq!(
            strings(&service["healthcheck"]["test"]),
            ["CMD".to_owned(), format!("/usr/local/bin/{name}"), "--probe".to_owned()],
            "{name}: healthcheck"
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
    let expected = stacks::ALL.len() + 2 + stacks::FRAMEWORKS.len(); // postgres, loadgen, composed
    assert_eq!(names.len(), expected, "services: {names:?}");
}

#[test]
fn each_framework_binary_of_the_composed_stacks_is_a_service_of_its_own_profile_like_the_presets() {
    let doc = compose();
    let preset = environment(&doc["services"][stacks::ALL[0].identity.service]);
    for framework in stacks::FRAMEWORKS {
        let name = framework.binary;
        let service = &doc["services"][name];
        assert!(!service.is_badvalue(), "no service {name}");
        // Built and started only on demand: `docker compose up` is the five presets.
        assert_eq!(strings(&service["profiles"]), ["composed"], "{name}");
        assert_eq!(service["build"]["args"]["STACK"].as_str(), Some(name));
        let images = scalar(&service["build"]["args"]["IMAGES"]);
        let all: Vec<&str> = stacks::FRAMEWORKS.iter().map(|f| f.binary).collect();
        assert_eq!(images.split_whitespace().collect::<Vec<_>>(), all, "{name}: one shared build");
        // On the port of its framework's first triple, which the registry gives it.
        let first = stacks::composed().iter().find(|s| s.tags.framework == framework.tag).unwrap();
        let port = first.identity.default_port;
        assert_eq!(strings(&service["ports"]), [format!("127.0.0.1:{port}:{port}")], "{name}");
        let mut env = environment(service);
        assert_eq!(env.remove("BIND"), Some(format!("0.0.0.0:{port}")), "{name}");
        assert_eq!(env.remove("SERIALIZER").as_deref(), Some("${SERIALIZER:-serde_json}"));
        assert_eq!(env.remove("ACCESS").as_deref(), Some("${ACCESS:-sqlx}"));
        // Otherwise the presets' environment and limits.
        let mut preset = preset.clone();
        preset.remove("BIND");
        assert_eq!(env, preset, "{name}");
        assert_eq!(scalar(&service["cpus"]), scalar(&doc["services"]["axum-serde-sqlx"]["cpus"]));
        assert_eq!(
            strings(&service["healthcheck"]["test"]),
            ["CMD".to_owned(), format!("/usr/local/bin/{name}"), "--probe".to_owned()]
        );
    }
}

#[test]
fn the_loadgen_service_runs_the_suite_against_every_stack_of_the_file() {
    let doc = compose();
    let loadgen = &doc["services"]["loadgen"];
    // Only on demand: `docker compose up` alone starts the stacks, not a benchmark.
    assert_eq!(strings(&loadgen["profiles"]), ["loadgen"]);
    assert_eq!(loadgen["build"]["args"]["STACK"].as_str(), Some("loadgen"));
    // loadgen knows the stacks and the database by their service names (tested in loadgen).
    assert_eq!(
        strings(&loadgen["command"]),
        ["suite", "--compose=network", "--bin-dir", "/usr/local/bin"]
    );
    for stack in stacks::ALL {
        let name = stack.identity.service;
        assert_eq!(
            loadgen["depends_on"][name]["condition"].as_str(),
            Some("service_healthy"),
            "loadgen waits for {name} to serve"
        );
    }
    // Not root: the results are written as the user docs/running.md ("With Docker") says to give.
    assert_eq!(loadgen["user"].as_str(), Some("${LOADGEN_UID:-1000}:${LOADGEN_GID:-1000}"));
    assert_eq!(strings(&loadgen["volumes"]), ["${SUMMARY_DIR:-./summary}:/work/summary"]);
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
    assert!(is_minor_pin(tag, "17"), "postgres:{tag} is PostgreSQL 17, pinned to a minor version");
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

/// `17.7` for major `17`; `1.95.0` for `1.95`; `12.15-slim` for `12`.
fn is_minor_pin(tag: &str, major: &str) -> bool {
    let version = tag.split('-').next().unwrap_or("");
    let parts: Vec<&str> = version.split('.').collect();
    version.starts_with(&format!("{major}."))
        && parts.len() > major.split('.').count()
        && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn the_dockerfile_builds_offline_from_pinned_bases_into_stripped_images() {
    let dockerfile = read("Dockerfile");
    // A `# syntax=` line makes BuildKit fetch a frontend image: no offline build then.
    assert!(
        !dockerfile.lines().any(|l| l.trim_start().starts_with("# syntax")),
        "a # syntax= line"
    );
    let rust = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("ARG RUST_VERSION="))
        .expect("ARG RUST_VERSION=");
    assert!(is_minor_pin(rust, "1"), "rust:{rust}");
    assert!(dockerfile.contains("FROM rust:${RUST_VERSION}-bookworm AS build"));
    let runtime =
        dockerfile.lines().filter_map(|l| l.strip_prefix("FROM debian:")).collect::<Vec<_>>();
    assert_eq!(runtime.len(), 1, "one runtime base");
    assert!(
        is_minor_pin(runtime[0], "12") && runtime[0].ends_with("-slim"),
        "debian:{}",
        runtime[0]
    );
    assert!(dockerfile.contains(r#"install -D -s "target/release/$bin""#), "stripped binaries");
    for (tag, pinned) in
        [("17.7", true), ("17", false), ("1.95.0", true), ("12.15-slim", true), ("latest", false)]
    {
        let major = tag.split('.').next().unwrap();
        assert_eq!(is_minor_pin(tag, major), pinned, "{tag}");
    }
}

#[test]
fn bench_sh_with_compose_installs_no_postgresql() {
    // The compose database is the one used: bench.sh must not install PostgreSQL's server.
    for (args, installs) in [
        ("--compose --quick", false),
        ("--quick --compose=host", false),
        ("--database-url postgres://x", false),
        ("--quick", true),
    ] {
        let output = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source scripts/lib.sh; ensure_pg_binaries() {{ echo INSTALLS; }}; ensure_pg_binaries_unless_database_url {args}"
            ))
            .current_dir(workspace())
            .output()
            .expect("bash");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).contains("INSTALLS"),
            installs,
            "{args}"
        );
    }
}

#[test]
fn the_dockerfile_builds_every_stack_name_the_compose_file_asks_for() {
    let dockerfile = read("Dockerfile");
    assert!(dockerfile.contains("ARG STACK"), "the Dockerfile takes STACK");
    assert!(
        dockerfile.contains("COPY --from=build /out/${STACK}/ /usr/local/bin/"),
        "and copies its binaries"
    );
    // The images the build stage makes by default, in one cargo run; a service that names
    // others (IMAGES) gets a build of its own.
    let images: Vec<&str> = dockerfile
        .lines()
        .find_map(|l| l.trim().strip_prefix("ARG IMAGES=\"")?.strip_suffix('"'))
        .expect("ARG IMAGES=\"…\" in the build stage")
        .split(' ')
        .collect();
    assert!(dockerfile.contains(r#"images="$IMAGES";"#));
    assert!(dockerfile.contains(r#"for image in $images; do set -- "$@" --bin "$image""#));
    assert!(dockerfile.contains(r#"*" loadgen "*) set -- "$@" --bin responder"#));
    assert!(
        dockerfile.contains(r#"[ "$image" != loadgen ] || bins="loadgen responder""#),
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
    let services: Vec<&Yaml> = doc["services"].as_hash().unwrap().values().collect();
    // Each service's image is among those its build makes: the default list, or its own.
    let mut asked: Vec<&str> = Vec::new();
    for service in &services {
        let Some(stack) = service["build"]["args"]["STACK"].as_str() else { continue };
        let own = service["build"]["args"]["IMAGES"].as_str();
        let built: Vec<&str> = own.map_or(images.clone(), |i| i.split(' ').collect());
        assert!(built.contains(&stack), "{stack} is not among the images its build makes");
        for needed in &built {
            assert!(binaries.contains(needed), "{needed} is no binary of {binaries:?}");
        }
        if own.is_none() {
            asked.push(stack);
        }
    }
    asked.sort();
    let mut built = images.clone();
    built.sort();
    assert_eq!(built, asked, "the default build makes exactly the images the services ask for");
    assert!(binaries.contains(&"responder"));
    for stack in stacks::ALL {
        assert!(
            images.contains(&stack.identity.service),
            "{} has no image",
            stack.identity.service
        );
    }
}

/// Every document of a multi-document YAML file under deploy/k8s.
fn manifests(path: &str) -> Vec<Yaml> {
    YamlLoader::load_from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn find<'a>(docs: &'a [Yaml], kind: &str, name: &str) -> &'a Yaml {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind) && d["metadata"]["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// `env:` of a container as a map.
fn container_env(container: &Yaml) -> BTreeMap<String, String> {
    container["env"]
        .as_vec()
        .expect("env")
        .iter()
        .filter(|e| !e["value"].is_badvalue())
        .map(|e| (scalar(&e["name"]), scalar(&e["value"])))
        .collect()
}

/// Docker's `512m` and Kubernetes' `512Mi` are both MiB.
fn mebibytes(memory: &str) -> u64 {
    let (number, unit) =
        memory.split_at(memory.find(|c: char| !c.is_ascii_digit()).unwrap_or(memory.len()));
    let number: u64 = number.parse().unwrap_or_else(|_| panic!("memory {memory}"));
    match unit {
        "m" | "M" | "Mi" => number,
        "g" | "G" | "Gi" => number * 1024,
        other => panic!("memory unit {other:?} in {memory}"),
    }
}

#[test]
fn the_kubernetes_manifests_run_what_the_compose_file_runs() {
    let doc = compose();
    let stacks_yaml = manifests("deploy/k8s/stacks.yaml");
    let deployments =
        stacks_yaml.iter().filter(|d| d["kind"].as_str() == Some("Deployment")).count();
    assert_eq!(deployments, stacks::ALL.len(), "one Deployment per stack, no other");
    for stack in stacks::ALL {
        let name = stack.identity.service;
        let port = stack.identity.default_port as i64;
        let service = &doc["services"][name];
        let pod = &find(&stacks_yaml, "Deployment", name)["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        assert_eq!(container["image"].as_str(), service["image"].as_str(), "{name}: image");
        assert_eq!(container_env(container), environment(service), "{name}: env");
        assert_eq!(container["ports"][0]["containerPort"].as_i64(), Some(port), "{name}");
        let svc = find(&stacks_yaml, "Service", name);
        assert_eq!(svc["spec"]["ports"][0]["port"].as_i64(), Some(port), "{name}: Service port");
        assert_eq!(svc["spec"]["selector"], pod_labels(find(&stacks_yaml, "Deployment", name)));
        let limits = &container["resources"]["limits"];
        assert_eq!(container["resources"]["requests"], *limits, "{name}: requests = limits");
        assert_eq!(
            scalar(&limits["cpu"]).parse::<f64>().ok(),
            scalar(&service["cpus"]).parse().ok()
        );
        assert_eq!(
            mebibytes(&scalar(&limits["memory"])),
            mebibytes(&scalar(&service["mem_limit"]))
        );
        // Ready on the same probe the compose healthcheck runs.
        let probe = strings(&container["readinessProbe"]["exec"]["command"]);
        assert_eq!(probe, strings(&service["healthcheck"]["test"])[1..], "{name}: readiness");
    }

    // The database: the compose service's image, command and environment, and its init
    // scripts generated from the very files the compose file mounts, in the same order.
    let postgres_yaml = manifests("deploy/k8s/postgres.yaml");
    let postgres = &doc["services"]["postgres"];
    let container = &find(&postgres_yaml, "StatefulSet", "postgres")["spec"]["template"]["spec"]["containers"]
        [0];
    assert_eq!(container["image"].as_str(), postgres["image"].as_str());
    assert_eq!(strings(&container["args"]), strings(&postgres["command"]));
    let env = container_env(container);
    for (key, value) in environment(postgres) {
        assert_eq!(env.get(&key), Some(&value), "postgres: {key}");
    }
    let kustomization = manifests("deploy/k8s/kustomization.yaml").remove(0);
    let generated: Vec<(String, String)> =
        strings(&kustomization["configMapGenerator"][0]["files"])
            .iter()
            .map(|f| {
                let (key, path) = f.split_once('=').expect("key=path");
                (key.to_owned(), path.trim_start_matches("../../").to_owned())
            })
            .collect();
    let mounted: Vec<(String, String)> = strings(&postgres["volumes"])
        .iter()
        .filter_map(|m| {
            let parts: Vec<&str> = m.split(':').collect();
            let key = parts[1].strip_prefix("/docker-entrypoint-initdb.d/")?;
            Some((key.to_owned(), parts[0].trim_start_matches("./").to_owned()))
        })
        .collect();
    assert_eq!(generated, mounted, "init scripts: the same files under the same names");
    for resource in strings(&kustomization["resources"]) {
        assert!(workspace().join("deploy/k8s").join(&resource).is_file(), "{resource}");
    }
}

fn pod_labels(deployment: &Yaml) -> Yaml {
    deployment["spec"]["selector"]["matchLabels"].clone()
}

#[test]
fn the_kubernetes_shards_are_an_indexed_job_numbered_from_one_with_one_start_time() {
    let doc = compose();
    let jobs = manifests("deploy/k8s/loadgen/loadgen.yaml");
    let shards = &find(&jobs, "Job", "loadgen-shards")["spec"];
    assert_eq!(shards["completionMode"].as_str(), Some("Indexed"));
    let completions = shards["completions"].as_i64().expect("completions");
    assert_eq!(shards["parallelism"].as_i64(), Some(completions), "all shards at once");
    let container = &shards["template"]["spec"]["containers"][0];
    assert_eq!(container["image"].as_str(), doc["services"]["loadgen"]["image"].as_str());
    assert_eq!(container_env(container)["SHARDS"], completions.to_string());
    let script = strings(&container["args"]).join("\n");
    for needed in [
        "k=$((JOB_COMPLETION_INDEX + 1))",
        "--shard \"$k/$SHARDS\"",
        "--start-at \"$START_AT\"",
        "--compose=network",
        "--no-ceilings",
        "--output \"/results/shard$k.json\"",
    ] {
        assert!(script.contains(needed), "the shard wrapper lacks {needed}: {script}");
    }
    let start_at = container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some("START_AT"))
        .expect("START_AT");
    assert_eq!(start_at["valueFrom"]["configMapKeyRef"]["name"].as_str(), Some("loadgen-start"));

    // The wrapper run by sh as the pod of index 1 would run it, loadgen replaced by echo:
    // it is shard 2 of 2 and writes shard2.json, then shard2.done with loadgen's status.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().to_str().unwrap();
    let run = |script: &str, index: &str| {
        let script =
            script.replace("/usr/local/bin/loadgen", "echo loadgen").replace("/results", results);
        let output = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("JOB_COMPLETION_INDEX", index)
            .env("SHARDS", completions.to_string())
            .env("START_AT", "1900000000")
            .output()
            .expect("sh");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let shard_script = strings(&container["args"]).join("\n");
    for index in 0..completions {
        let said = run(&shard_script, &index.to_string());
        let k = index + 1;
        assert!(
            said.contains(&format!("--shard {k}/{completions} --start-at 1900000000")),
            "{said}"
        );
        assert!(said.contains(&format!("--output {results}/shard{k}.json")), "{said}");
        let done = std::fs::read_to_string(dir.path().join(format!("shard{k}.done"))).unwrap();
        assert_eq!(done.trim(), "0");
    }

    // The merge waits for as many shards (all done now) and merges their files.
    let merge = &find(&jobs, "Job", "loadgen-merge")["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container_env(merge)["SHARDS"], completions.to_string());
    let said = run(&strings(&merge["args"]).join("\n"), "0");
    let files: Vec<String> =
        (1..=completions).map(|k| format!("{results}/shard{k}.json")).collect();
    assert!(
        said.starts_with(&format!("loadgen merge {} -o {results}/merged.json", files.join(" "))),
        "{said}"
    );
}
