//! The stacks of SPEC §1, declared once in [`for_each_stack!`](crate::for_each_stack): the one list every tool
//! reads — the servers' identities, the load generator's registry, the conformance and fault
//! tests' expansions, the axis pairs, the colours of the pages, the compose services' check.

use crate::cli::DbCalls;
use crate::handlers::Identity;

/// Calls `$callback!` with every stack, one entry each:
/// `(CONST, crate_name, "binary-name", port, framework, blocking)` — the constant of its
/// [`StackInfo`] here, its crate (for the expansions that call its `serve`), its binary and
/// default port, its framework's tag, and whether its database calls block (`blocking`, the
/// diesel stacks: they take `--blocking-threads`) or not (`async`). The serializer and the
/// store are the crate's own types, whose names the stack reports itself (small-json's tags
/// come from `Codec::NAME` and `Store::ACCESS`). Adding a stack: its crate under
/// `crates/servers/`, one line here, and the crate in `crates/conformance/Cargo.toml`.
#[macro_export]
macro_rules! for_each_stack {
    ($callback:ident) => {
        $callback! {
            (AXUM_SERDE_SQLX, axum_serde_sqlx, "axum-serde-sqlx", 8081, "axum", async),
            (AXUM_SERDE_DIESEL, axum_serde_diesel, "axum-serde-diesel", 8082, "axum", blocking),
            (ACTIX_SERDE_DIESEL, actix_serde_diesel, "actix-serde-diesel", 8083, "actix-web", blocking),
            (ACTIX_SIMD_SQLX, actix_simd_sqlx, "actix-simd-sqlx", 8084, "actix-web", async),
            (HYPER_SONIC_SQLX, hyper_sonic_sqlx, "hyper-sonic-sqlx", 8085, "hyper", async),
        }
    };
}

/// What a stack is, as the tools that start it see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackInfo {
    /// Name, framework, default port.
    pub identity: Identity,
    /// Whether it takes `--blocking-threads`.
    pub db_calls: DbCalls,
}

/// Fails the build of a stack crate whose framework is not the one its registry entry
/// names: `check_framework!(STACK, bookstore_web_axum::FRAMEWORK)`.
#[macro_export]
macro_rules! check_framework {
    ($stack:expr, $framework:expr) => {
        const _: () = assert!(
            $crate::stacks::same_str($stack.identity.framework, $framework),
            "the registry (bookstore_app::for_each_stack!) names another framework for this stack"
        );
    };
}

/// String equality in a constant context.
pub const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `async` or `blocking` of [`for_each_stack!`] as [`DbCalls`].
#[doc(hidden)]
#[macro_export]
macro_rules! db_calls {
    (async) => {
        $crate::DbCalls::Async
    };
    (blocking) => {
        $crate::DbCalls::Blocking
    };
}

macro_rules! registry {
    ($(($constant:ident, $krate:ident, $name:literal, $port:literal, $framework:literal, $calls:ident),)+) => {
        $(
            #[doc = concat!("`", $name, "` (", $framework, ").")]
            pub const $constant: StackInfo = StackInfo {
                identity: Identity { service: $name, framework: $framework, default_port: $port },
                db_calls: $crate::db_calls!($calls),
            };
        )+

        /// Every stack, in SPEC §1's order.
        pub const ALL: &[StackInfo] = &[$($constant,)+];
    };
}

for_each_stack!(registry);

/// An axis of the comparison (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The web framework.
    Framework,
    /// The JSON serializer.
    Serializer,
    /// The database access style.
    Access,
}

/// Two stacks that differ in the axes named, and in nothing else (a conformance test checks
/// that against the stacks' own tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisPair {
    /// What the page calls the comparison.
    pub title: &'static str,
    /// The stack compared against: the page reports `changed` against this one.
    pub baseline: StackInfo,
    /// The stack with the axes changed.
    pub changed: StackInfo,
    /// The axes that differ.
    pub axes: &'static [Axis],
    /// What changes, in words.
    pub note: &'static str,
}

/// The pairs of SPEC §1 that change one axis (or one group of axes).
pub const AXIS_PAIRS: [AxisPair; 4] = [
    AxisPair {
        title: "database access",
        baseline: AXUM_SERDE_SQLX,
        changed: AXUM_SERDE_DIESEL,
        axes: &[Axis::Access],
        note: "sqlx (async) → diesel + r2d2 on spawn_blocking; axum and serde_json in both",
    },
    AxisPair {
        title: "framework, blocking path",
        baseline: AXUM_SERDE_DIESEL,
        changed: ACTIX_SERDE_DIESEL,
        axes: &[Axis::Framework],
        note: "axum + spawn_blocking → actix-web + web::block; serde_json and diesel in both",
    },
    AxisPair {
        title: "framework + serializer",
        baseline: AXUM_SERDE_SQLX,
        changed: ACTIX_SIMD_SQLX,
        axes: &[Axis::Framework, Axis::Serializer],
        note: "axum + serde_json → actix-web + simd-json; sqlx in both",
    },
    AxisPair {
        title: "framework + serializer",
        baseline: AXUM_SERDE_SQLX,
        changed: HYPER_SONIC_SQLX,
        axes: &[Axis::Framework, Axis::Serializer],
        note: "axum + serde_json → bare hyper + sonic-rs; sqlx in both",
    },
];

/// The stack called `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<StackInfo, String> {
    ALL.iter()
        .copied()
        .find(|s| s.identity.service == name)
        .ok_or_else(|| format!("unknown stack {name:?}; valid: {}", names().join(", ")))
}

/// Every stack's name, in order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|s| s.identity.service).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_ports_and_lookup() {
        let ports: Vec<u16> = ALL.iter().map(|s| s.identity.default_port).collect();
        assert_eq!(ports, [8081, 8082, 8083, 8084, 8085]);
        assert_eq!(find("actix-simd-sqlx").unwrap().identity.framework, "actix-web");
        let error = find("axum").unwrap_err();
        assert!(error.contains("hyper-sonic-sqlx"), "{error}");
    }

    #[test]
    fn names_and_ports_are_unique() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        let mut ports: Vec<u16> = ALL.iter().map(|s| s.identity.default_port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!((names.len(), ports.len()), (ALL.len(), ALL.len()));
    }

    #[test]
    fn axis_pairs_join_two_stacks_of_the_registry() {
        for pair in AXIS_PAIRS {
            assert!(ALL.contains(&pair.baseline) && ALL.contains(&pair.changed));
            assert_ne!(pair.baseline, pair.changed);
            assert!(!pair.axes.is_empty());
            let framework_differs =
                pair.baseline.identity.framework != pair.changed.identity.framework;
            assert_eq!(framework_differs, pair.axes.contains(&Axis::Framework), "{}", pair.title);
        }
    }
}
