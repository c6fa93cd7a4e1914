//! The engine's client over HTTP/1.1 keep-alive connections to one address.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Arc;

use super::closed::run;
use super::conn::{Connection, ReadBuffer, Response};
use super::exchange::{Client, Done, Workload};
use super::picker::Picker;
use super::plan::{LoadPlan, WindowHooks};
use super::stats::{ErrorKind, LoadReport, Outcome};

/// Requests over HTTP/1.1 keep-alive connections to one address.
pub struct HttpClient {
    addr: SocketAddr,
    workload: Arc<dyn Workload>,
    validate_every: u64,
    opened: std::cell::Cell<u64>,
    problems: RefCell<Vec<String>>,
}

impl HttpClient {
    /// A client of `addr` doing `workload`, fully validating one accepted response in
    /// `validate_every` per connection (0: never).
    pub fn new(addr: SocketAddr, workload: Arc<dyn Workload>, validate_every: u64) -> Self {
        Self {
            addr,
            workload,
            validate_every,
            opened: std::cell::Cell::new(0),
            problems: RefCell::new(Vec::new()),
        }
    }
}

/// An HTTP connection with its receive buffer.
pub struct HttpConnection {
    socket: Connection,
    buffer: ReadBuffer,
    until_validation: u64,
}

impl Client for HttpClient {
    type Connection = HttpConnection;

    fn picker(&self, index: usize, users: usize) -> Picker {
        self.workload.picker(index, users)
    }

    async fn connect(&self) -> Result<HttpConnection, ErrorKind> {
        let socket = Connection::open(self.addr).await.map_err(|_| ErrorKind::Connect)?;
        // Spread the sampled validations over the connections' request counts.
        let every = self.validate_every.max(1);
        self.opened.set(self.opened.get() + 1);
        let until_validation = 1 + self.opened.get() % every;
        Ok(HttpConnection { socket, buffer: ReadBuffer::new(), until_validation })
    }

    async fn call(&self, connection: &mut HttpConnection, pick: usize) -> Result<Done, ErrorKind> {
        self.call_inspecting(connection, pick, |_, _| ()).await
    }

    fn problems(&self) -> Vec<String> {
        self.problems.borrow().clone()
    }
}

impl HttpConnection {
    /// Whether the last exchange received no byte of an answer (the connection closed or
    /// broke before the server said anything).
    pub fn received_nothing(&self) -> bool {
        self.buffer.is_empty()
    }
}

impl HttpClient {
    /// [`Client::call`], handing the answer and its outcome to `inspect` (which sees every
    /// answer, not only the validated sample: `loadgen faults` reads checkout ids from it).
    pub async fn call_inspecting(
        &self,
        connection: &mut HttpConnection,
        pick: usize,
        inspect: impl FnOnce(&Response<'_>, Outcome),
    ) -> Result<Done, ErrorKind> {
        connection.buffer.clear();
        let head = super::conn::exchange(
            &connection.socket,
            self.workload.request(pick),
            &mut connection.buffer,
        )
        .await?;
        let response = head.response(&connection.buffer);
        let mut outcome = self.workload.classify(pick, &response);
        if self.validate_every > 0 && outcome == Outcome::Ok {
            connection.until_validation -= 1;
            if connection.until_validation == 0 {
                connection.until_validation = self.validate_every;
                if let Err(problem) = self.workload.validate(pick, &response) {
                    let mut problems = self.problems.borrow_mut();
                    if problems.len() < 5 {
                        problems.push(problem);
                    }
                    outcome = Outcome::Error(ErrorKind::InvalidBody);
                }
            }
        }
        inspect(&response, outcome);
        Ok(Done { outcome, status: Some(response.status), close: head.close })
    }
}

/// Runs `plan` over HTTP against `addr`. Fails only if a client thread cannot set up (an
/// open loop's timer).
pub fn run_http(
    plan: &LoadPlan,
    addr: SocketAddr,
    workload: Arc<dyn Workload>,
    validate_every: u64,
    hooks: &mut dyn WindowHooks,
) -> Result<LoadReport, String> {
    run(plan, move |_| HttpClient::new(addr, Arc::clone(&workload), validate_every), hooks)
}
