//! What every server's `main` does: read and validate the configuration, set up logging,
//! bind the listener, serve until SIGINT/SIGTERM, and report failure as one line.

use std::future::Future;
use std::io::IsTerminal;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Command, FromArgMatches};
use tracing_subscriber::EnvFilter;

use crate::config::{BlockingArgs, ComposedArgs, ServerArgs, ServerConfig};
use bookstore_registry::Identity;
use bookstore_registry::routes::HEALTH_DB;
use bookstore_registry::stacks::Layout;
use bookstore_registry::stacks::{StackInfo, Tags};
use bookstore_registry::{DbCalls, LISTEN_BACKLOG};

/// The future that tells a server to stop accepting and drain.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A server's entry point: serve on an already bound listener until `shutdown` completes.
/// Tests bind `127.0.0.1:0` and call it directly.
pub type ServeFn = fn(TcpListener, ServerConfig, Shutdown) -> anyhow::Result<()>;

/// A listener on `addr` with [`LISTEN_BACKLOG`], `SO_REUSEADDR` as the frameworks set it;
/// in the per-core layout `SO_REUSEPORT` too, so each worker can bind a listener of its own
/// beside it and the kernel spreads the connections over them.
pub fn listen(addr: std::net::SocketAddr, layout: Layout) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if layout == Layout::PerCore {
        socket.set_reuse_port(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// Runs a preset's binary: `main` of every preset stack is a call to this.
pub fn main(identity: Identity, db_calls: DbCalls, serve: ServeFn) -> ExitCode {
    run(identity, parse_invocation(&identity, db_calls, std::env::args_os()), serve)
}

/// Runs a composed stack's binary (`axum-any`, …): `--serializer` and `--access` choose the
/// triple on `framework`, and `pick` gives the entry point compiled in for its tags.
pub fn main_composed(framework: &'static str, pick: fn(Tags) -> Option<ServeFn>) -> ExitCode {
    let binary = composed_binary(framework);
    match parse_composed(framework, std::env::args_os()) {
        Ok((stack, invocation)) => match pick(stack.tags) {
            Some(serve) => run(stack.identity, Ok(invocation), serve),
            None => {
                eprintln!("{binary}: {} is not compiled into this binary", stack.identity.service);
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            let identity = Identity { service: binary, framework, default_port: 0 };
            run(identity, Err(error), |_, _, _| Ok(()))
        }
    }
}

/// Parses a composed binary's `args` into its stack (the triple its `--serializer` and
/// `--access` name on `framework`) and what to do. `--blocking-threads` and
/// `--blocking-pool` are taken only with `--access diesel`, the one that blocks.
pub fn parse_composed(
    framework: &'static str,
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<(StackInfo, Invocation), clap::Error> {
    let binary = composed_binary(framework);
    let command = BlockingArgs::augment_args(ComposedArgs::augment_args(ServerArgs::augment_args(
        Command::new(binary),
    )))
    .about(format!(
        "Any serializer and database access on {framework}: the composed stacks \
         {framework}+<serializer>+<access> of the bookstore benchmark (docs/running.md, \"One stack by hand\")."
    ))
    .version(env!("CARGO_PKG_VERSION"));
    let matches = command.clone().try_get_matches_from(args)?;
    let composed = ComposedArgs::from_arg_matches(&matches)?;
    let tags = composed.tags(framework);
    let stack = bookstore_registry::stacks::composed_of(tags).ok_or_else(|| {
        command.clone().error(
            clap::error::ErrorKind::InvalidValue,
            format!("{} is not a stack of the registry", tags.name()),
        )
    })?;
    let blocking = BlockingArgs::from_arg_matches(&matches)?;
    let blocking = match stack.db_calls {
        DbCalls::Blocking => Some(blocking),
        DbCalls::Async
            if blocking.blocking_threads.is_some() || blocking.blocking_pool.is_some() =>
        {
            return Err(command.clone().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--blocking-threads and --blocking-pool are for --access diesel; --access {} does not block",
                    tags.access
                ),
            ));
        }
        DbCalls::Async => None,
    };
    let server = ServerArgs::from_arg_matches(&matches)?;
    Ok((stack, invocation(&stack.identity, server, blocking)))
}

/// The binary of `framework`'s composed stacks, as the registry names it.
fn composed_binary(framework: &'static str) -> &'static str {
    bookstore_registry::stacks::FRAMEWORKS
        .iter()
        .find(|f| f.tag == framework)
        .map_or(framework, |f| f.binary)
}

/// Runs what a server binary was asked to do, as `identity`: serve with `serve`, probe, or
/// report a parse error (help and version on stdout, exit 0; anything else one line, 2).
fn run(
    identity: Identity,
    invocation: Result<Invocation, clap::Error>,
    serve: ServeFn,
) -> ExitCode {
    let config = match invocation {
        Ok(Invocation::Serve(config)) => config,
        Ok(Invocation::Probe(addr)) => {
            return match probe(addr, PROBE_TIMEOUT) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("{}: probe of http://{addr}{}: {error}", identity.service, HEALTH_DB);
                    ExitCode::FAILURE
                }
            };
        }
        Err(error) if !error.use_stderr() => {
            // --help, --version
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("{}: {}", identity.service, one_line(&error));
            return ExitCode::from(2);
        }
    };
    init_tracing();
    let timing_file = config.timing_file.clone();
    if timing_file.is_some() {
        bookstore_timing::enable();
    }
    crate::handlers::set_extra_work(config.extra_work);
    let result = listen(config.bind, config.layout)
        .map_err(|e| anyhow::anyhow!("cannot listen on {} (--bind/BIND): {e}", config.bind))
        .and_then(|listener| {
            tracing::info!(
                service = identity.service,
                bind = %config.bind,
                workers = config.workers,
                pool_max = config.pool.max_connections,
                blocking_threads = ?config.blocking_threads,
                "starting"
            );
            serve(listener, config, Box::pin(shutdown_signal()))
        })
        .and_then(|()| match &timing_file {
            Some(path) => bookstore_timing::append_report(path, identity.service).map_err(|e| {
                anyhow::anyhow!(
                    "cannot write the timing report to {} (--timing-file): {e}",
                    path.display()
                )
            }),
            None => Ok(()),
        });
    match result {
        Ok(()) => {
            tracing::info!(service = identity.service, "stopped");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{}: {error:#}", identity.service);
            ExitCode::FAILURE
        }
    }
}

/// What a server binary was asked to do.
#[derive(Debug)]
pub enum Invocation {
    /// Serve with this configuration.
    Serve(ServerConfig),
    /// `--probe`: check the server listening on this address and exit.
    Probe(SocketAddr),
}

/// How long `--probe` waits for the whole answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Parses `args` into the stack's typed configuration.
pub fn parse_config(
    identity: &Identity,
    db_calls: DbCalls,
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<ServerConfig, clap::Error> {
    match parse_invocation(identity, db_calls, args)? {
        Invocation::Serve(config) => Ok(config),
        Invocation::Probe(_) => Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            "--probe checks a running server; it has no configuration to serve with",
        )),
    }
}

/// Parses `args` into what the binary should do: serve, or probe a running server.
pub fn parse_invocation(
    identity: &Identity,
    db_calls: DbCalls,
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<Invocation, clap::Error> {
    let mut command = ServerArgs::augment_args(Command::new(identity.service));
    if db_calls == DbCalls::Blocking {
        command = BlockingArgs::augment_args(command);
    }
    // Last: the derived `Args` would otherwise put their own doc comments in its place.
    let command = command
        .about(format!(
            "The {} stack of the bookstore benchmark; its routes are listed in docs/contract.md.",
            identity.service
        ))
        .version(env!("CARGO_PKG_VERSION"));
    let matches = command.try_get_matches_from(args)?;
    let server = ServerArgs::from_arg_matches(&matches)?;
    let blocking = match db_calls {
        DbCalls::Blocking => Some(BlockingArgs::from_arg_matches(&matches)?),
        DbCalls::Async => None,
    };
    Ok(invocation(identity, server, blocking))
}

/// Serve with the configuration the flags give, or `--probe` the server at its address.
fn invocation(
    identity: &Identity,
    server: ServerArgs,
    blocking: Option<BlockingArgs>,
) -> Invocation {
    let probe = server.probe;
    let config = ServerConfig::new(identity, server, blocking);
    if probe { Invocation::Probe(probe_address(config.bind)) } else { Invocation::Serve(config) }
}

/// Where a probe connects for a server bound to `bind`: the wildcard address a container's
/// server listens on (`0.0.0.0`) is reached through loopback.
fn probe_address(bind: SocketAddr) -> SocketAddr {
    match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::from((Ipv4Addr::LOCALHOST, bind.port()))
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::from((Ipv6Addr::LOCALHOST, bind.port()))
        }
        _ => bind,
    }
}

