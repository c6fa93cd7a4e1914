//! Idle connections held open to a server: what they cost it, and a server that does not
//! hold them.

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bookstore_client::idle::IdleConnections;
use bookstore_client::procfs;

/// Long enough that no ping falls inside a test: what is measured is the holding.
const NO_PINGS: Duration = Duration::from_secs(600);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The responder (built beside this test by `cargo build --workspace --bins`), one thread,
/// holding `bytes` per connection; its process and address.
fn responder(bytes: usize) -> (Child, SocketAddr) {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().and_then(|deps| deps.parent()).unwrap().join("responder");
    assert!(binary.is_file(), "run `cargo build --workspace --bins` first (scripts/test.sh does)");
    let mut child = Command::new(binary)
        .args(["--bind", "127.0.0.1:0", "--threads", "1"])
        .args(["--bytes-per-connection", &bytes.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line.trim().strip_prefix("LISTENING ").unwrap().parse().unwrap();
    (child, addr)
}

#[test]
fn the_memory_per_connection_of_a_server_that_holds_a_known_buffer_for_each_is_its_slope() {
    const BALLAST: usize = 256 * 1024;
    const STEP: u64 = 100;
    let (mut child, addr) = responder(BALLAST);
    let pid = child.id();
    let mut points = vec![(0.0, procfs::rss_bytes(pid).unwrap() as f64)];
    // Held all at once, step by step: nothing freed between the readings.
    let mut held = Vec::new();
    for step in 1..=4 {
        let connections = IdleConnections::open(addr, STEP, NO_PINGS, CONNECT_TIMEOUT).unwrap();
        let status = connections.status();
        assert_eq!((status.held, status.refused), (STEP, 0), "{status:?}");
        held.push(connections);
        points.push(((step * STEP) as f64, procfs::rss_bytes(pid).unwrap() as f64));
    }
    let slope = bookstore_stats::Line::fit(&points).unwrap().slope;
    child.kill().unwrap();
    // The ballast, and the responder's own buffers (a 4 KiB read buffer and a response) on
    // top: within 16 KiB of it.
    let tolerance = 16.0 * 1024.0;
    assert!(
        slope >= BALLAST as f64 && slope <= BALLAST as f64 + tolerance,
        "{:.1} KiB per connection, expected {} KiB to {} KiB more: {points:?}",
        slope / 1024.0,
        BALLAST / 1024,
        tolerance / 1024.0
    );
}

#[test]
fn a_server_that_closes_idle_connections_is_seen_dropping_them_and_a_closed_port_refusing() {
    // Answers each connection's first request, then closes it after 200 ms.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut stream = stream;
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nUP");
                std::thread::sleep(Duration::from_millis(200));
            });
        }
    });
    let connections = IdleConnections::open(addr, 5, NO_PINGS, CONNECT_TIMEOUT).unwrap();
    assert_eq!(connections.status().held, 5, "each answered its first ping");
    let deadline = Instant::now() + Duration::from_secs(30);
    while connections.status().dropped < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = connections.close();
    assert_eq!((status.held, status.dropped, status.refused), (0, 5, 0), "{status:?}");

    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let status = IdleConnections::open(closed, 3, NO_PINGS, CONNECT_TIMEOUT).unwrap().close();
    assert_eq!((status.held, status.refused), (0, 3), "nothing listens there: {status:?}");
}
