//! A stack (or the responder) running as a child process of the suite.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use bookstore_client::probe;

/// How long a stack may take to answer `/health/db` after start.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stack may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A server process; stopped when dropped, and by the kernel if the suite dies.
pub struct ServerProcess {
    name: String,
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    started: Instant,
    /// How it was started, to start it again in place ([`Self::restart`]).
    binary: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl ServerProcess {
    /// Starts `binary` with `args` plus `--bind 127.0.0.1:<free port>`, its output going to
    /// `log`.
    pub fn start(
        name: &str,
        binary: &Path,
        args: &[String],
        env: &[(&str, &str)],
        log: PathBuf,
    ) -> Result<Self, String> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let env: Vec<(String, String)> =
            env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let child = spawn(binary, args, &env, addr, &log)?;
        Ok(Self {
            name: name.to_owned(),
            child,
            addr,
            log,
            started: Instant::now(),
            binary: binary.to_owned(),
            args: args.to_vec(),
            env,
        })
    }

    /// Sends SIGTERM and waits for the process to exit (killed after the stop timeout);
    /// how it exited.
    pub fn terminate(&mut self) -> String {
        self.stop();
        match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => "not waited for".to_owned(),
        }
    }

    /// Starts it again on the same address with the same arguments, after it exited.
    pub fn restart(&mut self) -> Result<(), String> {
        self.child = spawn(&self.binary, &self.args, &self.env, self.addr, &self.log)?;
        self.started = Instant::now();
        Ok(())
    }

    /// Waits until it accepts TCP connections (a relay: no HTTP to ask), or says why not.
    pub fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = self.started + READY_TIMEOUT;
        loop {
            if let Some(exit) = self.exited() {
                return Err(exit);
            }
            if std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not listen within {READY_TIMEOUT:?}; log: {}",
                    self.name,
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until `GET path` answers 200; returns the time since start.
    pub fn wait_ready(&mut self, path: &str) -> Result<Duration, String> {
        let deadline = self.started + READY_TIMEOUT;
        loop {
            if let Some(exit) = self.exited() {
                return Err(exit);
            }
            if let Ok(response) = probe::get(self.addr, path, Duration::from_secs(2))
                && response.status == 200
            {
                return Ok(self.started.elapsed());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not answer {path} within {READY_TIMEOUT:?}; log: {}",
                    self.name,
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(why)` once the process has exited.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                Some(format!("{} exited with {status}; log: {}", self.name, self.log_tail()))
            }
            Ok(None) => None,
            Err(e) => Some(format!("{} cannot be waited for: {e}", self.name)),
        }
    }

    /// The end of its log, on one line.
    pub fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log) {
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            let _ = file.seek(SeekFrom::Start(len.saturating_sub(1500)));
            let _ = file.read_to_string(&mut text);
        }
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() { "(empty)".into() } else { text }
    }

    fn stop(&mut self) {
        bookstore_fixture::process::stop_child(&mut self.child, Signal::SIGTERM, STOP_TIMEOUT);
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `binary` listening on `addr`, its output appended to `log` (a stack may be started
/// more than once, and its log covers the whole run).
fn spawn(
    binary: &Path,
    args: &[String],
    env: &[(String, String)],
    addr: SocketAddr,
    log: &Path,
) -> Result<Child, String> {
    let output = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut command = Command::new(binary);
    command
        .args(args)
        .arg("--bind")
        .arg(addr.to_string())
        .env("RUST_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(output.try_clone().map_err(|e| e.to_string())?)
        .stderr(output);
    bookstore_fixture::process::spawn_supervised(command)
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))
}

/// Waits until a server someone else started answers `path` at `addr` with 200 (a
/// container may still be opening its pool), up to the time a started stack gets.
pub fn wait_answering(addr: std::net::SocketAddr, path: &str) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        match probe::get(addr, path, Duration::from_secs(2)) {
            Ok(response) if response.status == 200 => return Ok(()),
            Ok(response) if Instant::now() > deadline => {
                return Err(format!("{path} answered {} for {READY_TIMEOUT:?}", response.status));
            }
            Err(error) if Instant::now() > deadline => {
                return Err(format!("{path} did not answer within {READY_TIMEOUT:?}: {error}"));
            }
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