/// `GET /health/db` on `addr` with plain std I/O (the probe runs once and exits; no
/// runtime): `Ok` if the status is 200 within `timeout`, else what went wrong.
pub fn probe(addr: SocketAddr, timeout: Duration) -> Result<(), String> {
    use std::io::{ErrorKind, Read, Write};
    // A timed-out read says "Resource temporarily unavailable": say what it means instead.
    let said = |e: std::io::Error| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => format!("no answer within {timeout:?}"),
        _ => e.to_string(),
    };
    let deadline = std::time::Instant::now() + timeout;
    let left = || {
        deadline.saturating_duration_since(std::time::Instant::now()).max(Duration::from_millis(1))
    };
    let mut stream = std::net::TcpStream::connect_timeout(&addr, timeout).map_err(said)?;
    stream.set_write_timeout(Some(left())).map_err(said)?;
    write!(stream, "GET {HEALTH_DB} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        .map_err(said)?;
    // The status line is all the probe needs; it arrives first.
    let mut head = Vec::with_capacity(64);
    let mut buffer = [0u8; 256];
    while !head.contains(&b'\n') {
        stream.set_read_timeout(Some(left())).map_err(said)?;
        let read = stream.read(&mut buffer).map_err(said)?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let status_line = String::from_utf8_lossy(&head);
    let status_line = status_line.lines().next().unwrap_or("").trim();
    match status_line.split_whitespace().nth(1) {
        Some("200") => Ok(()),
        Some(_) => Err(format!("answered {status_line:?}")),
        None => Err("no HTTP answer".to_owned()),
    }
}

/// clap's message without the usage advice, on one line: it names the flag and the problem.
fn one_line(error: &clap::Error) -> String {
    let rendered = error.to_string();
    let message: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.is_empty() && !line.starts_with("Usage:"))
        .collect();
    message.join(" ").trim_start_matches("error: ").to_owned()
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`: start-up, shutdown and errors;
/// nothing per request).
pub fn init_tracing() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = match signal(SignalKind::terminate()) {
        Ok(stream) => stream,
        Err(error) => {
            tracing::error!(%error, "cannot listen for SIGTERM; only Ctrl-C stops the server");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("shutdown requested");
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_burst_of_connections_beyond_std_s_backlog_is_taken_at_once() {
        // Nothing accepts: every connection waits in the backlog. With std's 128 the 129th
        // connect would wait for a SYN retransmission (1 s) and time out here.
        let listener = listen("127.0.0.1:0".parse().unwrap(), Layout::Framework).unwrap();
        let addr = listener.local_addr().unwrap();
        let connections: Vec<std::net::TcpStream> = (0..300)
            .map(|n| {
                std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(500))
                    .unwrap_or_else(|e| panic!("connection {n}: {e}"))
            })
            .collect();
        assert_eq!(connections.len(), 300);
    }

    use super::*;

    const IDENTITY: Identity =
        Identity { service: "axum-serde-sqlx", framework: "axum", default_port: 8081 };

    fn args(list: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("axum-serde-sqlx").chain(list.iter().copied()).map(Into::into).collect()
    }

    #[test]
    fn configuration_errors_are_one_line_naming_the_flag() {
        let missing =
            parse_config(&IDENTITY, DbCalls::Async, args(&["--database-url"])).unwrap_err();
        let message = one_line(&missing);
        assert!(!message.contains('\n') && message.contains("--database-url"), "{message}");
        let invalid = parse_config(
            &IDENTITY,
            DbCalls::Async,
            args(&["--database-url=postgres://a@b/c", "--pool-max=0"]),
        )
        .unwrap_err();
        let message = one_line(&invalid);
        assert!(message.starts_with("invalid value '0' for '--pool-max"), "{message}");
    }

    fn composed(list: &[&str]) -> Result<(StackInfo, Invocation), clap::Error> {
        let args = ["axum-any", "--database-url", "postgres://a@b/c"].iter().chain(list);
        parse_composed("axum", args.map(Into::into))
    }

    #[test]
    fn a_composed_binary_is_the_triple_its_flags_name_and_only_diesel_takes_blocking_threads() {
        let (stack, invocation) =
            composed(&["--serializer", "sonic-rs", "--access", "diesel-async"]).unwrap();
        assert_eq!(stack.identity.service, "axum+sonic-rs+diesel-async");
        let Invocation::Serve(config) = invocation else { panic!("{invocation:?}") };
        assert_eq!(config.bind.port(), stack.identity.default_port);
        assert_eq!(config.blocking_threads, None);

        let (blocking, invocation) =
            composed(&["--serializer=serde_json", "--access=diesel", "--blocking-threads=6"])
                .unwrap();
        assert_eq!(blocking.db_calls, DbCalls::Blocking);
        let Invocation::Serve(config) = invocation else { panic!("{invocation:?}") };
        assert_eq!(config.blocking_threads, Some(6));

        let refused =
            composed(&["--serializer=serde_json", "--access=sqlx", "--blocking-threads=6"])
                .unwrap_err();
        let message = one_line(&refused);
        assert!(message.contains("--access sqlx does not block"), "{message}");
        let unknown = one_line(&composed(&["--serializer=gson", "--access=sqlx"]).unwrap_err());
        assert!(unknown.contains("gson") && unknown.contains("sonic-rs"), "{unknown}");
        let missing = one_line(&composed(&["--serializer=serde_json"]).unwrap_err());
        assert!(missing.contains("--access"), "{missing}");
    }

    #[test]
    fn both_command_lines_are_well_formed() {
        for db_calls in [DbCalls::Async, DbCalls::Blocking] {
            let help = parse_config(&IDENTITY, db_calls, args(&["--help"])).unwrap_err();
            assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        }
        let mut command = ServerArgs::augment_args(Command::new("s"));
        command = BlockingArgs::augment_args(command);
        command.debug_assert();
    }

    #[test]
    fn help_names_the_stack_and_every_flag() {
        let help =
            parse_config(&IDENTITY, DbCalls::Blocking, args(&["--help"])).unwrap_err().to_string();
        assert!(help.starts_with("The axum-serde-sqlx stack of the bookstore benchmark"), "{help}");
        for flag in [
            "--bind",
            "--database-url",
            "--pool-max",
            "--workers",
            "--acquire-timeout-ms",
            "--timing-file",
            "--probe",
            "--blocking-threads",
            "--blocking-pool",
        ] {
            assert!(help.contains(flag), "{flag} missing from: {help}");
        }
    }

    #[test]
    fn async_stacks_do_not_accept_blocking_threads() {
        let error = parse_config(
            &IDENTITY,
            DbCalls::Async,
            args(&["--database-url=postgres://a@b/c", "--blocking-threads=4"]),
        )
        .unwrap_err();
        assert!(error.to_string().contains("--blocking-threads"));
        let error = parse_config(
            &IDENTITY,
            DbCalls::Async,
            args(&["--database-url=postgres://a@b/c", "--blocking-pool=shared"]),
        )
        .unwrap_err();
        assert!(error.to_string().contains("--blocking-pool"));
    }

    #[test]
    fn probe_asks_the_running_server_on_its_bind_address_through_loopback() {
        let invocation = parse_invocation(
            &IDENTITY,
            DbCalls::Async,
            args(&["--database-url=postgres://a@b/c", "--bind=0.0.0.0:8081", "--probe"]),
        )
        .unwrap();
        assert!(
            matches!(invocation, Invocation::Probe(addr) if addr == "127.0.0.1:8081".parse().unwrap()),
            "{invocation:?}"
        );
        assert!(
            parse_config(&IDENTITY, DbCalls::Async, args(&["--database-url=x", "--probe"]))
                .is_err()
        );
    }

    /// A one-shot HTTP server answering `status_line` to the first request, which it returns.
    fn answer_once(status_line: &'static str) -> (SocketAddr, std::thread::JoinHandle<String>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let thread = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 512];
            while !request.ends_with(b"\r\n\r\n") {
                let read = stream.read(&mut buffer).unwrap();
                assert!(read > 0, "the probe closed before its request ended");
                request.extend_from_slice(&buffer[..read]);
            }
            let body = "ok";
            let answer = format!("{status_line}\r\ncontent-length: {}\r\n\r\n{body}", body.len());
            // The probe hangs up once it has the status line: a write after that may meet a
            // reset socket, which is the probe's right, not a failure of the server.
            let _ = stream.write_all(answer.as_bytes());
            String::from_utf8(request).unwrap()
        });
        (addr, thread)
    }

    #[test]
    fn probe_passes_on_200_from_health_db_and_fails_on_anything_else() {
        let (addr, server) = answer_once("HTTP/1.1 200 OK");
        assert_eq!(probe(addr, PROBE_TIMEOUT), Ok(()));
        assert!(server.join().unwrap().starts_with("GET /health/db HTTP/1.1\r\n"));

        let (addr, server) = answer_once("HTTP/1.1 503 Service Unavailable");
        let error = probe(addr, PROBE_TIMEOUT).unwrap_err();
        assert!(error.contains("503"), "{error}");
        server.join().unwrap();

        // Listening but never answering (a hung server): no answer within the timeout.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let error = probe(silent.local_addr().unwrap(), Duration::from_millis(200)).unwrap_err();
        assert!(error.contains("no answer within"), "{error}");

        // Nothing listening: refused, said as such.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        assert!(probe(closed, PROBE_TIMEOUT).is_err());
    }

    #[test]
    fn blocking_stacks_default_to_one_thread_per_connection() {
        let config = parse_config(
            &IDENTITY,
            DbCalls::Blocking,
            args(&["--database-url=postgres://a@b/c", "--pool-max=12"]),
        )
        .unwrap();
        assert_eq!(config.blocking_threads, Some(12));
    }
}
