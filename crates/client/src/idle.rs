//! Idle keep-alive connections held open to a server while something else is measured:
//! what many mostly idle clients cost a server (its memory per connection, its tail under
//! the load of the others).
//!
//! One thread with its own current-thread runtime holds them all (an idle socket costs the
//! client a task and a small buffer, no thread). Each connection sends `GET /health` once
//! it is open — held means answered, accepted and served rather than queued by the kernel —
//! and then now and then: at a random moment in the second half of every `ping_every`, so that the
//! pings of connections opened together do not come as one burst — which keeps a server
//! that closes connections idle for longer than its client timeout (the stacks' 10 s,
//! `--client-timeout-ms`) from dropping them as dead. Between pings it watches the socket:
//! a server that closes it, or answers a ping wrongly, is counted, not retried, so that a
//! party that drops connections is told apart from one that holds them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bookstore_fixture::random::SplitMix64;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Connections opened at once while the rest wait: the server's accept queue is bounded
/// (`net.core.somaxconn`, 4096 here, and the listeners' own backlog), and a connect that
/// overflows it waits for a SYN retry, a whole second.
const OPENING_AT_ONCE: usize = 256;
/// The most bytes a ping's answer may have: `/health`'s is a few dozen.
const ANSWER_BYTES_MAX: usize = 1024;

/// What the held connections came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleStatus {
    /// Connections asked for.
    pub asked: u64,
    /// Open now.
    pub held: u64,
    /// Could not be opened: refused, reset, or not answered 200 on a first `GET /health`
    /// within the connect timeout.
    pub refused: u64,
    /// Closed by the server while held, or answered a ping with anything but a 200.
    pub dropped: u64,
    /// Pings answered 200.
    pub pings: u64,
}

#[derive(Debug, Default)]
struct Counts {
    held: AtomicU64,
    refused: AtomicU64,
    dropped: AtomicU64,
    pings: AtomicU64,
}

/// Connections held open until [`IdleConnections::close`] (or drop).
#[derive(Debug)]
pub struct IdleConnections {
    asked: u64,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
    wake: Arc<tokio::sync::Notify>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// How long opening them all took.
    pub opening: Duration,
}

