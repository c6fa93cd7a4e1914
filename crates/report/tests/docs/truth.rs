//! The documents hold the current truth, once: the defaults they state are the code's, the
//! current runs are declared in one place and quoted as declared, every results file they
//! name reads with today's loadgen and every interval they quote from one is what the report
//! prints for it, every term is in the glossary, and the front page and the layout keep
//! their shape.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use bookstore_record::faults::FaultsResults;
use bookstore_record::results::{Measurement, RunResults};
use bookstore_report::Format;
use clap::Args;

use super::{documents, read, root};

/// `text` as paragraphs: the runs of lines between blank lines, each joined into one line
/// (an interval or a file name may wrap).
fn paragraphs(text: &str) -> Vec<String> {
    text.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
}

/// `loadgen suite`'s measurement flags and their defaults as clap shows them (`128,256`,
/// `100ms`, `3`): the one declaration the documents must agree with.
fn measurement_defaults() -> BTreeMap<String, String> {
    let command = Measurement::augment_args(clap::Command::new("suite"));
    command
        .get_arguments()
        .filter_map(|arg| {
            let name = arg.get_long()?;
            let default: Vec<String> =
                arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            (!default.is_empty()).then(|| (format!("--{name}"), default.join(",")))
        })
        .collect()
}

#[test]
fn the_defaults_the_documents_state_are_the_codes() {
    let defaults = measurement_defaults();
    assert!(defaults.len() >= 8, "{defaults:?}");
    // The table of docs/running.md: every measurement setting, as clap has it.
    let running = read("docs/running.md");
    let table = running
        .split("<!-- defaults -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /defaults -->").next())
        .expect("docs/running.md holds the defaults table between <!-- defaults --> markers");
    let mut stated = BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        stated.insert(cells[1].trim_matches('`').to_owned(), cells[2].trim_matches('`').to_owned());
    }
    assert_eq!(stated, defaults, "docs/running.md's defaults table against the code's");
    // Anywhere else: "`--flag` (default VALUE)".
    let mut wrong = Vec::new();
    for document in &documents() {
        let text = read(document);
        for (at, _) in text.match_indices(" (default ") {
            let before = &text[..at];
            let Some(flag) = before.strip_suffix('`').and_then(|b| b.rsplit('`').next()) else {
                continue;
            };
            let value: String =
                text[at + " (default ".len()..].chars().take_while(|&c| c != ')').collect();
            if let Some(code) = defaults.get(flag)
                && value.trim_matches('`') != code
            {
                wrong.push(format!(
                    "{document}: `{flag}` (default {value}) but the code says {code}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `docs/current-runs.toml`: each kind of kept run and the file that is current for it.
fn current_runs() -> BTreeMap<String, String> {
    read("docs/current-runs.toml")
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            Some((key.trim().to_owned(), value.trim().trim_matches('"').to_owned()))
        })
        .collect()
}

/// The plain-timestamp default-run file names in `text`: `2026-12-01T18-45-30Z.json`.
fn default_run_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut names = Vec::new();
    for (at, _) in text.match_indices("Z.json") {
        let start = at.saturating_sub(19);
        let stamp = &text[start..at + 1];
        let shaped = stamp.len() == 20
            && stamp.char_indices().all(|(i, c)| match i {
                4 | 7 | 13 | 16 => c == '-',
                10 => c == 'T',
                19 => c == 'Z',
                _ => c.is_ascii_digit(),
            });
        // Not the end of a longer name (`dbbench-2026-…Z.json`, `faults-…`).
        let alone =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
        if shaped && alone {
            names.push(format!("{stamp}.json"));
        }
    }
    names
}

#[test]
fn the_current_runs_are_declared_once_and_an_older_one_is_called_so() {
    let current = current_runs();
    assert!(current.contains_key("default"), "docs/current-runs.toml declares `default`");
    for (kind, path) in &current {
        assert!(
            root().join(path).is_file(),
            "docs/current-runs.toml: {kind} = {path} does not exist"
        );
    }
    let mut unsaid = Vec::new();
    // The history page says what each current run replaced; the formats' pages name a file
    // only to show how names are made.
    let formats = ["docs/history.md", "crates/record/RESULTS.md", "studies/dbbench/DBBENCH.md"];
    for document in documents().iter().filter(|d| !formats.contains(&d.as_str())) {
        for paragraph in paragraphs(&read(document)) {
            for name in default_run_names(&paragraph) {
                let declared = current
                    .values()
                    .any(|path| path.strip_suffix(".zst").unwrap_or(path).ends_with(&name));
                if !declared && !paragraph.contains("an older run") {
                    unsaid.push(format!("{document}: {name}"));
                }
            }
        }
    }
    assert!(
        unsaid.is_empty(),
        "default runs not declared in docs/current-runs.toml quoted without saying \"an older run\": {unsaid:#?}"
    );
}

/// Every kept results file a document names: `summary/results/<name>.json` with a name
/// that is a UTC time (`2026-12-06T08-36-39Z…`) or one prefixed with its kind (`faults-`,
/// `soak-`, `dbbench-`) — not a placeholder such as `summary/results/A.json`.
fn results_files(text: &str) -> Vec<String> {
    let mut files = Vec::new();
    for (at, _) in text.match_indices("summary/results/") {
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
            .collect();
        let base = name.trim_start_matches("summary/results/");
        let kept = base.starts_with(|c: char| c.is_ascii_digit())
            || ["faults-", "soak-", "dbbench-", "ab-"].iter().any(|kind| base.starts_with(kind));
        if kept && (name.ends_with(".json") || name.ends_with(".json.zst")) {
            files.push(name);
        }
    }
    files
}

/// Whether `path` is a suite results file (not faults', a soak's, dbbench's or a
/// question's).
fn is_suite_results(path: &str) -> bool {
    // By the schema it says it is: a capacity study is named like a suite's run.
    let Ok(bytes) = bookstore_record::document::read_bytes(&root().join(path)) else {
        return false;
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    value["schema"] == "bookstore-bench/results"
}

#[test]
fn every_results_file_the_documents_name_reads_with_todays_loadgen() {
    let mut named = BTreeSet::new();
    for document in &documents() {
        named.extend(results_files(&read(document)));
    }
    named.extend(current_runs().into_values());
    assert!(named.len() > 5, "{named:?}");
    let mut unreadable = Vec::new();
    for path in &named {
        let full = root().join(path);
        // Each by the reader of the schema it says it is.
        let read = bookstore_record::document::read_bytes(&full).and_then(|bytes| {
            let value: serde_json::Value = serde_json::from_slice(&bytes)?;
            match value["schema"].as_str().unwrap_or_default() {
                "bookstore-bench/results" => RunResults::read(&full).map(drop),
                "bookstore-bench/ab" => bookstore_record::ab::AbResults::read(&full).map(drop),
                "bookstore-bench/capacity" => {
                    bookstore_record::capacity::CapacityResults::read(&full).map(drop)
                }
                "bookstore-bench/dbbench" => Ok(()),
                _ => FaultsResults::read(&full).map(drop),
            }
        });
        if let Err(error) = read {
            unreadable.push(format!("{path}: {error:#}"));
        }
    }
    assert!(unreadable.is_empty(), "{unreadable:#?}");
}

/// Everything the report prints for the suite results file `path`, in every format.
fn report_of(path: &str) -> String {
    static CACHE: OnceLock<std::sync::Mutex<BTreeMap<String, String>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(text) = cache.lock().unwrap().get(path) {
        return text.clone();
    }
    let run = RunResults::read(&root().join(path)).unwrap();
    let runs = std::slice::from_ref(&run);
    let text: String = [Format::Md, Format::MdAxes, Format::Text, Format::Html]
        .iter()
        .map(|format| format.render(runs).unwrap())
        .collect();
    cache.lock().unwrap().insert(path.to_owned(), text.clone());
    text
}

/// Each `R× [L–U]` of `text`.
fn intervals(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("× [") {
        let ratio: String = text[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let rest = &text[at + "× [".len()..];
        let Some(end) = rest.find(']') else { continue };
        if !ratio.is_empty() && rest[..end].contains('–') {
            found.push(format!("{ratio}× [{}]", &rest[..end]));
        }
    }
    found
}

#[test]
fn every_interval_quoted_from_a_results_file_is_what_the_report_prints_for_it() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for document in &documents() {
        for paragraph in paragraphs(&read(document)) {
            let files: BTreeSet<String> =
                results_files(&paragraph).into_iter().filter(|f| is_suite_results(f)).collect();
            let [file] = files.iter().collect::<Vec<_>>()[..] else { continue };
            if !root().join(file).is_file() {
                continue; // said by the test that every named file reads
            }
            let report = report_of(file);
            for interval in intervals(&paragraph) {
                checked += 1;
                if !report.contains(&interval) {
                    wrong.push(format!(
                        "{document}: {interval} is not what the report prints for {file}"
                    ));
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} quoted intervals found: the pattern is broken");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The terms a reader meets on the front page, the page and the terminal, each of which the
/// glossary defines.
const TERMS: &[&str] = &[
    "round",
    "window",
    "warm-up",
    "family",
    "pair",
    "twin",
    "lead",
    "best",
    "called",
    "not distinguishable",
    "interval",
    "open",
    "detectable difference",
    "pair spread",
    "spread between processes",
    "fixed load",
    "equal load",
    "budget",
    "looks",
    "ceiling",
    "HTTP ceiling",
    "database ceiling",
    "hour's speed",
    "preset",
    "composed stack",
    "triple",
    "axis",
    "layout",
    "binary check",
    "interaction",
    "calibrated",
    "relay",
    "pool bound",
    "goodput",
    "throughput",
    "disqualified",
    "scenario",
    "concurrency",
    "capacity",
    "objective",
    "first",
];

/// The glossary's entries: a `**term**` opening a line or list item, or a `### term`.
fn glossary_entries() -> BTreeSet<String> {
    read("docs/glossary.md")
        .lines()
        .filter_map(|line| {
            let line = line.trim_start().trim_start_matches("- ").trim_start_matches("* ");
            if let Some(rest) = line.strip_prefix("**") {
                return rest.split("**").next().map(str::to_owned);
            }
            line.strip_prefix("### ").map(str::to_owned)
        })
        .map(|term| term.trim().trim_end_matches(':').to_lowercase())
        .collect()
}

#[test]
fn the_glossary_defines_every_term_the_pages_set_in_bold_and_the_listed_ones() {
    let entries = glossary_entries();
    let mut terms: BTreeSet<String> = TERMS.iter().map(|t| t.to_lowercase()).collect();
    for template in std::fs::read_dir(root().join("crates/report/templates")).unwrap() {
        let text = std::fs::read_to_string(template.unwrap().path()).unwrap();
        for bold in text.split("<b>").skip(1).filter_map(|rest| rest.split("</b>").next()) {
            if !bold.contains(['{', '<']) {
                terms.insert(bold.trim().to_lowercase());
            }
        }
    }
    let missing: Vec<&String> = terms.iter().filter(|t| !entries.contains(*t)).collect();
    assert!(missing.is_empty(), "docs/glossary.md has no entry for {missing:?}");
}

#[test]
fn the_readme_is_a_front_page_with_the_command_the_time_and_the_answer_first() {
    let readme = read("README.md");
    let characters = readme.chars().count();
    assert!(characters <= 12_000, "README.md: {characters} characters; move the detail to docs/");
    let first: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    for needed in [
        "scripts/bench.sh",
        "<!-- whole-job time -->",
        "<!-- generated: loadgen report --format md-axes summary/results/",
        "docs/example-summary.html",
    ] {
        assert!(first.contains(needed), "README.md's first 30 lines lack {needed:?}");
    }
}

#[test]
fn the_documents_are_a_few_pages_a_reader_can_hold() {
    let mut total = 0;
    for document in
        documents().iter().filter(|d| d.starts_with("docs/") || *d == "summary/README.md")
    {
        total += read(document).chars().count();
    }
    assert!(total <= 100_000, "docs/*.md and summary/README.md: {total} characters");
    let contributing = read("CONTRIBUTING.md").chars().count();
    assert!(contributing <= 15_000, "CONTRIBUTING.md: {contributing} characters");
}

#[test]
fn contributings_layout_names_every_crate_study_and_script() {
    let contributing = read("CONTRIBUTING.md");
    let layout = contributing
        .split("\n## Layout")
        .nth(1)
        .map(|rest| rest.split("\n## ").next().unwrap_or(rest))
        .expect("CONTRIBUTING.md has a ## Layout section");
    let mut expected = vec!["loadgen".to_owned()];
    let folders = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
            .collect();
        names.sort();
        names
    };
    expected.extend(folders("crates"));
    expected.extend(folders("studies"));
    // A stack's crate by its name: the layout may list them under their folder.
    for group in ["crates/servers", "crates/any-stacks"] {
        expected.extend(folders(group).iter().map(|p| p.rsplit('/').next().unwrap().to_owned()));
    }
    for script in std::fs::read_dir(root().join("scripts")).unwrap() {
        let path = script.unwrap().path();
        if path.is_file() && !path.to_string_lossy().contains("__pycache__") {
            expected.push(format!("scripts/{}", path.file_name().unwrap().to_string_lossy()));
        }
    }
    let missing: Vec<&String> = expected.iter().filter(|p| !layout.contains(p.as_str())).collect();
    assert!(missing.is_empty(), "CONTRIBUTING.md's layout leaves out {missing:?}");
}

/// Every file under `dir` (recursively) whose name ends with one of `extensions`.
fn files_under(dir: &std::path::Path, extensions: &[&str], found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if path.is_dir() && !["target", ".git", "node_modules"].contains(&name.as_str()) {
            files_under(&path, extensions, found);
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
}

/// The headings of a Markdown document, without their `#`s.
fn headings(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_owned())
        .collect()
}

#[test]
fn every_document_the_code_and_the_scripts_point_to_exists_with_the_heading_they_name() {
    let root = root();
    let mut sources = Vec::new();
    for dir in ["crates", "loadgen", "studies", "scripts", ".ci"] {
        files_under(&root.join(dir), &[".rs", ".sh", ".py", ".html", ".toml"], &mut sources);
    }
    sources.push(root.join("docker-compose.yml"));
    let mut broken = Vec::new();
    for source in &sources {
        let text = std::fs::read_to_string(source).unwrap_or_default();
        let shown = source.strip_prefix(&root).unwrap_or(source).display().to_string();
        if shown.ends_with("tests/docs/truth.rs") {
            continue; // this test's own examples
        }
        for (at, _) in text.match_indices("docs/") {
            let rest = &text[at..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/-_.".contains(*c))
                .collect();
            let Some(name) = name.strip_suffix('.').map(str::to_owned).or(Some(name)) else {
                continue;
            };
            if !name.ends_with(".md") {
                continue;
            }
            let Ok(document) = std::fs::read_to_string(root.join(&name)) else {
                broken.push(format!("{shown}: {name} does not exist"));
                continue;
            };
            // `docs/x.md, "Heading"` or `docs/x.md ("Heading")`: a heading of that document.
            let after = rest[name.len()..].trim_start_matches([',', ' ', '(', ':']);
            let after = after.trim_start_matches(['\n', '/', ' ', '#', '!']);
            // A heading wrapped onto the next line is checked by its first line's words.
            let quoted = after.strip_prefix('"').and_then(|q| q.split('"').next());
            let quoted = quoted.and_then(|q| q.split('\n').next());
            // A heading starts with a word (not a string literal's `";`).
            if let Some(quoted) = quoted.filter(|q| q.starts_with(|c: char| c.is_alphabetic())) {
                let known = headings(&document);
                if !known.iter().any(|h| h.starts_with(quoted)) {
                    broken.push(format!("{shown}: {name} has no heading {quoted:?}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "pointers to documents that are not there:\n{}", broken.join("\n"));
}
