//! Who is measured besides the five stacks as the suite starts them: labelled variants of
//! a stack (its own flags, or a database latency relay in front of it), and stacks started
//! by someone else (`--targets`, `--compose`).

use std::time::Duration;

use bookstore_registry::stacks::StackInfo;

/// A stack run with flags of its own, under a label: `label=stack --flag value …`
/// (`--variant`). Its flags replace the suite's for the same setting (`--workers`,
/// `--pool-max`, `--blocking-threads`) and add any other the stack takes. Without flags or
/// a relay it is a twin: the stack itself, as a second party.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// What the pages call it.
    pub label: String,
    /// The stack it runs.
    pub stack: StackInfo,
    /// Its own flags.
    pub args: Vec<String>,
    /// `--db-latency`: a round trip added between it and its database by a relay
    /// (`db-relay`, started by the suite); not a flag of the stack's.
    pub db_latency: Option<Duration>,
    /// `--idle-connections`: keep-alive connections held open to it, idle, through each of
    /// its windows (by the suite); not a flag of the stack's.
    pub idle_connections: Option<u64>,
}

impl Variant {
    /// `label=stack --flag value …`, its label unique among `taken` (the stacks' names and
    /// the variants before it).
    pub fn parse(spec: &str, taken: &[String]) -> Result<Self, String> {
        let (label, rest) = spec
            .split_once('=')
            .ok_or_else(|| format!("--variant {spec:?}: expected label=stack --flag value …"))?;
        let label = label.trim();
        let mut words = rest.split_whitespace();
        let stack = bookstore_registry::stacks::find(words.next().unwrap_or(""))
            .map_err(|e| format!("--variant {spec:?}: {e}"))?;
        let args: Vec<String> = words.map(str::to_owned).collect();
        let valid_label = !label.is_empty()
            && label.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !valid_label {
            return Err(format!("--variant {spec:?}: a label is letters, digits, - _ or ."));
        }
        if taken.iter().any(|t| t == label) {
            return Err(format!("--variant {spec:?}: {label} is already a stack or variant"));
        }
        if !args.len().is_multiple_of(2) {
            return Err(format!("--variant {spec:?}: expected --flag value pairs after the stack"));
        }
        if let Some(bad) = args.iter().step_by(2).find(|a| !a.starts_with("--")) {
            return Err(format!("--variant {spec:?}: expected --flag value pairs, found {bad:?}"));
        }
        let mut own = Vec::new();
        let mut db_latency = None;
        let mut idle_connections = None;
        for pair in args.chunks(2) {
            if pair[0] == IDLE_CONNECTIONS_FLAG {
                let count: u64 = pair[1].parse().map_err(|_| {
                    format!(
                        "--variant {spec:?}: {IDLE_CONNECTIONS_FLAG} {}: expected a count",
                        pair[1]
                    )
                })?;
                idle_connections = Some(count).filter(|n| *n > 0);
            } else if pair[0] == DB_LATENCY_FLAG {
                let latency = humantime::parse_duration(&pair[1]).map_err(|e| {
                    format!("--variant {spec:?}: {DB_LATENCY_FLAG} {}: {e}", pair[1])
                })?;
                db_latency = Some(latency).filter(|l| !l.is_zero());
            } else {
                own.extend_from_slice(pair);
            }
        }
        Ok(Self { label: label.to_owned(), stack, args: own, db_latency, idle_connections })
    }

    /// `stack` again, as a second process with the same binary and flags, labelled
    /// `<stack>.twin`: the pair that has no difference to find, measured in the same rounds,
    /// so that the run shows its own rate of false calls.
    pub fn twin(stack: StackInfo) -> Self {
        let label = format!("{}{TWIN_SUFFIX}", stack.identity.service);
        Self { label, stack, args: Vec::new(), db_latency: None, idle_connections: None }
    }

    /// Whether it changes nothing of its stack: a twin (as the results say,
    /// `StackResults::is_twin`).
    pub fn is_twin(&self) -> bool {
        self.args.is_empty() && self.db_latency.is_none() && self.idle_connections.is_none()
    }

    /// `stack` behind a relay adding `latency` to each database round trip, labelled
    /// `<stack>.db<latency>` (e.g. `axum-serde-sqlx.db250us`).
    pub fn with_db_latency(stack: StackInfo, latency: Duration) -> Self {
        let label = format!("{}.db{}", stack.identity.service, humantime::format_duration(latency))
            .replace(' ', "");
        Self { label, stack, args: Vec::new(), db_latency: Some(latency), idle_connections: None }
    }

