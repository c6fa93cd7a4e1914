//! The exports (Markdown, CSV) say what the page says, and the documents' generated tables
//! are the exports of the kept results.

use super::*;

/// The markdown table row of `scenario`, split into its cells (the scenario first).
fn markdown_row(markdown: &str, table_title: &str, scenario: &str) -> Vec<String> {
    let table = &markdown[markdown.find(table_title).unwrap_or_else(|| panic!("{markdown}"))..];
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| `{scenario}` |")))
        .unwrap_or_else(|| panic!("no {scenario} row: {table}"));
    line.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect()
}

#[test]
fn the_markdown_export_says_what_the_page_says() {
    let mut run = fixture();
    scale(&mut run, "actix-simd-sqlx", "bookById", 3.0);
    let markdown = bookstore_report::export::markdown(std::slice::from_ref(&run));
    let header = markdown.lines().find(|l| l.starts_with("| scenario |")).unwrap();
    let stacks: Vec<&str> = header.trim_matches('|').split(" | ").skip(1).map(str::trim).collect();
    let row = markdown_row(&markdown, "Rate at saturation, c = 8", "bookById");
    let simd = stacks.iter().position(|s| *s == "actix-simd-sqlx").unwrap() + 1;
    assert!(row[simd].starts_with("**") && row[simd].ends_with("** best"), "{row:?}");
    for (i, cell) in row.iter().enumerate().skip(1).filter(|(i, _)| *i != simd) {
        assert!(cell.starts_with("0.") && cell.contains("× [0."), "{}: {cell}", stacks[i - 1]);
    }
    // One table per concurrency and per equal-load rate, every scenario in each.
    for title in ["Rate at saturation, c = 8", "Rate at saturation, c = 16", "p99 at equal load"] {
        for scenario in ["health", "bookById", "checkoutCreate"] {
            assert_eq!(markdown_row(&markdown, title, scenario).len(), stacks.len() + 1);
        }
    }
}

#[test]
fn the_csv_export_has_one_row_per_cell_with_units_in_the_columns() {
    let run = fixture();
    let rows = bookstore_report::export::rows(std::slice::from_ref(&run));
    let csv = bookstore_report::export::csv(&rows).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for column in [
        "scenario",
        "stack",
        "concurrency",
        "rate_rps_median",
        "p99_us_median",
        "vs_first_low",
        "standing",
    ] {
        assert!(header.contains(&column), "{header:?}");
    }
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    // No field of the fixture holds a comma, so a plain split reads it.
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(body.iter().all(|r| r.len() == header.len()));
    let saturation = body.iter().filter(|r| r[column("load")] == "saturation").count();
    let scenarios = run.settings.scenarios.len();
    assert_eq!(
        saturation,
        run.stacks.len() * scenarios * run.settings.measurement.concurrency.len()
    );
    let equal_load = body.iter().filter(|r| r[column("load")] == "equal_load").count();
    assert_eq!(equal_load, run.stacks.len() * scenarios * run.settings.rates.len());
    // A rate is the median of the rounds' goodput, as on the page.
    let line = body
        .iter()
        .find(|r| {
            r[column("scenario")] == "health"
                && r[column("stack")] == "axum-serde-sqlx"
                && r[column("concurrency")] == "8"
        })
        .unwrap();
    let mut rates: Vec<f64> = run
        .stacks
        .iter()
        .find(|s| s.name == "axum-serde-sqlx")
        .unwrap()
        .cells
        .iter()
        .filter(|c| c.scenario == "health" && c.concurrency == 8)
        .map(|c| c.goodput_rps)
        .collect();
    rates.sort_by(f64::total_cmp);
    let median: f64 = line[column("rate_rps_median")].parse().unwrap();
    assert!((median - rates[rates.len() / 2]).abs() < 1e-6, "{median} vs {rates:?}");
    let json: serde_json::Value =
        serde_json::from_str(&bookstore_report::export::json(&rows).unwrap()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), body.len());
}

/// The README's table of what each axis costs is `loadgen report --format md-axes` of the
/// kept factorial study it names, unedited.
#[test]
fn the_readme_axis_table_is_the_export_of_the_kept_factorial_study() {
    let (files, block) =
        generated_block("README.md", "<!-- generated: loadgen report --format md-axes ", "");
    let runs: Vec<RunResults> =
        files.iter().map(|f| RunResults::read(&workspace().join(f)).unwrap()).collect();
    let expected = bookstore_report::export::markdown_axes(&bookstore_report::export::rows(&runs));
    // The study's answer: every axis, access as its style and its library.
    for contrast in ["actix-web ÷ axum", "sonic-rs ÷ serde_json", "diesel-async ÷ diesel"] {
        assert!(expected.contains(contrast), "{contrast} in {expected}");
    }
    // And in the server's CPU per request, a second table.
    let tables = expected.matches("| framework | actix-web ÷ axum |").count();
    assert!(expected.contains("(in the server's CPU per request") && tables == 2, "{expected}");
    assert!(
        block == expected,
        "README.md's axis table differs from `loadgen report --format md-axes {}`: regenerate it",
        files.join(" ")
    );
}

fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The document holding the reliability table of the kept faults and soak runs.
const RELIABILITY: &str = "docs/reliability.md";

/// The block of `document` generated by a command starting `open` (the comment's start)
/// and ending `close` before its ` -->`: the files the command names, and the block's text.
fn generated_block(document: &str, open: &str, close: &str) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(workspace().join(document)).unwrap();
    let start = text.find(open).unwrap_or_else(|| panic!("no {open:?} block in {document}"));
    let marker_end = format!("{close} -->\n");
    let command_end = start + text[start..].find(&marker_end).unwrap();
    let files =
        text[start + open.len()..command_end].split_whitespace().map(str::to_owned).collect();
    let body_start = command_end + marker_end.len();
    let end = body_start + text[body_start..].find("<!-- /generated -->").unwrap();
    (files, text[body_start..end].to_owned())
}

#[test]
fn the_reliability_table_is_the_render_of_the_kept_faults_and_soak_runs() {
    let (files, block) =
        generated_block(RELIABILITY, "<!-- generated: loadgen faults --from ", " --format md");
    // As `loadgen faults --from` reads them: each soak judged from its samples.
    let documents: Vec<FaultsResults> = files
        .iter()
        .map(|f| {
            let mut document = FaultsResults::read(&workspace().join(f)).unwrap();
            bookstore_runner::faults::soak::judge_all(&mut document);
            document
        })
        .collect();
    assert!(
        block == bookstore_report::reliability::markdown(&documents),
        "{RELIABILITY}'s reliability table differs from `loadgen faults --from {} --format md`: regenerate it",
        files.join(" ")
    );
    // Every stack ran the three faults and the soak.
    for stack in bookstore_registry::stacks::ALL {
        let row = block.lines().find(|l| l.starts_with(&format!("| {} |", stack.identity.service)));
        let row = row.unwrap_or_else(|| panic!("no row for {}", stack.identity.service));
        assert!(row.contains("of 3 |") && !row.ends_with("not run |"), "{row}");
    }
    let page = bookstore_report::reliability::render(&documents).unwrap();
    if !bookstore_report::page::check_fits(&page, 1280).unwrap_or_else(|e| panic!("{e}")) {
        eprintln!("skipped: no Chromium (scripts/test.sh said so)");
    }
}

/// A preset and the composed stack of its triple are compared (the binary check) even when
/// the run measured no grid of composed stacks around them.
#[test]
fn a_preset_beside_its_triple_gets_the_binary_check_without_a_grid() {
    let mut run = super::fixture();
    // Another stack's windows under the triple's name: data, not a claim about them.
    let mut triple = run.stacks.iter().find(|s| s.name == "hyper-sonic-sqlx").unwrap().clone();
    triple.name = "axum+serde_json+sqlx".into();
    run.stacks.push(triple);
    let page = bookstore_report::render(std::slice::from_ref(&run)).unwrap();
    let binary = page.split("data-binary-check").nth(1).expect("the binary check");
    assert!(binary.contains("<td class=\"left\">axum-serde-sqlx</td>"), "{binary}");
    assert!(!page.contains("id=\"axis-costs\""), "one composed stack is no grid");
    let markdown = bookstore_report::export::markdown(&[run]);
    assert!(markdown.contains("| axum+serde_json+sqlx ÷ axum-serde-sqlx |"), "{markdown}");
}

/// `loadgen compact`'s promise: a file written again compressed (and compacted a second
/// time, in its own place) renders in every format exactly as the original.
#[test]
fn a_compacted_file_renders_in_every_format_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("run.json");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-rounds3.json"),
        &plain,
    )
    .unwrap();
    let compacted = bookstore_record::results::compact(&plain).unwrap();
    assert_eq!(compacted, dir.path().join("run.json.zst"));
    assert!(
        std::fs::metadata(&compacted).unwrap().len() < std::fs::metadata(&plain).unwrap().len()
    );
    let again = bookstore_record::results::compact(&compacted).unwrap();
    assert_eq!(again, compacted, "a .json.zst is written again in its own place");
    let original = RunResults::read(&plain).unwrap();
    let read = RunResults::read(&compacted).unwrap();
    for format in bookstore_report::Format::ALL {
        // A projection sets a run against a base: the run against itself.
        let copies = if format == bookstore_report::Format::Projection { 2 } else { 1 };
        let runs = |run: &RunResults| vec![run.clone(); copies];
        let before = format.render(&runs(&original)).unwrap();
        let after = format.render(&runs(&read)).unwrap();
        assert!(before == after, "{format:?} renders the compacted file otherwise");
    }
}
