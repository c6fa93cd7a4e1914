//! The documents are true: every path they name exists, every link between them reaches
//! its file and heading, every "SPEC §n" points into `docs/contract.md`, the README is one
//! screen, its table of scenarios is the scenario table's, and the Rust it asks for is the
//! one the scripts check.

mod truth;

use std::path::{Path, PathBuf};

use bookstore_client::scenario::Scenario;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The documents a user reads: these, and every file of `docs/`.
const DOCUMENTS: &[&str] = &[
    "README.md",
    "CONTRIBUTING.md",
    "summary/README.md",
    "crates/record/RESULTS.md",
    "studies/dbbench/DBBENCH.md",
];

/// [`DOCUMENTS`] and every Markdown file of `docs/`, so a new document is checked too.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    DOCUMENTS.iter().map(|d| (*d).to_owned()).chain(docs).collect()
}

/// Every `…`-quoted repository path in `text` (starting with one of the top-level folders).
fn paths(text: &str) -> Vec<String> {
    const TOP: [&str; 8] =
        ["crates/", "loadgen/", "studies/", "scripts/", "docs/", "summary/", "docker/", ".ci/"];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| TOP.iter().any(|top| quoted.starts_with(top)))
        .filter(|quoted| !quoted.contains(['<', '*', ' ', '{', '…']))
        .map(|quoted| quoted.split(':').next().unwrap_or(quoted).trim_end_matches('/').to_owned())
        .collect()
}

/// Whether `path` is a page the tools write, which the documents name but the repository
/// does not hold: every `summary/*.html`, as the repository's `.gitignore` says.
fn generated(path: &str) -> bool {
    const RULE: &str = "/summary/*.html";
    assert!(
        read(".gitignore").lines().any(|line| line.trim() == RULE),
        ".gitignore no longer ignores {RULE}: update which paths count as generated"
    );
    path.strip_prefix("summary/").is_some_and(|page| page.ends_with(".html") && !page.contains('/'))
}

#[test]
fn every_path_the_documents_name_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for document in &documents() {
        for path in paths(&read(document)) {
            checked += 1;
            if !root().join(&path).exists() && !generated(&path) {
                missing.push(format!("{document}: {path}"));
            }
        }
    }
    assert!(checked > 50, "only {checked} paths found: the pattern is broken");
    assert!(missing.is_empty(), "paths that do not exist: {missing:#?}");
}

/// `text` without its fenced code blocks.
fn prose(text: &str) -> String {
    text.split("```").step_by(2).collect::<Vec<_>>().join("\n")
}

/// The anchor GitHub gives a heading: lower case, spaces as hyphens, other punctuation
/// dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_between_the_documents_reaches_its_file_and_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in &documents() {
        let text = prose(&read(document));
        let folder = Path::new(document).parent().unwrap_or(Path::new(""));
        for target in text.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
            if target.contains("://") || target.contains(char::is_whitespace) {
                continue;
            }
            checked += 1;
            let (file, heading) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() {
                root().join(document)
            } else {
                root().join(folder).join(file)
            };
            if !path.exists() {
                broken.push(format!("{document}: {target} (no such file)"));
            } else if !heading.is_empty() && (file.is_empty() || file.ends_with(".md")) {
                let headings: Vec<String> = prose(&std::fs::read_to_string(&path).unwrap())
                    .lines()
                    .filter(|line| line.starts_with('#'))
                    .map(|line| anchor(line.trim_start_matches('#')))
                    .collect();
                if !headings.iter().any(|h| h == heading) {
                    broken.push(format!("{document}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found: the pattern is broken");
    assert!(broken.is_empty(), "links that lead nowhere: {broken:#?}");
}

/// Every file of the repository a person reads or builds from, outside `target/`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if ![".git", "target", "results"].contains(&name) {
                sources(&path, out);
            }
        } else if ["rs", "md", "toml", "sh", "py", "yml", "html"]
            .iter()
            .any(|ext| name.ends_with(&format!(".{ext}")))
        {
            out.push(path);
        }
    }
}

#[test]
fn every_spec_reference_points_into_the_contract() {
    let contract = read("docs/contract.md");
    let mut files = Vec::new();
    sources(&root(), &mut files);
    let mut references = 0;
    for file in files.into_iter().filter(|f| !f.ends_with("tests/docs/main.rs")) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for reference in text.split("SPEC §").skip(1) {
            let number: String = reference.chars().take_while(char::is_ascii_digit).collect();
            if reference.starts_with('n') {
                continue; // "SPEC §n": the documents explaining the references themselves
            }
            references += 1;
            assert!(
                !number.is_empty() && contract.contains(&format!("\n## {number}. ")),
                "{}: SPEC §{number} is no section of docs/contract.md",
                file.display()
            );
        }
    }
    assert!(references > 50, "{references} references");
}

#[test]
fn the_contracts_scenario_table_is_the_scenario_table_and_the_readme_names_them_in_order() {
    let contract = read("docs/contract.md");
    let table = &contract[contract.find("| name | request | success |").expect("the table")..];
    let rows: Vec<&str> = table.lines().skip(2).take_while(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), Scenario::ALL.len());
    for (row, &scenario) in rows.iter().zip(Scenario::ALL) {
        let name = scenario.spec().name;
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[1], format!("`{name}`"));
        let request = scenario.target().replace("{id}", "");
        let request = request.trim_end_matches('/');
        assert!(
            cells[2].starts_with(&format!("`{} {request}", scenario.method())),
            "{name}: {}",
            cells[2]
        );
    }
    // The README's line of scenarios: each by name, in the table's order.
    let readme = read("README.md");
    let line = readme.lines().find(|l| l.contains("twelve [scenarios]")).expect("the line");
    let at: Vec<usize> = Scenario::ALL
        .iter()
        .map(|s| line.find(&format!("`{}`", s.spec().name)).unwrap_or_else(|| panic!("{s:?}")))
        .collect();
    assert!(at.is_sorted(), "the README names the scenarios out of order: {at:?}");
}

/// `require_cargo` of `scripts/lib.sh` (every script's first check) with `rustc` answering
/// `version`: its exit status and what it printed.
fn require_cargo_with(version: Option<&str>) -> (bool, String) {
    let fake = tempfile::tempdir().unwrap();
    let mut path = std::env::var("PATH").unwrap_or_default();
    if let Some(version) = version {
        let rustc = fake.path().join("rustc");
        std::fs::write(&rustc, format!("#!/bin/sh\necho 'rustc {version} (0000000 2022-08-08)'\n"))
            .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
        path = format!("{}:{path}", fake.path().display());
    }
    let output = std::process::Command::new("bash")
        .args(["-c", "source scripts/lib.sh && require_cargo"])
        .current_dir(root())
        .env("PATH", path)
        .output()
        .unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_older_rustc_is_refused_in_one_line_that_says_what_to_do() {
    let needed = read("Cargo.toml")
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = \""))
        .map(|rest| rest.trim_end_matches('"').to_owned())
        .expect("the workspace declares its rust-version");
    assert!(
        read("README.md").contains(&format!("Rust {needed} or newer")),
        "the README says {needed}"
    );
    let (ok, stderr) = require_cargo_with(Some("1.63.0"));
    assert!(!ok, "an old rustc passed");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("1.63.0") && stderr.contains(&needed), "{stderr}");
    assert!(stderr.contains("rustup update"), "{stderr}");
    let (ok, stderr) = require_cargo_with(Some(&format!("{needed}.0")));
    assert!(ok, "{stderr}");
    let (ok, stderr) = require_cargo_with(None);
    assert!(ok, "the toolchain building this test: {stderr}");
}
