//! The reliability table (Markdown for docs/reliability.md, and a page of its own), rendered from
//! one or more faults results files: a stack's faults come from the last file that has
//! them, its soak from the last that has one (faults and soak are usually separate runs).

use serde::Serialize;

use bookstore_record::faults::{FaultRecord, FaultsResults, SoakRecord};

/// The recovery the issue set as the target: serving again within this after a fault.
pub const RECOVERY_TARGET_MS: f64 = 1000.0;

/// One stack's row, from whichever files hold its faults and its soak.
#[derive(Debug, Clone)]
pub struct StackRow<'a> {
    /// The stack's name, the key that joins its faults and its soak.
    pub stack: &'a str,
    /// Its faults (from the file named by `faults_from`).
    pub faults: &'a [FaultRecord],
    /// Its soak, from the last file that has one; `None`: not run.
    pub soak: Option<&'a SoakRecord>,
    /// Why it could not be measured, if it could not.
    pub failure: Option<&'a str>,
}

/// Every stack of `documents`, in the order first seen.
pub fn rows(documents: &[FaultsResults]) -> Vec<StackRow<'_>> {
    let mut rows: Vec<StackRow<'_>> = Vec::new();
    for document in documents {
        for stack in &document.stacks {
            let at = match rows.iter().position(|r| r.stack == stack.stack) {
                Some(at) => at,
                None => {
                    rows.push(StackRow {
                        stack: &stack.stack,
                        faults: &[],
                        soak: None,
                        failure: None,
                    });
                    rows.len() - 1
                }
            };
            let row = &mut rows[at];
            if !stack.faults.is_empty() {
                row.faults = &stack.faults;
            }
            if stack.soak.is_some() {
                row.soak = stack.soak.as_ref();
            }
            if stack.failure.is_some() {
                row.failure = stack.failure.as_deref();
            }
        }
    }
    rows
}

/// The faults named in any row, in the order run.
fn fault_names(rows: &[StackRow<'_>]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        for fault in row.faults {
            if !names.contains(&fault.fault) {
                names.push(fault.fault.clone());
            }
        }
    }
    names
}

/// A fault's cell: its error window and the time to serve again.
fn fault_cell(fault: Option<&FaultRecord>) -> String {
    let Some(fault) = fault else { return "not run".into() };
    let window = match fault.error_window {
        Some(window) => format!("errors for {:.2} s", window.seconds()),
        None => "no errors".into(),
    };
    let recovery = match fault.recovery_ms {
        Some(ms) => format!("serving {ms:.0} ms after"),
        None => "never served again".into(),
    };
    let mut cell = format!("{window}, {recovery}");
    if fault.failures > 0 {
        cell.push_str(&format!(", {} failures", fault.failures));
    }
    if !fault.audit.passed {
        cell.push_str(", audit failed");
    }
    cell
}

fn soak_cell(soak: Option<&SoakRecord>) -> String {
    let Some(soak) = soak else { return "not run".into() };
    let length = if soak.seconds >= 120.0 {
        format!("{:.0} min", soak.seconds / 60.0)
    } else {
        format!("{:.0} s", soak.seconds)
    };
    let growth = match (soak.rss_growth_percent, soak.rss_growth_late_percent, soak.fd_growth) {
        (Some(rss), Some(late), Some(fds)) => {
            format!("RSS {rss:+.1}% ({late:+.1}% in the second half), fds {fds:+}")
        }
        (Some(rss), None, Some(fds)) => format!("RSS {rss:+.1}%, fds {fds:+}"),
        _ => "too short to judge growth".into(),
    };
    let mut cell = format!("{length}: {growth}");
    if !soak.flags.is_empty() {
        cell.push_str(" — flagged");
    }
    if soak.failures > 0 {
        cell.push_str(&format!(", {} failures", soak.failures));
    }
    if !soak.audit.passed {
        cell.push_str(", audit failed");
    }
    cell
}

