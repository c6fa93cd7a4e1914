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
//! The relay runs a current-thread tokio runtime on a thread of its own ([`Relay::start`]):
//! one thread, so its CPU is easy to tell apart and record.

use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

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
    tid: i32,
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
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
        let (tid_sender, tid) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new().name("db-relay".into()).spawn(move || {
            let _ = tid_sender.send(nix::unistd::gettid().as_raw());
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a listener in the runtime");
                tokio::select! {
                    () = serve(listener, upstream, round_trip / 2) => {}
                    _ = stopped => {}
                }
            });
        })?;
        let tid =
            tid.recv().map_err(|_| std::io::Error::other("the relay thread did not start"))?;
        Ok(Self { addr, tid, stop: Some(stop), thread: Some(thread) })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The relay thread's Linux thread id: its CPU time is in
    /// `/proc/self/task/<tid>/stat`, apart from the rest of the process.
    pub fn tid(&self) -> i32 {
        self.tid
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
        let Ok((client, _)) = listener.accept().await else { continue };
        tokio::spawn(async move {
            // A connection that fails is closed; the client sees it as the database would.
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
async fn pipe(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    delay: Duration,
) -> std::io::Result<()> {
    let (chunks, mut due) = mpsc::channel::<(Instant, Vec<u8>)>(CHUNKS_IN_FLIGHT);
    let read = async move {
        let mut buffer = vec![0u8; CHUNK_BYTES];
        loop {
            let read = from.read(&mut buffer).await?;
            if read == 0 {
                return Ok::<(), std::io::Error>(());
            }
            let at = Instant::now() + delay;
            if chunks.send((at, buffer[..read].to_vec())).await.is_err() {
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
    tokio::try_join!(read, write)?;
    Ok(())
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

/// Measures the relay at `target`: `samples` round trips of a 64-byte message to an echo
/// server on loopback, through the relay and directly, alternately (so both see the same
/// moment of the machine), each direct one subtracted from the relayed one next to it.
pub fn calibrate(target: Duration, samples: usize) -> std::io::Result<Calibration> {
    use std::io::{Read, Write};
    let echo = std::net::TcpListener::bind("127.0.0.1:0")?;
    let upstream = echo.local_addr()?;
    std::thread::Builder::new().name("db-relay-echo".into()).spawn(move || {
        for stream in echo.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut buffer = [0u8; 4096];
                while let Ok(n @ 1..) = stream.read(&mut buffer) {
                    if stream.write_all(&buffer[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    })?;
    let relay = Relay::start("127.0.0.1:0".parse().expect("an address"), upstream, target)?;
    let open = |addr| -> std::io::Result<std::net::TcpStream> {
        let stream = std::net::TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(stream)
    };
    let (mut direct, mut relayed) = (open(upstream)?, open(relay.addr())?);
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
