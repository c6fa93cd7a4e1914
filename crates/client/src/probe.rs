//! A blocking one-request HTTP client, for readiness and the contract check before
//! measuring (not for load).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::engine::conn;

/// A whole response, copied out of the connection's buffer.
#[derive(Debug, Clone)]
pub struct ProbeResponse {
    #[allow(missing_docs)] // named for what it holds
    pub status: u16,
    /// `Content-Type`, if any (lossily decoded where not UTF-8).
    pub content_type: Option<String>,
    /// Exactly `Content-Length` bytes: [`exchange`] refuses chunked bodies.
    pub body: Vec<u8>,
}

/// Sends `request` on a new connection and reads one response (which must carry a
/// `Content-Length`, as the contract requires).
pub fn exchange(
    addr: SocketAddr,
    request: &[u8],
    timeout: Duration,
) -> Result<ProbeResponse, String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    stream.write_all(request).map_err(|e| format!("cannot send: {e}"))?;
    let mut bytes = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let read = stream.read(&mut chunk).map_err(|e| format!("cannot read the response: {e}"))?;
        if read == 0 {
            return Err("the connection closed before a whole response".into());
        }
        bytes.extend_from_slice(&chunk[..read]);
        match conn::parse(&bytes) {
            // `loadgen http` reads chunked bodies; the contract check before a window does
            // not: every contract response carries its length.
            Ok(Some(head)) if head.chunked => {
                return Err("a chunked response: the contract wants a Content-Length".into());
            }
            Ok(Some(head)) => {
                let response = head.response_in(&bytes);
                return Ok(ProbeResponse {
                    status: response.status,
                    content_type: response
                        .content_type
                        .map(|v| String::from_utf8_lossy(v).into_owned()),
                    body: response.body.to_vec(),
                });
            }
            Ok(None) => continue,
            Err(_) => return Err("not an HTTP/1.1 response with a Content-Length".into()),
        }
    }
}

/// `GET path`.
pub fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<ProbeResponse, String> {
    exchange(addr, format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(), timeout)
}
