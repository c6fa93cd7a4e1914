//! One HTTP/1.1 exchange on a keep-alive connection: write the pre-built request, read the
//! whole response into a reused buffer, and say where its parts are.
//!
//! The socket is driven through `AsyncFd` rather than tokio's `TcpStream` for one reason:
//! a stream only learns that its socket is empty from a read that fails with `EAGAIN`, so
//! every exchange would cost a wasted `recv`. Here, once a whole response is in — one
//! request in flight, no pipelining, so nothing else can be waiting — readiness is cleared
//! by hand and the next read waits for the kernel's notification instead.

use std::io::{Read, Write};
use std::net::SocketAddr;

use tokio::io::unix::AsyncFd;

use super::stats::ErrorKind;

/// Headers a response may carry before it is refused as malformed.
const MAX_HEADERS: usize = 32;
/// Largest response accepted: far above the biggest contract body (`bookList500`'s, whose
/// size `scenario::body::bytes` computes from the seed), so only a runaway response hits it.
const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;
/// Free space kept at the end of the buffer before each read.
const MIN_SPARE_BYTES: usize = 8 * 1024;

/// A complete response, borrowed from the connection's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    #[allow(missing_docs)] // named for what it holds
    pub status: u16,
    /// The `Content-Type` value, if any.
    pub content_type: Option<&'a [u8]>,
    /// The `Content-Length` bytes, or the data of a chunked body without its framing.
    pub body: &'a [u8],
}

/// Where a response's parts are in the buffer.
pub(crate) struct Head {
    status: u16,
    content_type: Option<(usize, usize)>,
    body: (usize, usize),
    /// The server will close the connection after this response.
    pub(crate) close: bool,
    /// The body came with `Transfer-Encoding: chunked`: until [`ReadBuffer::dechunk`] has
    /// run, `body` spans the chunks with their framing.
    pub(crate) chunked: bool,
}

impl Head {
    pub(super) fn response<'a>(&self, buffer: &'a ReadBuffer) -> Response<'a> {
        self.response_in(buffer.filled())
    }

    /// The response in `bytes`, the buffer it was parsed from.
    pub(crate) fn response_in<'a>(&self, bytes: &'a [u8]) -> Response<'a> {
        Response {
            status: self.status,
            content_type: self.content_type.map(|(start, end)| &bytes[start..end]),
            body: &bytes[self.body.0..self.body.1],
        }
    }
}

/// A connection's receive buffer, initialized once and reused for every response.
pub(super) struct ReadBuffer {
    bytes: Vec<u8>,
    filled: usize,
}

impl ReadBuffer {
    pub(super) fn new() -> Self {
        Self { bytes: vec![0; 16 * 1024], filled: 0 }
    }

    pub(super) fn clear(&mut self) {
        self.filled = 0;
    }

    fn filled(&self) -> &[u8] {
        &self.bytes[..self.filled]
    }

    /// Nothing received since the last [`Self::clear`].
    pub(super) fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Moves a complete chunked body's data together in place, so that `head.body` is the
    /// body itself, as with a `Content-Length`.
    fn dechunk(&mut self, head: &mut Head) {
        let (start, end) = head.body;
        let data = dechunk_in_place(&mut self.bytes[start..end]);
        head.body = (start, start + data);
        head.chunked = false;
    }

    fn spare(&mut self) -> &mut [u8] {
        if self.bytes.len() - self.filled < MIN_SPARE_BYTES {
            let grown = (self.bytes.len() * 2).max(self.filled + MIN_SPARE_BYTES);
            self.bytes.resize(grown, 0);
        }
        &mut self.bytes[self.filled..]
    }
}

/// A client connection.
pub(super) struct Connection(AsyncFd<std::net::TcpStream>);

impl Connection {
    /// Connects to `addr`.
    pub(super) async fn open(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let stream = stream.into_std()?;
        #[allow(unsafe_code)]
        // SAFETY: a `std::net::TcpStream` owns its file descriptor: it is open, and
        // `as_raw_fd` returns that same descriptor, until the stream is dropped — which only
        // happens when this `AsyncFd` is.
        let registered = unsafe { AsyncFd::register(stream) };
        Ok(Self(registered.map_err(std::io::Error::from)?))
    }

