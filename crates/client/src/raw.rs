//! One request given by hand (`loadgen http URL -X … -H … -d …`), pre-built once and sent
//! over and over: a [`Workload`] whose every 2xx with a complete body is a success.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::engine::{ErrorKind, Outcome, Picker, Response, Workload};

/// The one request of `bookstore_runner::http::Target::Request`, as the command line gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSpec {
    /// `GET` when `None` without a body, `POST` when `None` with one (as curl does).
    pub method: Option<String>,
    /// `Name: value` lines, sent as given; a `Host` among them replaces the URL's.
    pub headers: Vec<String>,
    /// The body, sent with its `Content-Length`.
    pub body: Option<Vec<u8>>,
}

/// One pre-built request sent over and over; any 2xx with a complete body is a success.
#[derive(Debug)]
pub struct RawRequest {
    request: Vec<u8>,
}

impl RawRequest {
    /// The address of `url` (`http://host:port/path?query`) and the request `spec` makes
    /// for it.
    pub fn new(url: &str, spec: &RequestSpec) -> Result<(SocketAddr, Self), String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("invalid URL {url}: {e}"))?;
        if parsed.scheme() != "http" {
            return Err(format!("invalid URL {url}: only http:// is supported"));
        }
        let host = parsed.host_str().ok_or_else(|| format!("invalid URL {url}: no host"))?;
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("cannot resolve {host}"))?;
        let mut target = parsed.path().to_owned();
        if let Some(query) = parsed.query() {
            target.push('?');
            target.push_str(query);
        }
        let method = match (&spec.method, &spec.body) {
            (Some(method), _) => method.to_ascii_uppercase(),
            (None, Some(_)) => "POST".to_owned(),
            (None, None) => "GET".to_owned(),
        };
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-') {
            return Err(format!("invalid method {method:?}"));
        }
        // Their answers' framing depends on the request, which the parser does not see: a
        // HEAD answer declares a length it does not send, a CONNECT one opens a tunnel.
        if method == "HEAD" || method == "CONNECT" {
            return Err(format!(
                "{method} is not supported: its answers are not framed like the others'"
            ));
        }
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        let has = |name: &str| {
            spec.headers.iter().any(|h| {
                h.split_once(':').is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            })
        };
        if !has("host") {
            head.push_str(&format!("Host: {host}:{port}\r\n"));
        }
        let sets_length = has("content-length") || has("transfer-encoding");
        for header in &spec.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(format!("invalid header {header:?}: expected `Name: value`"));
            };
            let name = name.trim();
            if name.is_empty()
                || name.bytes().any(|b| !b.is_ascii_graphic())
                || value.contains(['\r', '\n'])
            {
                return Err(format!("invalid header {header:?}: expected `Name: value`"));
            }
            head.push_str(&format!("{name}: {}\r\n", value.trim()));
        }
        if let Some(body) = &spec.body
            && !sets_length
        {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut request = head.into_bytes();
        request.extend_from_slice(spec.body.as_deref().unwrap_or_default());
        Ok((addr, Self { request }))
    }
}

impl Workload for RawRequest {
    fn request(&self, _: usize) -> &[u8] {
        &self.request
    }

    fn picker(&self, _: usize, _: usize) -> Picker {
        Picker::Fixed(0)
    }

    fn classify(&self, _: usize, response: &Response<'_>) -> Outcome {
        if (200..300).contains(&response.status) {
            Outcome::Ok
        } else {
            Outcome::Error(ErrorKind::Status)
        }
    }

    fn validate(&self, _: usize, _: &Response<'_>) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str, spec: &RequestSpec) -> String {
        String::from_utf8(RawRequest::new(url, spec).unwrap().1.request).unwrap()
    }

    #[test]
    fn the_request_keeps_path_and_query() {
        let (addr, _) = RawRequest::new("http://127.0.0.1:8081/", &RequestSpec::default()).unwrap();
        assert_eq!(addr, "127.0.0.1:8081".parse().unwrap());
        assert_eq!(
            request("http://127.0.0.1:8081/api/books?limit=5", &RequestSpec::default()),
            "GET /api/books?limit=5 HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n"
        );
    }

    #[test]
    fn a_body_is_posted_with_its_length_and_the_headers_as_given() {
        let spec = RequestSpec {
            method: None,
            headers: vec!["Content-Type: application/json".into(), "x-trace:1".into()],
            body: Some(b"{\"a\":1}".to_vec()),
        };
        assert_eq!(
            request("http://127.0.0.1:8081/api/checkouts", &spec),
            "POST /api/checkouts HTTP/1.1\r\nHost: 127.0.0.1:8081\r\nContent-Type: application/json\r\nx-trace: 1\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
        );
        let spec = RequestSpec {
            method: Some("delete".into()),
            headers: vec!["host: example".into()],
            body: None,
        };
        assert_eq!(
            request("http://127.0.0.1:8081/x", &spec),
            "DELETE /x HTTP/1.1\r\nhost: example\r\n\r\n"
        );
    }

    #[test]
    fn other_schemes_garbage_and_broken_headers_are_refused() {
        let plain = RequestSpec::default();
        assert!(RawRequest::new("https://127.0.0.1/", &plain).is_err());
        assert!(RawRequest::new("not a url", &plain).is_err());
        for header in ["no colon", ": empty name", "a b: space in name", "x: a\r\ny: b"] {
            let spec = RequestSpec { headers: vec![header.into()], ..RequestSpec::default() };
            assert!(RawRequest::new("http://127.0.0.1/", &spec).is_err(), "{header:?}");
        }
        for method in ["GET /x", "head"] {
            let spec = RequestSpec { method: Some(method.into()), ..RequestSpec::default() };
            assert!(RawRequest::new("http://127.0.0.1/", &spec).is_err(), "{method}");
        }
    }
}
