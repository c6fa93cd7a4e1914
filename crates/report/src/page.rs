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