impl IdleConnections {
    /// Opens `count` connections to `addr` and returns once each is held — answered its
    /// first ping — or has failed (a connect and a ping wait at most `connect_timeout`
    /// each); they are then held, each pinging once per `ping_every`.
    pub fn open(
        addr: SocketAddr,
        count: u64,
        ping_every: Duration,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(tokio::sync::Notify::new());
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let started = Instant::now();
        let thread = {
            let (counts, stop, wake) = (Arc::clone(&counts), Arc::clone(&stop), Arc::clone(&wake));
            std::thread::Builder::new()
                .name("loadgen-idle".into())
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("the idle connections' runtime");
                    let local = tokio::task::LocalSet::new();
                    local.block_on(&runtime, async {
                        let hold = Hold { addr, ping_every, connect_timeout, counts, stop, wake };
                        hold.run(count, opened_tx).await;
                    });
                })
                .map_err(|e| format!("cannot start the idle connections' thread: {e}"))?
        };
        // The thread says when every connect has ended; if it died, so did the channel.
        opened_rx.recv().map_err(|_| "the idle connections' thread ended early".to_owned())?;
        let opening = started.elapsed();
        Ok(Self { asked: count, counts, stop, wake, thread: Some(thread), opening })
    }

    /// Their state now.
    pub fn status(&self) -> IdleStatus {
        let c = &self.counts;
        IdleStatus {
            asked: self.asked,
            held: c.held.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            pings: c.pings.load(Ordering::Relaxed),
        }
    }

    /// Closes them all; their state just before.
    pub fn close(mut self) -> IdleStatus {
        let status = self.status();
        self.shut();
        status
    }

    fn shut(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.wake.notify_waiters();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for IdleConnections {
    fn drop(&mut self) {
        self.shut();
    }
}

struct Hold {
    addr: SocketAddr,
    ping_every: Duration,
    connect_timeout: Duration,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
    wake: Arc<tokio::sync::Notify>,
}

impl Hold {
    async fn run(self, count: u64, opened: std::sync::mpsc::Sender<()>) {
        let hold = std::rc::Rc::new(self);
        let permits = std::rc::Rc::new(tokio::sync::Semaphore::new(OPENING_AT_ONCE));
        let mut tasks = Vec::with_capacity(count as usize);
        let mut connected = Vec::with_capacity(count as usize);
        for index in 0..count {
            let (hold, permits) = (std::rc::Rc::clone(&hold), std::rc::Rc::clone(&permits));
            let (done_tx, done_rx) = tokio::sync::oneshot::channel();
            connected.push(done_rx);
            tasks.push(tokio::task::spawn_local(async move {
                let permit = permits.acquire().await.expect("never closed");
                let held = match hold.connect().await {
                    // Held once the server has answered on it: accepted and served, not
                    // just queued by the kernel.
                    Some(mut stream) => hold.ping(&mut stream).await.then_some(stream),
                    None => None,
                };
                drop(permit);
                match held {
                    Some(_) => hold.counts.held.fetch_add(1, Ordering::Relaxed),
                    None => hold.counts.refused.fetch_add(1, Ordering::Relaxed),
                };
                let _ = done_tx.send(());
                if let Some(stream) = held {
                    hold.keep(stream, index).await;
                }
            }));
        }
        for done in connected {
            let _ = done.await;
        }
        let _ = opened.send(());
        // Until closed: the tasks run until the stop (or the server drops them).
        let stopped = hold.wake.notified();
        tokio::pin!(stopped);
        stopped.as_mut().enable();
        if !hold.stop.load(Ordering::Acquire) {
            stopped.await;
        }
        for task in tasks {
            task.abort();
        }
    }

    async fn connect(&self) -> Option<tokio::net::TcpStream> {
        let connect = tokio::net::TcpStream::connect(self.addr);
        tokio::time::timeout(self.connect_timeout, connect).await.ok()?.ok()
    }

    /// Holds `stream`, pinging it, until the stop or the server drops it.
    async fn keep(&self, mut stream: tokio::net::TcpStream, index: u64) {
        let mut random = SplitMix64::new(index ^ 0x1d1e);
        loop {
            // Somewhere in the second half of the period.
            let share = 0.5 + 0.5 * (random.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let next_ping = tokio::time::Instant::now() + self.ping_every.mul_f64(share);
            // Idle until then; a readable socket now means the server closed it (or sent
            // what nobody asked for).
            let mut probe = [0u8; 1];
            tokio::select! {
                () = tokio::time::sleep_until(next_ping) => {}
                _ = stream.read(&mut probe) => return self.lost(),
            }
            if !self.ping(&mut stream).await {
                return self.lost();
            }
        }
    }

    /// `GET /health` on `stream`: whether it was answered 200 (within the connect timeout).
    async fn ping(&self, stream: &mut tokio::net::TcpStream) -> bool {
        let exchange = async {
            let request = format!(
                "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
                bookstore_registry::routes::HEALTH,
                self.addr
            );
            stream.write_all(request.as_bytes()).await.ok()?;
            let mut answer = [0u8; ANSWER_BYTES_MAX];
            let mut filled = 0;
            loop {
                match stream.read(&mut answer[filled..]).await {
                    Ok(0) | Err(_) => return None,
                    Ok(read) => filled += read,
                }
                match crate::engine::conn::parse(&answer[..filled]) {
                    Ok(Some(head)) => return Some(head.response_in(&answer[..filled]).status),
                    Ok(None) if filled < answer.len() => {}
                    _ => return None,
                }
            }
        };
        let answered = tokio::time::timeout(self.connect_timeout, exchange).await;
        let ok = matches!(answered, Ok(Some(200)));
        if ok {
            self.counts.pings.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    fn lost(&self) {
        self.counts.held.fetch_sub(1, Ordering::Relaxed);
        self.counts.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// Raises this process's open-files limit to its hard limit (processes it starts after
/// inherit it) and returns the limit now: holding ten thousand connections takes as many
/// descriptors in the client and in the server, above a default soft limit of 1,024.
pub fn raise_open_files_limit() -> Result<u64, String> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)
        .map_err(|e| format!("cannot read the open-files limit: {e}"))?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
            .map_err(|e| format!("cannot raise the open-files limit to {hard}: {e}"))?;
    }
    Ok(hard)
}
