//! A TCP relay that adds latency: what a database on another host costs each round trip.
//!
//! Every byte read from one side is written to the other `one_way` later, in each direction,
//! so a request and its answer cross it in `2 × one_way` = the round trip asked for. The
//! delay is per chunk, measured from when the chunk was read: messages sent back to back
//! (a pipelined batch, a COPY stream) all arrive about `one_way` after they were sent, not
//! one delay after another — a relay that slept per chunk in turn would turn a pipeline of
//! N messages into N round trips. Bytes pass unchanged and in order.
//!
//! The waits use a timerfd per direction, not tokio's timer: tokio's wheel rounds every
//! sleep up to the next millisecond, which would turn a 250 µs round trip into about 2 ms.
//! A timerfd wakes within tens of microseconds of its deadline on an idle core, without
//! spinning (spinning would take a core from the stacks being measured).
//!
//! [`Relay::start`] runs it on a current-thread tokio runtime on a thread of its own; the
//! `db-relay` binary is that in a process of its own, which is what the suite starts (so
//! its CPU is recorded apart from the client's).

use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// The largest chunk read at once.
const CHUNK_BYTES: usize = 64 * 1024;
/// Chunks on their way in one direction before the reader waits (back-pressure): 16 MiB at
/// most, far more than a pool's connection has in flight.
const CHUNKS_IN_FLIGHT: usize = 256;

/// A relay running on its own thread; stopped when dropped.
pub struct Relay {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Listens on `listen` (port 0: any free one) and relays every connection to `upstream`
    /// with `round_trip / 2` added in each direction.
    pub fn start(
        listen: SocketAddr,
        upstream: SocketAddr,
        round_trip: Duration,
    ) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        let thread = std::thread::Builder::new().name("db-relay".into()).spawn(move || {
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a listener in the runtime");
                tokio::select! {
                    () = serve(listener, upstream, round_trip / 2) => {}
                    _ = stopped => {}
                }
            });
        })?;
        Ok(Self { addr, stop: Some(stop), thread: Some(thread) })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts until the future is dropped; each connection relayed on a task of its own.
pub async fn serve(listener: TcpListener, upstream: SocketAddr, one_way: Duration) {
    loop {
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(_) => {
                // Out of descriptors, most likely: accepting again at once would spin on
                // the one thread the delayed writes need.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            // Each direction ends by itself (end of stream or error) after passing on what
            // it holds; the relay then closes both sides, as the peers themselves did.
            let _ = relay(client, upstream, one_way).await;
        });
    }
}

/// Relays one connection both ways until both sides have closed.
pub async fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    one_way: Duration,
) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::try_join!(
        pipe(client_read, server_write, one_way),
        pipe(server_read, client_write, one_way)
    )?;
    Ok(())
}

/// One direction: a reader stamps each chunk with when it is due; a writer writes each one
/// when due, in order. The two run side by side, so a chunk's wait overlaps the next ones'.
/// When the reader stops (end of stream or error), the writer still delivers what was read
/// before, then passes the end of stream on; when the writer fails, the reader stops at its
/// next chunk.
async fn pipe(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    delay: Duration,
) -> std::io::Result<()> {
    let (chunks, mut due) = mpsc::channel::<(Instant, Bytes)>(CHUNKS_IN_FLIGHT);
    let read = async move {
        let mut buffer = BytesMut::with_capacity(CHUNK_BYTES);
        loop {
            // Reuses the allocation's unused part; a new one only when a chunk used it up.
            buffer.reserve(CHUNK_BYTES);
            if from.read_buf(&mut buffer).await? == 0 {
                return Ok::<(), std::io::Error>(());
            }
            let at = Instant::now() + delay;
            if chunks.send((at, buffer.split().freeze())).await.is_err() {
                return Ok(()); // the writer stopped: its error is the one to report
            }
        }
    };
    let write = async move {
        let timer = Timer::new()?;
        while let Some((at, chunk)) = due.recv().await {
            timer.sleep_until(at).await?;
            to.write_all(&chunk).await?;
        }
        // The reader saw end of stream: pass it on, after the delay of the bytes before it.
        to.shutdown().await
    };
    let (read, write) = tokio::join!(read, write);
    write.and(read)
}

/// A monotonic one-shot timer with microsecond resolution, awaited through the runtime.
struct Timer(AsyncFd<Fd>);

/// nix's timerfd as tokio's `AsyncFd` wants it.
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl Timer {
    #[allow(unsafe_code)] // registering a descriptor this value owns; see SAFETY
    fn new() -> std::io::Result<Self> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // SAFETY: `Fd` owns the timerfd (nix's TimerFd holds an OwnedFd) and always returns
        // that one descriptor; the AsyncFd owns the `Fd`, so the descriptor stays open and
        // the same for the AsyncFd's whole life, and is closed only when it is dropped.
        let registered = unsafe { AsyncFd::register_with_interest(Fd(fd), Interest::READABLE) };
        Ok(Self(registered.map_err(|e| e.into_parts().1)?))
    }

    async fn sleep_until(&self, at: Instant) -> std::io::Result<()> {
        let Some(left) = at.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
            return Ok(());
        };
        self.0
            .get_ref()
            .0
            .set(Expiration::OneShot(TimeSpec::from_duration(left)), TimerSetTimeFlags::empty())?;
        loop {
            let mut ready = self.0.readable().await?;
            // Reading the expiry count clears it; not expired yet reads as "would block".
            match ready.try_io(|fd| read_expirations(&fd.get_ref().0)) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }
}

