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

/// `--targets`: `name=http://host:port` per stack, each name at most once; a name the
/// registry does not know is a server of one's own ([`bookstore_registry::stacks::foreign`]).
pub fn parse_targets(specs: &[String]) -> Result<Vec<(StackInfo, std::net::SocketAddr)>, String> {
    let mut targets: Vec<(StackInfo, std::net::SocketAddr)> = Vec::new();
    for spec in specs {
        let (name, address) = spec
            .split_once('=')
            .ok_or_else(|| format!("--targets {spec:?}: expected name=http://host:port"))?;
        let name = name.trim();
        let stack = bookstore_registry::stacks::find(name)
            .or_else(|_| bookstore_registry::stacks::foreign(name))?;
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn specs(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn targets_name_a_stack_and_an_http_address_each() {
        let targets = parse_targets(&specs(&[
            "axum-serde-sqlx=http://127.0.0.1:18081",
            "hyper-sonic-sqlx=http://localhost:18085/",
            "axum+sonic-rs+diesel-async=http://127.0.0.1:8100",
        ]))
        .unwrap();
        assert_eq!(targets.len(), 3);
        // A composed stack by its triple's name (the compose file's profile `composed`).
        assert_eq!(targets[2].0.tags.access, "diesel-async");
        assert_eq!(targets[0].0.identity.service, "axum-serde-sqlx");
        assert_eq!(targets[0].1, "127.0.0.1:18081".parse().unwrap());
        assert_eq!(targets[1].0.identity.service, "hyper-sonic-sqlx");
        assert_eq!(targets[1].1.port(), 18085);
    }

    #[test]
    fn a_wrong_target_is_refused_with_a_reason() {
        for (spec, expected) in [
            ("axum-serde-sqlx", "expected name=http://host:port"),
            ("spring mvc=http://127.0.0.1:8081", "cannot name a server"),
            ("axum-serde-sqlx=https://127.0.0.1:8081", "expected http://host:port"),
            ("axum-serde-sqlx=http://127.0.0.1:8081/api", "expected http://host:port"),
            ("axum-serde-sqlx=127.0.0.1:8081", "expected http://host:port"),
        ] {
            let error = parse_targets(&specs(&[spec])).unwrap_err();
            assert!(error.contains(expected), "{spec}: {error}");
        }
        let twice =
            specs(&["axum-serde-sqlx=http://127.0.0.1:1", "axum-serde-sqlx=http://127.0.0.1:2"]);
        assert!(parse_targets(&twice).unwrap_err().contains("named twice"));
        // A name the registry does not know is a server of one's own, under that name.
        let mine = parse_targets(&specs(&["spring-mvc=http://127.0.0.1:8081"])).unwrap();
        assert_eq!(mine[0].0.identity.service, "spring-mvc");
        assert_eq!(mine[0].0.kind, bookstore_registry::stacks::Kind::Foreign);
    }

    #[test]
    fn a_database_latency_is_a_variant_behind_the_relay_not_a_flag_of_the_stack() {
        let taken = specs(&["axum-serde-sqlx"]);
        let variant =
            Variant::parse("far=axum-serde-sqlx --db-latency 250us --workers 1", &taken).unwrap();
        assert_eq!(variant.db_latency, Some(Duration::from_micros(250)));
        assert_eq!(variant.args, specs(&["--workers", "1"]), "the stack never sees it");
        let near = Variant::parse("near=axum-serde-sqlx --db-latency 0s", &taken).unwrap();
        assert_eq!(near.db_latency, None);
        assert!(Variant::parse("x=axum-serde-sqlx --db-latency soon", &taken).is_err());
        let far =
            Variant::with_db_latency(bookstore_registry::stacks::ALL[0], Duration::from_millis(1));
        assert_eq!(
            far.label,
            format!("{}.db1ms", bookstore_registry::stacks::ALL[0].identity.service)
        );
        assert!(
            Variant::parse(&format!("{}=axum-serde-sqlx --workers 1", far.label), &taken).is_ok()
        );
    }

    #[test]
    fn a_variant_is_a_stack_with_flags_of_its_own_under_a_unique_label() {
        let taken = specs(&["axum-serde-sqlx", "actix-serde-diesel"]);
        let variant = Variant::parse("actix-1w=actix-serde-diesel --workers 1", &taken).unwrap();
        assert_eq!(variant.label, "actix-1w");
        assert_eq!(variant.stack.identity.service, "actix-serde-diesel");
        let base = specs(&["--pool-max", "32", "--workers", "2", "--blocking-threads", "32"]);
        assert_eq!(
            variant.apply(&base),
            specs(&["--pool-max", "32", "--blocking-threads", "32", "--workers", "1"])
        );
        for (spec, expected) in [
            ("actix-serde-diesel --workers 1", "expected label=stack"),
            ("x=spring-mvc --workers 1", "unknown stack"),
            ("axum-serde-sqlx=axum-serde-sqlx --workers 1", "already a stack"),
            ("x=axum-serde-sqlx --workers", "expected --flag value pairs"),
            ("x=axum-serde-sqlx 1 --workers", "expected --flag value pairs"),
            ("a b=axum-serde-sqlx --workers 1", "a label is"),
        ] {
            let error = Variant::parse(spec, &taken).unwrap_err();
            assert!(error.contains(expected), "{spec}: {error}");
        }
    }

    #[test]
    fn a_variant_without_flags_is_a_twin_of_its_stack() {
        let taken = specs(&["axum-serde-sqlx"]);
        let twin = Variant::parse("again=axum-serde-sqlx", &taken).unwrap();
        assert_eq!((twin.args.len(), twin.db_latency), (0, None));
        let base = specs(&["--pool-max", "32", "--workers", "2"]);
        assert_eq!(twin.apply(&base), base, "a twin runs with the suite's flags, unchanged");
        let default = Variant::twin(twin.stack);
        assert_eq!(default.label, "axum-serde-sqlx.twin");
        assert_eq!((default.args, default.db_latency), (twin.args, None));
    }

    #[test]
    fn the_compose_shorthand_matches_docker_compose_yml() {
        let compose = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker-compose.yml"),
        )
        .unwrap();
        for (stack, addr) in ComposeFrom::Host.targets().unwrap() {
            let port = stack.identity.default_port;
            assert_eq!(addr, std::net::SocketAddr::from(([127, 0, 0, 1], port)));
            assert!(compose.contains(&format!("\"127.0.0.1:{port}:{port}\"")), "{port}");
        }
        // The database as the compose file publishes it, with its user and password.
        let url = url::Url::parse(COMPOSE_DATABASE_URL).unwrap();
        assert!(compose.contains(&format!("\"127.0.0.1:{}:5432\"", url.port().unwrap())));
        assert!(compose.contains(&format!("POSTGRES_USER: {}", url.username())));
        assert!(compose.contains(&format!("POSTGRES_PASSWORD: {}", url.password().unwrap())));
        assert!(compose.contains(&format!("POSTGRES_DB: {}", url.path().trim_start_matches('/'))));
    }

    #[test]
    fn from_inside_the_compose_network_the_stacks_and_database_are_its_services() {
        let compose = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker-compose.yml"),
        )
        .unwrap();
        let specs = ComposeFrom::Network.target_specs();
        assert_eq!(specs.len(), bookstore_registry::stacks::ALL.len());
        for (spec, stack) in specs.iter().zip(bookstore_registry::stacks::ALL) {
            let (name, port) = (stack.identity.service, stack.identity.default_port);
            assert_eq!(spec, &format!("{name}=http://{name}:{port}"));
            assert!(compose.contains(&format!("\n  {name}:\n")), "no service {name}");
            assert!(compose.contains(&format!("BIND: \"0.0.0.0:{port}\"")), "{name} on {port}");
        }
        // The URL every stack's service is given.
        let url = ComposeFrom::Network.database_url();
        assert!(compose.contains(&format!("DATABASE_URL: {url}\n")), "{url}");
        assert_eq!(ComposeFrom::parse("network"), Ok(ComposeFrom::Network));
        assert_eq!(ComposeFrom::parse("host"), Ok(ComposeFrom::Host));
        assert!(ComposeFrom::parse("inside").is_err());
    }
}
