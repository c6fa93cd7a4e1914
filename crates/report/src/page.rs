//! The pages' shell: one style sheet, one head, the SVG chart macros.

use minijinja::Environment;

/// The SVG chart macros (`{% import "charts.html" as charts %}`).
pub const CHARTS_TEMPLATE: &str = include_str!("../templates/charts.html");
/// The pages' style sheet (`{% include "style.html" %}` inside `<head>`).
pub const STYLE_TEMPLATE: &str = include_str!("../templates/style.html");
/// The pages' shell: head, style, `<h1>{{ title }}</h1>`, then the page's `body` block.
pub const PAGE_TEMPLATE: &str = include_str!("../templates/page.html");

/// A template environment for a page in this style: `{% extends "page.html" %}`, with
/// `charts.html` to import; the page's own template is added as `name`.
pub fn page_environment(
    name: &'static str,
    template: &'static str,
) -> Result<Environment<'static>, minijinja::Error> {
    let mut environment = Environment::new();
    environment.add_template("charts.html", CHARTS_TEMPLATE)?;
    environment.add_template("style.html", STYLE_TEMPLATE)?;
    environment.add_template("page.html", PAGE_TEMPLATE)?;
    environment.add_template(name, template)?;
    Ok(environment)
}

/// For the pages' tests: whether `html` reads in a window `width_px` wide without the page
/// scrolling sideways (a wide table scrolls in its own box instead), as
/// `scripts/screenshot-summary.sh --fits` finds it in headless Chromium. `Ok(false)` when the
/// check was skipped because `BOOKSTORE_NO_BROWSER` is set (scripts/test.sh sets it where
/// Chromium cannot be installed, and says so); `Err` with the script's words otherwise.
pub fn check_fits(html: &str, width_px: u32) -> Result<bool, String> {
    if std::env::var_os("BOOKSTORE_NO_BROWSER").is_some() {
        return Ok(false);
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = std::env::temp_dir().join(format!(
        "bookstore-page-{}-{:?}.html",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&page, html).map_err(|e| format!("cannot write {}: {e}", page.display()))?;
    let output = std::process::Command::new(root.join("scripts/screenshot-summary.sh"))
        .args(["--fits", &width_px.to_string()])
        .arg(&page)
        .output();
    let _ = std::fs::remove_file(&page);
    let output = output.map_err(|e| format!("cannot run scripts/screenshot-summary.sh: {e}"))?;
    if output.status.success() {
        Ok(true)
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