fn read_expirations(fd: &TimerFd) -> std::io::Result<()> {
    let mut count = [0u8; 8];
    nix::unistd::read(fd.as_fd(), &mut count)?;
    Ok(())
}

/// What the relay adds to a round trip when asked for `target`, measured on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The round trip asked for.
    pub target: Duration,
    /// Round trips measured.
    pub samples: usize,
    /// The relayed round trip minus the direct one (the same echo server, without the
    /// relay, measured alternately), median and 99th percentile.
    pub added_p50: Duration,
    /// See `added_p50`.
    pub added_p99: Duration,
}

impl Calibration {
    /// How far the median added latency is from the target (positive: longer).
    pub fn error_p50_us(&self) -> f64 {
        self.added_p50.as_secs_f64() * 1e6 - self.target.as_secs_f64() * 1e6
    }

    /// How far the 99th percentile is from the target.
    pub fn error_p99_us(&self) -> f64 {
        self.added_p99.as_secs_f64() * 1e6 - self.target.as_secs_f64() * 1e6
    }
}

/// An echo server on loopback (every byte back as it comes, a thread per connection), for
/// calibrating the relay and for tests; stops accepting when dropped.
pub struct EchoServer {
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl EchoServer {
    /// Listens on a free loopback port.
    pub fn start() -> std::io::Result<Self> {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new().name("echo".into()).spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                std::thread::spawn(move || {
                    let _ = stream.set_nodelay(true);
                    let mut buffer = vec![0u8; CHUNK_BYTES];
                    while let Ok(n @ 1..) = stream.read(&mut buffer) {
                        if stream.write_all(&buffer[..n]).is_err() {
                            return;
                        }
                    }
                });
            }
        })?;
        Ok(Self { addr, stop })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Wakes the accept so it sees the flag.
        let _ = std::net::TcpStream::connect(self.addr);
    }
}

/// Measures the relay at `target` in this process: an [`EchoServer`], a [`Relay`] in front
/// of it, and [`measure`].
pub fn calibrate(target: Duration, samples: usize) -> std::io::Result<Calibration> {
    let echo = EchoServer::start()?;
    let relay = Relay::start("127.0.0.1:0".parse().expect("an address"), echo.addr(), target)?;
    measure(echo.addr(), relay.addr(), target, samples)
}

/// Measures a relay listening at `relayed` in front of the echo server at `direct`, asked
/// for `target`: `samples` round trips of a 64-byte message through it and directly,
/// alternately (so both see the same moment of the machine), each direct one subtracted
/// from the relayed one next to it.
pub fn measure(
    direct: SocketAddr,
    relayed: SocketAddr,
    target: Duration,
    samples: usize,
) -> std::io::Result<Calibration> {
    use std::io::{Read, Write};
    let open = |addr| -> std::io::Result<std::net::TcpStream> {
        let stream = std::net::TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(stream)
    };
    let (mut direct, mut relayed) = (open(direct)?, open(relayed)?);
    let round_trip = |stream: &mut std::net::TcpStream| -> std::io::Result<Duration> {
        let (message, mut answer) = ([7u8; 64], [0u8; 64]);
        let sent = Instant::now();
        stream.write_all(&message)?;
        stream.read_exact(&mut answer)?;
        Ok(sent.elapsed())
    };
    let mut added = Vec::with_capacity(samples);
    for _ in 0..samples.max(1) {
        let base = round_trip(&mut direct)?;
        let through = round_trip(&mut relayed)?;
        added.push(through.saturating_sub(base));
    }
    added.sort();
    let at = |q: f64| added[((added.len() - 1) as f64 * q).round() as usize];
    Ok(Calibration { target, samples: added.len(), added_p50: at(0.5), added_p99: at(0.99) })
}

/// The address `url` (`scheme://user@host:port/…`, e.g. a PostgreSQL URL) connects to: what
/// a relay in front of it forwards to.
pub fn url_address(url: &str) -> Result<SocketAddr, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let host = parsed.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = parsed.port().ok_or_else(|| format!("{url}: no port"))?;
    std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} has no address"))
}

/// `url` sent through a relay listening at `via` instead.
pub fn url_through(url: &str, via: SocketAddr) -> Result<String, String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    parsed.set_ip_host(via.ip()).map_err(|()| format!("{url}: cannot have a host"))?;
    parsed.set_port(Some(via.port())).map_err(|()| format!("{url}: cannot have a port"))?;
    Ok(parsed.into())
}
