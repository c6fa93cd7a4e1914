//! The console: what a long run of `loadgen suite` or `dbbench` shows and hears at
//! the terminal.
//!
//! - [`progress`]: the bar (or plain lines, when the output is not a terminal).
//! - [`signal`]: Ctrl-C that stops a long run after its current window, keeping what was
//!   measured.

pub mod progress;
pub mod signal;

/// Writes `text` to `output` (its directory made), or to standard output for `-`.
pub fn write_output(output: &std::path::Path, text: &str) -> anyhow::Result<()> {
    if output == std::path::Path::new("-") {
        use std::io::Write as _;
        return Ok(std::io::stdout().lock().write_all(text.as_bytes())?);
    }
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(output, text)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))
}