/// The table: header and rows of text cells.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Column headings.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// One row per stack: faults survived, each fault's error window and recovery, the 503s,
/// acknowledged-but-lost writes, and the soak's growth.
pub fn reliability_table(rows: &[StackRow<'_>]) -> Table {
    let faults = fault_names(rows);
    let mut header = vec!["stack".to_owned(), "faults survived".to_owned()];
    header.extend(faults.iter().cloned());
    header.extend(["503s".to_owned(), "lost acknowledged writes".to_owned(), "soak".to_owned()]);
    let rows = rows
        .iter()
        .map(|row| {
            let survived = row.faults.iter().filter(|f| f.survived).count();
            let mut cells = vec![row.stack.to_owned()];
            cells.push(match row.failure {
                Some(failure) => format!("failed: {failure}"),
                None if row.faults.is_empty() => "not run".into(),
                None => format!("{survived} of {}", row.faults.len()),
            });
            for name in &faults {
                cells.push(fault_cell(row.faults.iter().find(|f| &f.fault == name)));
            }
            let total_503: u64 = row.faults.iter().map(|f| f.unavailable_503).sum();
            let lost: u64 = row.faults.iter().map(|f| f.audit.lost_acknowledged).sum::<u64>()
                + row.soak.map_or(0, |s| s.audit.lost_acknowledged);
            cells.push(total_503.to_string());
            cells.push(lost.to_string());
            cells.push(soak_cell(row.soak));
            cells
        })
        .collect();
    Table { header, rows }
}

/// The table as Markdown.
pub fn markdown(documents: &[FaultsResults]) -> String {
    let table = reliability_table(&rows(documents));
    let mut out = format!("| {} |\n", table.header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(table.header.len())));
    for row in &table.rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// One fault of one stack in detail.
#[derive(Debug, Serialize)]
struct Detail {
    stack: String,
    fault: String,
    detail: String,
    requests: u64,
    unavailable: u64,
    refused: u64,
    failures: u64,
    examples: Vec<String>,
    window: String,
    recovery: String,
    met_target: Option<bool>,
    audit: String,
    audit_failures: Vec<String>,
}

#[derive(Debug, Serialize)]
struct SoakDetail {
    stack: String,
    minutes: String,
    requests: u64,
    failures: u64,
    rss: String,
    fds: String,
    threads: String,
    p99: String,
    flags: Vec<String>,
    audit: String,
}

/// What the page's template reads.
#[derive(Debug, Serialize)]
struct Page<'a> {
    title: &'static str,
    runs: Vec<String>,
    settings: Option<&'a bookstore_record::faults::FaultSettings>,
    table: Table,
    details: Vec<Detail>,
    soaks: Vec<SoakDetail>,
    target_ms: f64,
    command_lines: Vec<String>,
}

const TEMPLATE: &str = include_str!("../templates/reliability.html");

/// The reliability page.
pub fn render(documents: &[FaultsResults]) -> anyhow::Result<String> {
    let rows = rows(documents);
    let table = reliability_table(&rows);
    let details: Vec<Detail> = rows
        .iter()
        .flat_map(|row| row.faults.iter().map(move |f| (row.stack, f)))
        .map(|(stack, f)| Detail {
            stack: stack.to_owned(),
            fault: f.fault.clone(),
            detail: f.detail.clone(),
            requests: f.requests,
            unavailable: f.unavailable_503,
            refused: f.refused,
            failures: f.failures,
            examples: f.failure_examples.clone(),
            window: f
                .error_window
                .map_or("none".into(), |w| format!("{:+.2} s to {:+.2} s", w.first_s, w.last_s)),
            recovery: f.recovery_ms.map_or("never".into(), |ms| format!("{ms:.0} ms")),
            met_target: f.recovery_ms.map(|ms| ms <= RECOVERY_TARGET_MS),
            audit: format!(
                "{} acknowledged, {} rows, {} lost, {} unacknowledged of {} in doubt",
                f.audit.acknowledged_checkouts,
                f.audit.checkout_rows,
                f.audit.lost_acknowledged,
                f.audit.unacknowledged_rows,
                f.audit.in_doubt_checkouts
            ),
            audit_failures: f.audit.failures.clone(),
        })
        .collect();
    let soaks: Vec<SoakDetail> = rows
        .iter()
        .filter_map(|row| row.soak.map(|s| (row.stack, s)))
        .map(|(stack, s)| {
            let range = |values: &mut dyn Iterator<Item = f64>, unit: &str| {
                let values: Vec<f64> = values.collect();
                match (values.first(), values.iter().cloned().reduce(f64::max)) {
                    (Some(first), Some(max)) => format!(
                        "{first:.0} → {:.0} {unit} (max {max:.0})",
                        values[values.len() - 1]
                    ),
                    _ => "not sampled".into(),
                }
            };
            let p99: Vec<f64> = s.p99_ms_per_10s.iter().flatten().copied().collect();
            SoakDetail {
                stack: stack.to_owned(),
                minutes: format!("{:.1}", s.seconds / 60.0),
                requests: s.requests,
                failures: s.failures,
                rss: range(&mut s.samples.iter().map(|x| x.rss_bytes as f64 / 1_048_576.0), "MiB"),
                fds: range(&mut s.samples.iter().map(|x| x.open_fds as f64), ""),
                threads: range(&mut s.samples.iter().map(|x| x.threads as f64), ""),
                p99: match (
                    p99.iter().cloned().reduce(f64::min),
                    p99.iter().cloned().reduce(f64::max),
                ) {
                    (Some(low), Some(high)) => format!("{low:.1}–{high:.1} ms"),
                    _ => "no successes".into(),
                },
                flags: s.flags.clone(),
                audit: if s.audit.passed { "passed".into() } else { s.audit.failures.join("; ") },
            }
        })
        .collect();
    let runs: Vec<String> = documents
        .iter()
        .map(|d| format!("{} ({}, {})", d.run.id, d.run.status, d.run.started_at))
        .collect();
    let page = Page {
        title: "Faults under load and soak",
        runs,
        settings: documents.first().map(|d| &d.settings),
        table,
        details,
        soaks,
        target_ms: RECOVERY_TARGET_MS,
        command_lines: documents.iter().map(|d| d.run.command_line.join(" ")).collect(),
    };
    let environment = crate::page::page_environment("reliability.html", TEMPLATE)?;
    let html =
        environment.get_template("reliability.html")?.render(minijinja::value::Serde(&page))?;
    Ok(html)
}
