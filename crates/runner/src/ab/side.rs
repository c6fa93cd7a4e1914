//! A side of the question: a URL someone else started, a stack of the registry, or a
//! command (a binary and its flags) that starts a server keeping the contract — and, for
//! the last two, its process.

use std::path::{Path, PathBuf};

use bookstore_record::ab::Party;
use bookstore_registry::Tuning;
use bookstore_registry::stacks::{self, StackInfo};

use crate::harness::server::ServerProcess;

/// What A or B is.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    /// A running server, by its URL (`http://host:port`).
    Url(String),
    /// A stack of the registry (a preset, or a framework+serializer+access triple), started
    /// from the release binaries as the suite starts it.
    Stack(StackInfo),
    /// A binary and its flags; started with `--bind` and `DATABASE_URL` as a stack is.
    Command {
        /// The program.
        program: PathBuf,
        /// Its flags.
        args: Vec<String>,
    },
}

impl Side {
    /// `text` as a side: `http://…` a URL, a name of the registry a stack, anything else a
    /// command line (the program, then its flags, split at spaces).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.starts_with("http://") {
            return Ok(Side::Url(text.trim_end_matches('/').to_owned()));
        }
        if let Ok(stack) = stacks::find(text) {
            return Ok(Side::Stack(stack));
        }
        let mut words = text.split_whitespace();
        let program = words.next().ok_or("an empty side: give a URL, a stack or a command")?;
        if !Path::new(program).is_file() {
            return Err(format!(
                "{program:?} is neither a URL (http://…), a stack of the registry (`loadgen stacks --composed`) nor a program that exists"
            ));
        }
        Ok(Side::Command { program: program.into(), args: words.map(str::to_owned).collect() })
    }

    /// Whether the run starts it (and so restarts it between blocks).
    pub fn starts_here(&self) -> bool {
        !matches!(self, Side::Url(_))
    }

    /// As the results record it, under `label`.
    pub fn record(&self, label: &str) -> Party {
        let (kind, what) = match self {
            Side::Url(url) => ("url", url.clone()),
            Side::Stack(stack) => ("stack", stack.identity.service.to_owned()),
            Side::Command { program, args } => {
                let line = std::iter::once(program.display().to_string())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                ("command", line)
            }
        };
        Party { label: label.to_owned(), kind: kind.to_owned(), what }
    }

    /// A fresh process of this side on `database_url`, ready (answering `/health/db`); its
    /// log in `logs`. `None` for a URL.
    pub fn start(
        &self,
        name: &str,
        bin_dir: &Path,
        tuning: &Tuning,
        database_url: &str,
        logs: &Path,
    ) -> Result<Option<ServerProcess>, String> {
        let (binary, args) = match self {
            Side::Url(_) => return Ok(None),
            Side::Stack(stack) => (bin_dir.join(stack.binary), stack.args(tuning)),
            Side::Command { program, args } => (program.clone(), args.clone()),
        };
        // In the environment, not the arguments: those are visible to every user in `ps`.
        let env = [("DATABASE_URL", database_url)];
        let mut server =
            ServerProcess::start(name, &binary, &args, &env, logs.join(format!("{name}.log")))?;
        server.wait_ready("/health/db")?;
        Ok(Some(server))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_a_url_a_stack_or_a_program_that_exists() {
        assert_eq!(
            Side::parse("http://127.0.0.1:8081/").unwrap(),
            Side::Url("http://127.0.0.1:8081".into())
        );
        assert!(
            matches!(Side::parse("axum+sonic-rs+sqlx"), Ok(Side::Stack(s)) if s.tags.serializer == "sonic-rs")
        );
        let command = Side::parse("/bin/sh -c true").unwrap();
        assert_eq!(
            command,
            Side::Command { program: "/bin/sh".into(), args: vec!["-c".into(), "true".into()] }
        );
        assert!(command.starts_here() && !Side::parse("http://x:1").unwrap().starts_here());
        let error = Side::parse("./no-such-build --workers 2").unwrap_err();
        assert!(error.contains("neither a URL"), "{error}");
        assert_eq!(command.record("B").what, "/bin/sh -c true");
    }
}