    async fn write_all(&self, mut bytes: &[u8]) -> Result<(), ErrorKind> {
        while !bytes.is_empty() {
            // Usually the socket has room and this is one `send`.
            match self.0.get_ref().write(bytes) {
                Ok(0) => return Err(ErrorKind::Io),
                Ok(written) => bytes = &bytes[written..],
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    let mut guard = self.0.writable().await.map_err(|_| ErrorKind::Io)?;
                    guard.clear_ready();
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(ErrorKind::Io),
            }
        }
        Ok(())
    }
}

/// Sends `request` and reads one whole response into `buffer` (cleared beforehand).
pub(super) async fn exchange(
    connection: &Connection,
    request: &[u8],
    buffer: &mut ReadBuffer,
) -> Result<Head, ErrorKind> {
    connection.write_all(request).await?;
    loop {
        let mut guard = connection.0.readable().await.map_err(|_| ErrorKind::Io)?;
        match guard.try_io(|socket| socket.get_ref().read(buffer.spare())) {
            Ok(Ok(0)) => return Err(ErrorKind::Io),
            Ok(Ok(read)) => buffer.filled += read,
            Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(Err(_)) => return Err(ErrorKind::Io),
            // EAGAIN: `try_io` cleared readiness; wait for the next notification.
            Err(_would_block) => continue,
        }
        if let Some(mut head) = parse(buffer.filled())? {
            guard.clear_ready();
            if head.chunked {
                buffer.dechunk(&mut head);
            }
            return Ok(head);
        }
    }
}

/// The response in `bytes` if it is complete, `None` if more must be read.
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<Head>, ErrorKind> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Response::new(&mut headers);
    let head_len = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ErrorKind::InvalidResponse),
    };
    let status = parsed.code.ok_or(ErrorKind::InvalidResponse)?;
    let base = bytes.as_ptr() as usize;
    let mut content_length = None;
    let mut content_type = None;
    let mut chunked = false;
    let mut close = parsed.version == Some(0);
    for header in parsed.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(header.value).map_err(|_| ErrorKind::InvalidResponse)?;
            content_length =
                Some(text.trim().parse::<usize>().map_err(|_| ErrorKind::InvalidResponse)?);
        } else if header.name.eq_ignore_ascii_case("content-type") {
            let start = header.value.as_ptr() as usize - base;
            content_type = Some((start, start + header.value.len()));
        } else if header.name.eq_ignore_ascii_case("connection") {
            close = header.value.eq_ignore_ascii_case(b"close");
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding is the framing (RFC 9112 §6.3); anything else is not HTTP/1.1
            // a keep-alive client can read.
            let last = header.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            if !chunked {
                return Err(ErrorKind::InvalidResponse);
            }
        }
    }
    // A response without a body by its status has none, whatever its headers say. (An
    // interim 1xx is not followed here: this client never sends `Expect`, and a server that
    // answers 1xx anyway gets an invalid response below.)
    if status == 204 || status == 304 {
        let body = (head_len, head_len);
        return Ok(Some(Head { status, content_type, body, close, chunked: false }));
    }
    // Read-to-close framing cannot be timed on a keep-alive connection: refused. Chunked
    // framing is read (a user's own server, `loadgen http`); the contract's own check,
    // which wants a Content-Length, refuses it apart (`suite::probe`).
    let end = match (content_length, chunked) {
        (_, true) => match chunked_end(bytes, head_len)? {
            Some(end) => end,
            None => return Ok(None),
        },
        (Some(length), false) => head_len + length,
        (None, false) => return Err(ErrorKind::InvalidResponse),
    };
    if end > MAX_RESPONSE_BYTES {
        return Err(ErrorKind::InvalidResponse);
    }
    Ok((bytes.len() >= end).then_some(Head {
        status,
        content_type,
        body: (head_len, end),
        close,
        chunked,
    }))
}

