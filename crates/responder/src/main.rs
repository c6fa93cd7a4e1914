//! `responder`: the fastest honest HTTP/1.1 server this machine can run, as a yardstick.
//!
//! ```text
//! cargo run --release -p bookstore-responder -- --bind 127.0.0.1:0 --threads 2
//! ```
//!
//! Every request gets `200` with `content-type: application/json`, a `content-length`, a
//! `date` (as the stacks send) and canned bytes: for `/api/books/bench/small-json` a
//! small-json document of the contract's shape and of the stacks' size (so the suite
//! measures it beside the stacks' `smallJson`), for any other method or path
//! `{"status":"UP"}`. It does only the minimum — read, find each request's end with a
//! header scan (httparse), append the canned response, write — on one thread per core,
//! each with its own `SO_REUSEPORT` listener and its own epoll loop (mio), so the kernel
//! spreads connections and nothing crosses threads. Pipelined requests are answered in one
//! write. The suite measures it as the HTTP ceiling — what a stack's `/health` or
//! `smallJson` could reach on this machine at best — and the load generator's calibration
//! drives it to test the client rather than a server. (Measured against the hyper responder
//! it replaced: see docs/method.md, "The ceilings".)
//!
//! Prints `LISTENING <address>` on stdout once every listener accepts; stops on SIGINT or
//! SIGTERM.

use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::SystemTime;

use anyhow::Context as _;
use clap::Parser;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use nix::sys::signal::{SigSet, Signal};
use socket2::{Domain, Protocol, Socket, Type};

/// The minimal JSON responder used as the HTTP ceiling.
#[derive(Parser)]
#[command(name = "responder", version)]
struct Args {
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Threads, each with its own listener and event loop [default: number of CPUs].
    #[arg(long)]
    threads: Option<usize>,
    /// Hold this many bytes, written (so resident), for each open connection: a server
    /// whose memory per connection is known, for the tests of what measures it.
    #[arg(long, default_value_t = 0)]
    bytes_per_connection: usize,
    /// Spend this many microseconds on each request before answering it, waiting on the
    /// monotonic clock (not a millisecond timer): a server of known cost, whose capacity
    /// with `--threads 1` is about one request per this — for the tests and studies of what
    /// compares two servers (`loadgen ab`).
    #[arg(long, default_value_t = 0)]
    work_us: u64,
}

const HEALTH: &[u8] = br#"{"status":"UP"}"#;
/// The small-json document of SPEC §3, canned: the stacks build theirs per request (with
/// the time); the ceiling may not. As long as the longest stack's (whose name and tags are
/// the longest), so no stack answers with fewer bytes.
const SMALL_JSON: &[u8] = br#"{"service":"responder-ceiling","version":1,"now":"2026-01-01T00:00:00.000000Z","tags":["responder","canned","no-database","benchmark"]}"#;
const SMALL_JSON_PATH: &str = "/api/books/bench/small-json";

/// Read buffer per connection; grown while a request is incomplete.
const READ_CHUNK: usize = 4096;
/// Headers a request may have.
const MAX_HEADERS: usize = 32;
const LISTENER: Token = Token(usize::MAX);

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let threads =
        args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Blocked before any thread starts, so the serving threads inherit the mask and only
    // this thread's `wait` takes the signals.
    let mut stop = SigSet::empty();
    stop.add(Signal::SIGINT);
    stop.add(Signal::SIGTERM);
    stop.thread_block().context("cannot block SIGINT and SIGTERM")?;
    // The first listener fixes the port (port 0 picks one); the others join it.
    let first = listener(args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..threads {
        listeners.push(listener(addr).with_context(|| format!("cannot add a listener on {addr}"))?);
    }
    let ballast = args.bytes_per_connection;
    let work = std::time::Duration::from_micros(args.work_us);
    for listener in listeners {
        std::thread::spawn(move || {
            if let Err(e) = serve(listener, ballast, work) {
                eprintln!("responder: a serving thread stopped: {e}");
                std::process::exit(1);
            }
        });
    }
    println!("LISTENING {addr}");
    stop.wait().context("waiting for SIGINT or SIGTERM")?;
    Ok(()) // the serving threads end with the process
}

fn listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_port(true)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

/// The two canned responses, headers and body, rebuilt when the second of the `date`
/// header changes.
struct Responses {
    second: u64,
    health: Vec<u8>,
    small_json: Vec<u8>,
}

impl Responses {
    fn new() -> Self {
        let mut responses = Self { second: u64::MAX, health: Vec::new(), small_json: Vec::new() };
        responses.refresh();
        responses
    }

