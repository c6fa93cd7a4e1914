//! The peer answers the workspace's book lookup as the stacks do: the same body for a
//! seeded book, the contract's 404 and 400, on its own connection per thread.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use bookstore_conformance::{Client, TestApp, stacks};

/// The peer binary on `database_url`, two threads; killed when dropped.
struct Peer(Child, Client);

impl Peer {
    async fn start(database_url: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_peer-tfb"))
            .args(["--bind", &addr.to_string(), "--workers", "2"])
            .env("DATABASE_URL", database_url)
            .spawn()
            .unwrap();
        let client = Client::new(addr, "peer-tfb");
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            assert!(Instant::now() < deadline, "the peer did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self(child, client)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_peer_answers_a_book_as_the_stacks_do_and_the_contracts_errors() {
    // A stack on the same seeded database: its answers are the contract's.
    let stack = TestApp::spawn(&stacks::AXUM_SERDE_JSON_TOKIO_POSTGRES).await;
    let peer = Peer::start(stack.database_url()).await;
    assert_eq!(peer.1.get("/health/db").await.status, 200);
    for id in [1, 5, 777, 20_000] {
        let path = format!("/api/books/{id}");
        let (ours, theirs) = (stack.get(&path).await, peer.1.get(&path).await);
        assert_eq!(theirs.status, 200, "{}", theirs.text());
        assert_eq!(theirs.json(), ours.json(), "book {id}");
    }
    let missing = peer.1.get("/api/books/20001").await;
    assert_eq!((missing.status, missing.json()["error"].as_str()), (404, Some("not_found")));
    assert_eq!(missing.json(), stack.get("/api/books/20001").await.json());
    assert_eq!(peer.1.get("/api/books/abc").await.status, 400);
}
