//! The responder as the suite and a client see it: HTTP/1.1 answers on a keep-alive
//! connection, pipelined requests answered in order, bodies skipped, the small-json document
//! as long as the longest stack's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use bookstore_client::scenario::{Answer, body};

struct Responder {
    child: Child,
    addr: String,
}

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Responder {
    let mut child = Command::new(env!("CARGO_BIN_EXE_responder"))
        .args(["--bind", "127.0.0.1:0", "--threads", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.strip_prefix("LISTENING ").expect("LISTENING <addr>").trim().to_owned();
    Responder { child, addr }
}

/// Reads one response: its head and its body (by `content-length`).
fn read_response(reader: &mut BufReader<TcpStream>) -> (String, Vec<u8>) {
    let mut head = String::new();
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = Some(value.trim().parse::<usize>().unwrap());
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length.expect("a content-length")];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let responder = start();
    let mut stream = TcpStream::connect(&responder.addr).unwrap();
    // Three requests in one write, the second with a body that must be skipped, not read
    // as a request.
    let requests = concat!(
        "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /api/checkout HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\nGET /nothing HTTP",
        "GET /api/books/bench/small-json HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    stream.write_all(requests.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let bodies: Vec<Vec<u8>> = (0..3)
        .map(|_| {
            let (head, body) = read_response(&mut reader);
            assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
            assert!(head.contains("content-type: application/json"), "{head}");
            assert!(head.contains("date: "), "{head}");
            body
        })
        .collect();
    assert_eq!(bodies[0], br#"{"status":"UP"}"#);
    assert_eq!(bodies[1], br#"{"status":"UP"}"#);
    let small: serde_json::Value = serde_json::from_slice(&bodies[2]).unwrap();
    assert_eq!(small["tags"].as_array().map(Vec::len), Some(4), "{small}");
    // The same connection answers again after a pause (keep-alive).
    stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut reader).1, br#"{"status":"UP"}"#);
}

#[test]
fn the_small_json_ceiling_sends_as_many_bytes_as_the_longest_stack() {
    let responder = start();
    let mut stream = TcpStream::connect(&responder.addr).unwrap();
    stream.write_all(b"GET /api/books/bench/small-json HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let (_, small) = read_response(&mut BufReader::new(stream));
    assert_eq!(small.len(), body::bytes(Answer::SmallJson));
}

#[test]
fn a_request_it_cannot_read_closes_only_its_connection() {
    let responder = start();
    let mut bad = TcpStream::connect(&responder.addr).unwrap();
    bad.write_all(b"\x00\x01 not http\r\n\r\n").unwrap();
    let mut rest = Vec::new();
    bad.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "closed without an answer");
    let mut good = TcpStream::connect(&responder.addr).unwrap();
    good.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut BufReader::new(good)).1, br#"{"status":"UP"}"#);
}