    fn refresh(&mut self) {
        let now = SystemTime::now();
        let second = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second == self.second {
            return;
        }
        self.second = second;
        let date = httpdate::fmt_http_date(now);
        self.health = response(HEALTH, &date);
        self.small_json = response(SMALL_JSON, &date);
    }

    fn for_path(&self, path: &str) -> &[u8] {
        if path == SMALL_JSON_PATH { &self.small_json } else { &self.health }
    }
}

fn response(body: &[u8], date: &str) -> Vec<u8> {
    let mut bytes = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\ndate: {date}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// One keep-alive connection: what was read and not yet answered, what is answered and not
/// yet written.
struct Connection {
    stream: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    /// `--bytes-per-connection`, held until the connection closes.
    _ballast: Vec<u8>,
}

impl Connection {
    /// Reads everything available, answers every complete request, writes what it can.
    /// `false` when the connection is done (closed by the peer, an error, a request it
    /// cannot read).
    fn drive(&mut self, responses: &Responses, work: std::time::Duration) -> bool {
        loop {
            if self.input.capacity() - self.input.len() < READ_CHUNK / 4 {
                self.input.reserve(READ_CHUNK);
            }
            let start = self.input.len();
            let spare = self.input.capacity() - start;
            self.input.resize(start + spare, 0);
            match self.stream.read(&mut self.input[start..]) {
                Ok(0) => return false,
                Ok(n) => self.input.truncate(start + n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.input.truncate(start);
                    break;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => self.input.truncate(start),
                Err(_) => return false,
            }
        }
        if !self.answer(responses, work) {
            return false;
        }
        self.flush()
    }

    /// Appends a response for each complete request in the input (after `work` each) and
    /// drops it from there.
    fn answer(&mut self, responses: &Responses, work: std::time::Duration) -> bool {
        let mut consumed = 0;
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut request = httparse::Request::new(&mut headers);
            let head = match request.parse(&self.input[consumed..]) {
                Ok(httparse::Status::Complete(head)) => head,
                Ok(httparse::Status::Partial) => break,
                Err(_) => return false,
            };
            let mut body = 0;
            for header in request.headers.iter() {
                if header.name.eq_ignore_ascii_case("content-length") {
                    match std::str::from_utf8(header.value).ok().and_then(|v| v.trim().parse().ok())
                    {
                        Some(length) => body = length,
                        None => return false,
                    }
                } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                    return false; // a chunked request body: not this yardstick's business
                }
            }
            if self.input.len() - consumed < head + body {
                break;
            }
            bookstore_domain::spend(work);
            self.output.extend_from_slice(responses.for_path(request.path.unwrap_or("/")));
            consumed += head + body;
        }
        self.input.drain(..consumed);
        true
    }

    /// Writes what the socket takes; the rest waits for the next writable event.
    fn flush(&mut self) -> bool {
        let mut written = 0;
        while written < self.output.len() {
            match self.stream.write(&self.output[written..]) {
                Ok(0) => return false,
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.output.drain(..written);
        true
    }
}

/// One thread's event loop over its listener and the connections it accepted, each
/// holding `ballast` bytes, each request costing `work`.
fn serve(
    listener: std::net::TcpListener,
    ballast: usize,
    work: std::time::Duration,
) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut listener = TcpListener::from_std(listener);
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut connections: Vec<Option<Connection>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut responses = Responses::new();
    loop {
        match poll.poll(&mut events, None) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            other => other?,
        }
        responses.refresh();
        for event in &events {
            if event.token() == LISTENER {
                loop {
                    let mut stream = match listener.accept() {
                        Ok((stream, _)) => stream,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        // Out of file descriptors or a connection reset before accept: the
                        // listener stays; the next event tries again.
                        Err(_) => break,
                    };
                    let _ = stream.set_nodelay(true);
                    let index = free.pop().unwrap_or_else(|| {
                        connections.push(None);
                        connections.len() - 1
                    });
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    if poll.registry().register(&mut stream, Token(index), interest).is_err() {
                        free.push(index);
                        continue;
                    }
                    let input = Vec::with_capacity(READ_CHUNK);
                    // Written, not just allocated: untouched pages are not resident.
                    let _ballast = vec![1u8; ballast];
                    let output = Vec::new();
                    connections[index] = Some(Connection { stream, input, output, _ballast });
                }
                continue;
            }
            let index = event.token().0;
            let Some(connection) = connections.get_mut(index).and_then(Option::as_mut) else {
                continue;
            };
            if !connection.drive(&responses, work) {
                let mut done = connections[index].take().expect("present above");
                let _ = poll.registry().deregister(&mut done.stream);
                free.push(index);
            }
        }
    }
}
