//! The five stacks of SPEC §1: the one list every tool reads (servers, conformance suite,
//! load generator).

use crate::cli::DbCalls;
use crate::handlers::Identity;

/// What a stack is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackInfo {
    /// Name, framework, default port.
    pub identity: Identity,
    /// Serializer tag (as small-json reports it).
    pub serializer: &'static str,
    /// Database access tag (as small-json reports it).
    pub db_access: &'static str,
    /// Whether it takes `--blocking-threads`.
    pub db_calls: DbCalls,
    /// What runs the blocking work, if any.
    pub offload: Option<&'static str>,
}

impl StackInfo {
    /// The `tags` of its small-json.
    pub fn tags(&self) -> [&'static str; 4] {
        [self.identity.framework, self.serializer, self.db_access, "benchmark"]
    }
}

/// axum + serde_json + sqlx.
pub const AXUM_SERDE_SQLX: StackInfo = StackInfo {
    identity: Identity { service: "axum-serde-sqlx", framework: "axum", default_port: 8081 },
    serializer: "serde_json",
    db_access: "sqlx",
    db_calls: DbCalls::Async,
    offload: None,
};

/// axum + serde_json + diesel on `spawn_blocking`.
pub const AXUM_SERDE_DIESEL: StackInfo = StackInfo {
    identity: Identity { service: "axum-serde-diesel", framework: "axum", default_port: 8082 },
    serializer: "serde_json",
    db_access: "diesel",
    db_calls: DbCalls::Blocking,
    offload: Some("tokio::task::spawn_blocking"),
};

/// actix-web + serde_json + diesel on `web::block`.
pub const ACTIX_SERDE_DIESEL: StackInfo = StackInfo {
    identity: Identity {
        service: "actix-serde-diesel",
        framework: "actix-web",
        default_port: 8083,
    },
    serializer: "serde_json",
    db_access: "diesel",
    db_calls: DbCalls::Blocking,
    offload: Some("actix_web::web::block"),
};

/// actix-web + simd-json + sqlx.
pub const ACTIX_SIMD_SQLX: StackInfo = StackInfo {
    identity: Identity { service: "actix-simd-sqlx", framework: "actix-web", default_port: 8084 },
    serializer: "simd-json",
    db_access: "sqlx",
    db_calls: DbCalls::Async,
    offload: None,
};

/// bare hyper + sonic-rs + sqlx.
pub const HYPER_SONIC_SQLX: StackInfo = StackInfo {
    identity: Identity { service: "hyper-sonic-sqlx", framework: "hyper", default_port: 8085 },
    serializer: "sonic-rs",
    db_access: "sqlx",
    db_calls: DbCalls::Async,
    offload: None,
};

/// Every stack, in SPEC §1's order.
pub const ALL: [StackInfo; 5] =
    [AXUM_SERDE_SQLX, AXUM_SERDE_DIESEL, ACTIX_SERDE_DIESEL, ACTIX_SIMD_SQLX, HYPER_SONIC_SQLX];

/// The stack called `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<StackInfo, String> {
    ALL.into_iter().find(|s| s.identity.service == name).ok_or_else(|| {
        let names: Vec<&str> = ALL.iter().map(|s| s.identity.service).collect();
        format!("unknown stack {name:?}; valid: {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_ports_and_lookup() {
        let ports: Vec<u16> = ALL.iter().map(|s| s.identity.default_port).collect();
        assert_eq!(ports, [8081, 8082, 8083, 8084, 8085]);
        assert_eq!(find("actix-simd-sqlx").unwrap().serializer, "simd-json");
        let error = find("axum").unwrap_err();
        assert!(error.contains("hyper-sonic-sqlx"), "{error}");
    }

    #[test]
    fn blocking_stacks_name_their_offload() {
        for stack in ALL {
            assert_eq!(
                stack.db_calls == DbCalls::Blocking,
                stack.offload.is_some(),
                "{}",
                stack.identity.service
            );
        }
    }
}