/// Where the chunked body starting at `at` ends (after its last chunk and trailers), `None`
/// while incomplete.
fn chunked_end(bytes: &[u8], mut at: usize) -> Result<Option<usize>, ErrorKind> {
    loop {
        if at > MAX_RESPONSE_BYTES {
            return Err(ErrorKind::InvalidResponse);
        }
        let size = match httparse::parse_chunk_size(&bytes[at..]) {
            Ok(httparse::Status::Complete((line, size))) => {
                at += line;
                usize::try_from(size).map_err(|_| ErrorKind::InvalidResponse)?
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(ErrorKind::InvalidResponse),
        };
        if size == 0 {
            // Trailer lines, then an empty line.
            loop {
                let Some(line) = bytes[at..].windows(2).position(|w| w == b"\r\n") else {
                    return Ok(None);
                };
                at += line + 2;
                if line == 0 {
                    return Ok(Some(at));
                }
            }
        }
        let data_end = at.checked_add(size).ok_or(ErrorKind::InvalidResponse)?;
        if data_end > MAX_RESPONSE_BYTES {
            return Err(ErrorKind::InvalidResponse);
        }
        match bytes.get(data_end..data_end + 2) {
            None if bytes.len() < data_end + 2 => return Ok(None),
            Some(b"\r\n") => at = data_end + 2,
            _ => return Err(ErrorKind::InvalidResponse),
        }
    }
}

/// Moves the data of the complete chunked body in `body` to its front; returns its length.
fn dechunk_in_place(body: &mut [u8]) -> usize {
    let (mut read, mut written) = (0, 0);
    while let Ok(httparse::Status::Complete((line, size))) =
        httparse::parse_chunk_size(&body[read..])
    {
        let size = size as usize; // checked by `chunked_end`
        if size == 0 {
            break;
        }
        read += line;
        body.copy_within(read..read + size, written);
        written += size;
        read += size + 2;
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_is_complete_only_with_its_whole_body() {
        let full = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{\"status\":\"UP\"}";
        let head = parse(full).unwrap().expect("complete");
        assert_eq!(head.status, 200);
        assert_eq!(&full[head.body.0..head.body.1], b"{\"status\":\"UP\"}");
        let (start, end) = head.content_type.unwrap();
        assert_eq!(&full[start..end], b"application/json");
        assert!(!head.close);
        assert!(parse(&full[..full.len() - 1]).unwrap().is_none(), "one byte short");
        assert!(parse(&full[..20]).unwrap().is_none(), "headers not complete");
    }

    #[test]
    fn responses_without_a_length_or_not_http_are_invalid() {
        let to_close = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nhello";
        assert_eq!(parse(to_close).err(), Some(ErrorKind::InvalidResponse));
        let gzip_only = b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n";
        assert_eq!(parse(gzip_only).err(), Some(ErrorKind::InvalidResponse));
        assert_eq!(parse(b"garbage garbage\r\n\r\n").err(), Some(ErrorKind::InvalidResponse));
    }

    #[test]
    fn a_chunked_body_is_complete_after_its_last_chunk_and_reads_as_its_data() {
        let full = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n";
        for short in [40, full.len() - 20, full.len() - 1] {
            assert!(parse(&full[..short]).unwrap().is_none(), "{short} bytes are not complete");
        }
        let mut head = parse(full).unwrap().expect("complete");
        assert!(head.chunked);
        assert_eq!(head.body.1, full.len());
        let mut buffer = ReadBuffer::new();
        buffer.spare()[..full.len()].copy_from_slice(full);
        buffer.filled = full.len();
        buffer.dechunk(&mut head);
        assert_eq!(head.response(&buffer).body, b"hello, world");
        let broken = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n";
        assert_eq!(parse(broken).err(), Some(ErrorKind::InvalidResponse));
    }

    #[test]
    fn a_response_without_a_body_by_its_status_needs_no_length() {
        let no_content = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse(no_content).unwrap().unwrap().body, (no_content.len(), no_content.len()));
    }

    #[test]
    fn connection_close_and_http_1_0_end_the_connection() {
        let closing = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert!(parse(closing).unwrap().unwrap().close);
        let old = b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(parse(old).unwrap().unwrap().close);
    }
}