    /// `stack` with `count` idle connections held open to it through each of its windows,
    /// labelled `<stack>.idle<count>` (e.g. `axum-serde-sqlx.idle10000`).
    pub fn with_idle_connections(stack: StackInfo, count: u64) -> Self {
        let label = format!("{}.idle{count}", stack.identity.service);
        Self { label, stack, args: Vec::new(), db_latency: None, idle_connections: Some(count) }
    }

    /// The suite's `base` flags (`--flag value` pairs) with this variant's replacing those
    /// of the same name.
    pub fn apply(&self, base: &[String]) -> Vec<String> {
        let own: Vec<&[String]> = self.args.chunks(2).collect();
        let mut args: Vec<String> = base
            .chunks(2)
            .filter(|pair| !own.iter().any(|o| o[0] == pair[0]))
            .flatten()
            .cloned()
            .collect();
        args.extend(self.args.iter().cloned());
        args
    }
}

/// The label of the default twin: its stack's name and this.
const TWIN_SUFFIX: &str = ".twin";

/// The flag that holds idle connections open to a party.
pub(crate) const IDLE_CONNECTIONS_FLAG: &str = "--idle-connections";

/// The flag that puts a party behind the database latency relay.
pub const DB_LATENCY_FLAG: &str = "--db-latency";

/// Where `--compose` reaches docker-compose.yml's services from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComposeFrom {
    /// The host: the stacks and the database as the file publishes them on 127.0.0.1.
    Host,
    /// A container in the compose network (the `loadgen` service): by service name.
    Network,
}

impl ComposeFrom {
    /// The names `--compose` takes.
    pub const NAMES: [&'static str; 2] = ["host", "network"];

    /// `host` or `network`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "host" => Ok(Self::Host),
            "network" => Ok(Self::Network),
            other => Err(format!("--compose {other:?}: expected host or network")),
        }
    }

    /// The compose database, with the user and password the file gives it.
    pub fn database_url(self) -> &'static str {
        match self {
            Self::Host => COMPOSE_DATABASE_URL,
            Self::Network => "postgres://bookstore:bookstore@postgres:5432/bookstore",
        }
    }

    /// The five stacks: on 127.0.0.1 at their SPEC §1 ports from the host; by service name
    /// (resolved by the network's DNS) at the same ports from inside.
    pub fn targets(self) -> Result<Vec<(StackInfo, std::net::SocketAddr)>, String> {
        parse_targets(&self.target_specs())
    }

    /// The stacks as `--targets` would name them, `name=http://host:port`.
    pub fn target_specs(self) -> Vec<String> {
        bookstore_registry::stacks::ALL
            .iter()
            .map(|stack| {
                let (name, port) = (stack.identity.service, stack.identity.default_port);
                match self {
                    Self::Host => format!("{name}=http://127.0.0.1:{port}"),
                    Self::Network => format!("{name}=http://{name}:{port}"),
                }
            })
            .collect()
    }
}

/// The compose database as the file publishes it on the host.
pub const COMPOSE_DATABASE_URL: &str = "postgres://bookstore:bookstore@127.0.0.1:55432/bookstore";

/// `--targets`: `name=http://host:port` per stack, each stack at most once.
pub fn parse_targets(specs: &[String]) -> Result<Vec<(StackInfo, std::net::SocketAddr)>, String> {
    let mut targets: Vec<(StackInfo, std::net::SocketAddr)> = Vec::new();
    for spec in specs {
        let (name, address) = spec
            .split_once('=')
            .ok_or_else(|| format!("--targets {spec:?}: expected name=http://host:port"))?;
        let stack = bookstore_registry::stacks::find(name.trim())?;
        let url = url::Url::parse(address.trim())
            .map_err(|e| format!("--targets {spec:?}: expected http://host:port ({e})"))?;
        if url.scheme() != "http" || !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err(format!("--targets {spec:?}: expected http://host:port, nothing after"));
        }
        let host = url.host_str().ok_or_else(|| format!("--targets {spec:?}: no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
            .map_err(|e| format!("--targets {spec:?}: cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("--targets {spec:?}: {host} has no address"))?;
        if targets.iter().any(|(s, _)| s.identity.service == stack.identity.service) {
            return Err(format!("--targets: {} is named twice", stack.identity.service));
        }
        targets.push((stack, addr));
    }
    Ok(targets)
}
