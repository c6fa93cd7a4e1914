//! The stacks of SPEC §1, declared once in [`for_each_stack!`](crate::for_each_stack): the one list every tool
//! reads — the servers' identities, the load generator's registry, the conformance and fault
//! tests' expansions, the axis pairs, the colours of the pages, the compose services' check.
//!
//! Beside the five presets, any framework × serializer × access triple is a stack of its own,
//! named by its three tags joined with `+` (`axum+sonic-rs+diesel-async`): [`composed`],
//! derived from [`FRAMEWORKS`], [`SERIALIZERS`] and [`ACCESSES`]. A composed stack is served
//! by its framework's one binary (`axum-any`, …), which picks the serializer and the store
//! at start-up among instantiations compiled in (`--serializer`, `--access`); a preset by
//! its own crate and binary, with its name, port and binary unchanged.

use std::sync::LazyLock;

use crate::identity::{DbCalls, Identity};
use crate::tuning::Tuning;

/// Calls `$callback!` with every preset stack, one entry each:
/// `(CONST, crate_name, "binary-name", port, "framework", "serializer", "access")` — the
/// constant of its [`StackInfo`] here, its crate (for the expansions that call its `serve`),
/// its binary and default port, and its three tags as small-json reports them. The crate's
/// types must report the same tags: `bookstore_app::check_stack!` fails its build
/// otherwise. A stack whose access is `diesel` blocks (it takes `--blocking-threads`).
/// Adding a stack: its crate under `crates/servers/`, one line here, and the crate in
/// `crates/conformance/Cargo.toml`.
#[macro_export]
macro_rules! for_each_stack {
    ($callback:ident) => {
        $callback! {
            (AXUM_SERDE_SQLX, axum_serde_sqlx, "axum-serde-sqlx", 8081, "axum", "serde_json", "sqlx"),
            (AXUM_SERDE_DIESEL, axum_serde_diesel, "axum-serde-diesel", 8082, "axum", "serde_json", "diesel"),
            (ACTIX_SERDE_DIESEL, actix_serde_diesel, "actix-serde-diesel", 8083, "actix-web", "serde_json", "diesel"),
            (ACTIX_SIMD_SQLX, actix_simd_sqlx, "actix-simd-sqlx", 8084, "actix-web", "simd-json", "sqlx"),
            (HYPER_SONIC_SQLX, hyper_sonic_sqlx, "hyper-sonic-sqlx", 8085, "hyper", "sonic-rs", "sqlx"),
        }
    };
}

/// A stack's three tags, as small-json's `tags` names them: its framework, serializer and
/// database access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tags {
    /// `axum`, `actix-web`, `hyper`.
    pub framework: &'static str,
    /// `serde_json`, `simd-json`, `sonic-rs`.
    pub serializer: &'static str,
    /// `sqlx`, `diesel`, `diesel-async`.
    pub access: &'static str,
}

impl Tags {
    /// The tag of `axis`.
    pub fn of(&self, axis: Axis) -> &'static str {
        match axis {
            Axis::Framework => self.framework,
            Axis::Serializer => self.serializer,
            Axis::Access => self.access,
        }
    }

    /// The composed stack's name: the three tags joined with `+`.
    pub fn name(&self) -> String {
        format!("{}+{}+{}", self.framework, self.serializer, self.access)
    }
}

/// Whether a stack is one of the five of SPEC §1 or a triple composed at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A preset: its own crate and binary.
    Preset,
    /// A composed triple: its framework's binary, told its serializer and access by flags.
    Composed,
    /// A server of one's own, by URL under a name of its own (`--targets mine=URL`): not one
    /// of the workspace's stacks, so checked against every part of the contract that can be
    /// checked over HTTP before it is measured; its parts are unknown (`?`).
    Foreign,
}

/// How a stack's server lays out its runtime (SPEC §1, "Realism"): the framework's own, or
/// the labelled per-core variant — one current-thread runtime per worker thread, each
/// accepting its own connections and drawing from its own pool of pool_max ÷ workers
/// connections opened on that thread; the same total, no pipelining across requests.
/// A stack's name says it after `@`: `axum+serde_json+sqlx@per-core`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Layout {
    /// The framework's ordinary serving setup (axum and hyper on tokio's multi-thread
    /// runtime; actix-web's workers, each a single-threaded runtime, sharing one pool).
    #[default]
    Framework,
    /// One runtime, listener and pool per worker thread.
    PerCore,
}

impl Layout {
    /// Every layout, the framework's first.
    pub const ALL: [Layout; 2] = [Layout::Framework, Layout::PerCore];

    /// Its name: `--layout`'s value and a stack name's suffix after `@`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Framework => "framework",
            Layout::PerCore => "per-core",
        }
    }

    /// The layout called `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|l| l.name() == name)
            .ok_or_else(|| format!("unknown layout {name:?}; the layouts: framework, per-core"))
    }
}

/// What a stack is, as the tools that start it see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackInfo {
    /// Name, framework, default port.
    pub identity: Identity,
    /// Whether it takes `--blocking-threads`.
    pub db_calls: DbCalls,
    /// Its framework, serializer and access.
    pub tags: Tags,
    /// The binary that serves it: a preset's own, a composed stack's framework's.
    pub binary: &'static str,
    /// Preset or composed.
    pub kind: Kind,
    /// The framework's own runtime layout, or the per-core variant (`@per-core`).
    pub layout: Layout,
}

impl StackInfo {
    /// The flags a harness starts its binary with: [`launch_args`](Self::launch_args), then
    /// `tuning`'s (a variant's own go after these).
    pub fn args(&self, tuning: &Tuning) -> Vec<String> {
        let mut args = self.launch_args();
        args.extend(tuning.args(self.db_calls));
        args
    }

    /// The flags its binary needs to be this stack (a composed stack's `--serializer` and
    /// `--access`; none for a preset), before any harness's or variant's own.
    pub fn launch_args(&self) -> Vec<String> {
        let mut args = match self.kind {
            Kind::Preset | Kind::Foreign => Vec::new(),
            Kind::Composed => vec![
                format!("--{}", crate::tuning::flags::SERIALIZER),
                self.tags.serializer.to_owned(),
                format!("--{}", crate::tuning::flags::ACCESS),
                self.tags.access.to_owned(),
            ],
        };
        if self.layout != Layout::Framework {
            args.extend([
                format!("--{}", crate::tuning::flags::LAYOUT),
                self.layout.name().to_owned(),
            ]);
        }
        args
    }

    /// This stack in `layout`, named `<name>@<layout>` (the framework's own keeps its name).
    pub fn in_layout(self, layout: Layout) -> Self {
        if layout == self.layout {
            return self;
        }
        let base = self.identity.service.split('@').next().unwrap_or(self.identity.service);
        let service: &'static str = match layout {
            Layout::Framework => base,
            layout => interned(format!("{base}@{}", layout.name())),
        };
        Self { identity: Identity { service, ..self.identity }, layout, ..self }
    }
}

/// `name` as a `&'static str`, leaked once per distinct name for the life of the process
/// (a stack's name in a layout is asked for again and again by the pages).
fn interned(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.get(name.as_str()) {
        return known;
    }
    let leaked: &'static str = name.leak();
    names.insert(leaked);
    leaked
}

/// A framework a composed stack can be served by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameworkInfo {
    /// Its tag.
    pub tag: &'static str,
    /// The binary that serves any triple on it (its crate in `crates/any-stacks/`).
    pub binary: &'static str,
}

/// A database access a composed stack can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessInfo {
    /// Its tag.
    pub tag: &'static str,
    /// Whether its calls block a thread (`diesel` on r2d2) or not.
    pub db_calls: DbCalls,
}

/// The frameworks, in the order composed stacks are listed.
pub const FRAMEWORKS: [FrameworkInfo; 3] = [
    FrameworkInfo { tag: "axum", binary: "axum-any" },
    FrameworkInfo { tag: "actix-web", binary: "actix-web-any" },
    FrameworkInfo { tag: "hyper", binary: "hyper-any" },
];

/// The serializers (their `Codec::NAME`s), in order.
pub const SERIALIZERS: [&str; 3] = ["serde_json", "simd-json", "sonic-rs"];

/// The database accesses (their `Store::ACCESS`es), in order: async sqlx, blocking diesel
/// on r2d2, async diesel-async on bb8, and async tokio-postgres directly (the driver
/// diesel-async runs on, without a query builder) on bb8.
pub const ACCESSES: [AccessInfo; 4] = [
    AccessInfo { tag: "sqlx", db_calls: DbCalls::Async },
    AccessInfo { tag: "diesel", db_calls: DbCalls::Blocking },
    AccessInfo { tag: "diesel-async", db_calls: DbCalls::Async },
    AccessInfo { tag: "tokio-postgres", db_calls: DbCalls::Async },
];

/// The default port of the first composed stack; the others follow in [`composed`]'s
/// order (8100–8135), clear of the presets' 8081–8085.
pub const COMPOSED_BASE_PORT: u16 = 8100;

/// Whether calls of the access tagged `access` block.
pub const fn db_calls_of(access: &str) -> DbCalls {
    // From ACCESSES, the one table of them; an access it does not name fails the build of
    // the registry line that names it.
    let mut i = 0;
    while i < ACCESSES.len() {
        if same_str(ACCESSES[i].tag, access) {
            return ACCESSES[i].db_calls;
        }
        i += 1;
    }
    panic!("an access tag that ACCESSES does not name")
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

macro_rules! registry {
    ($(($constant:ident, $krate:ident, $name:literal, $port:literal, $framework:literal, $serializer:literal, $access:literal),)+) => {
        $(
            #[doc = concat!("`", $name, "` (", $framework, " + ", $serializer, " + ", $access, ").")]
            pub const $constant: StackInfo = StackInfo {
                identity: Identity { service: $name, framework: $framework, default_port: $port },
                db_calls: db_calls_of($access),
                tags: Tags { framework: $framework, serializer: $serializer, access: $access },
                binary: $name,
                kind: Kind::Preset,
                layout: Layout::Framework,
            };
        )+

        /// Every preset stack, in SPEC §1's order.
        pub const ALL: &[StackInfo] = &[$($constant,)+];
    };
}

for_each_stack!(registry);

/// Every framework × serializer × access triple (36), framework first, then serializer,
/// then access, in the orders of [`FRAMEWORKS`], [`SERIALIZERS`] and [`ACCESSES`].
pub fn composed() -> &'static [StackInfo] {
    static COMPOSED: LazyLock<Vec<StackInfo>> = LazyLock::new(|| {
        let mut stacks = Vec::with_capacity(FRAMEWORKS.len() * SERIALIZERS.len() * ACCESSES.len());
        for framework in FRAMEWORKS {
            for serializer in SERIALIZERS {
                for access in ACCESSES {
                    let tags = Tags { framework: framework.tag, serializer, access: access.tag };
                    // 36 names, made once for the life of the process.
                    let service: &'static str = tags.name().leak();
                    let port = COMPOSED_BASE_PORT + stacks.len() as u16;
                    stacks.push(StackInfo {
                        identity: Identity {
                            service,
                            framework: framework.tag,
                            default_port: port,
                        },
                        db_calls: access.db_calls,
                        tags,
                        binary: framework.binary,
                        kind: Kind::Composed,
                        layout: Layout::Framework,
                    });
                }
            }
        }
        stacks
    });
    &COMPOSED
}

/// The composed stack with these tags, if they are tags of the registry.
pub fn composed_of(tags: Tags) -> Option<StackInfo> {
    composed().iter().copied().find(|s| s.tags == tags)
}

/// An axis of the comparison (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axis {
    /// The web framework.
    Framework,
    /// The JSON serializer.
    Serializer,
    /// The database access style.
    Access,
}

impl Axis {
    /// Every axis, in the order of the tags.
    pub const ALL: [Axis; 3] = [Axis::Framework, Axis::Serializer, Axis::Access];
}

/// Two stacks that differ in the axes named, and in nothing else (a test checks that
/// against the stacks' tags, and the conformance suite the tags against the stacks' types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisPair {
    /// What the page calls the comparison.
    pub title: &'static str,
    /// The stack compared against: the page reports `changed` against this one.
    pub baseline: &'static str,
    /// The stack with the axes changed.
    pub changed: &'static str,
    /// The axes that differ.
    pub axes: &'static [Axis],
    /// What changes, in words.
    pub note: &'static str,
}

impl AxisPair {
    /// The two stacks, baseline first.
    pub fn stacks(&self) -> (StackInfo, StackInfo) {
        let stack = |name| find(name).expect("an axis pair names stacks of the registry");
        (stack(self.baseline), stack(self.changed))
    }
}

/// The pairs that change one axis (or one group of axes): SPEC §1's among the presets, and
/// among composed stacks those that isolate the serializer and split the access axis into
/// its style (blocking → async, one library) and its library (both async).
pub const AXIS_PAIRS: [AxisPair; 10] = [
    AxisPair {
        title: "database access",
        baseline: "axum-serde-sqlx",
        changed: "axum-serde-diesel",
        axes: &[Axis::Access],
        note: "sqlx (async) → diesel + r2d2 on spawn_blocking: the style and the library; axum and serde_json in both",
    },
    AxisPair {
        title: "framework, blocking path",
        baseline: "axum-serde-diesel",
        changed: "actix-serde-diesel",
        axes: &[Axis::Framework],
        note: "axum + spawn_blocking → actix-web + web::block; serde_json and diesel in both",
    },
    AxisPair {
        title: "framework + serializer",
        baseline: "axum-serde-sqlx",
        changed: "actix-simd-sqlx",
        axes: &[Axis::Framework, Axis::Serializer],
        note: "axum + serde_json → actix-web + simd-json; sqlx in both",
    },
    AxisPair {
        title: "framework + serializer",
        baseline: "axum-serde-sqlx",
        changed: "hyper-sonic-sqlx",
        axes: &[Axis::Framework, Axis::Serializer],
        note: "axum + serde_json → bare hyper + sonic-rs; sqlx in both",
    },
    AxisPair {
        title: "serializer",
        baseline: "axum+serde_json+sqlx",
        changed: "axum+simd-json+sqlx",
        axes: &[Axis::Serializer],
        note: "serde_json → simd-json; axum and sqlx in both",
    },
    AxisPair {
        title: "serializer",
        baseline: "axum+serde_json+sqlx",
        changed: "axum+sonic-rs+sqlx",
        axes: &[Axis::Serializer],
        note: "serde_json → sonic-rs; axum and sqlx in both",
    },
    AxisPair {
        title: "access style",
        baseline: "axum+serde_json+diesel",
        changed: "axum+serde_json+diesel-async",
        axes: &[Axis::Access],
        note: "diesel blocking on spawn_blocking → diesel-async awaited on the worker: the same statements, the style alone",
    },
    AxisPair {
        title: "access library",
        baseline: "axum+serde_json+diesel-async",
        changed: "axum+serde_json+sqlx",
        axes: &[Axis::Access],
        note: "diesel-async → sqlx, both async on the worker: the library alone",
    },
    AxisPair {
        title: "query builder",
        baseline: "axum+serde_json+tokio-postgres",
        changed: "axum+serde_json+diesel-async",
        axes: &[Axis::Access],
        note: "tokio-postgres directly → diesel-async over tokio-postgres: the same driver, diesel's query builder added",
    },
    AxisPair {
        title: "driver",
        baseline: "axum+serde_json+tokio-postgres",
        changed: "axum+serde_json+sqlx",
        axes: &[Axis::Access],
        note: "tokio-postgres → sqlx, neither building queries: the driver alone",
    },
];

/// The stack called `name` — a preset's name or a triple's — or an error saying what names
/// are valid.
pub fn find(name: &str) -> Result<StackInfo, String> {
    if let Some((base, layout)) = name.split_once('@') {
        return Ok(find(base)?.in_layout(Layout::parse(layout)?));
    }
    ALL.iter().chain(composed()).copied().find(|s| s.identity.service == name).ok_or_else(|| {
        let tags =
            |list: &mut dyn Iterator<Item = &'static str>| list.collect::<Vec<_>>().join("|");
        format!(
            "unknown stack {name:?}; valid: {}, or framework+serializer+access of {}+{}+{}, each optionally @per-core",
            names().join(", "),
            tags(&mut FRAMEWORKS.iter().map(|f| f.tag)),
            tags(&mut SERIALIZERS.iter().copied()),
            tags(&mut ACCESSES.iter().map(|a| a.tag)),
        )
    })
}

/// A server of one's own named `name` (letters, digits, `-`, `_`, `.`, `+`; not a name of
/// the registry): measured by URL beside the stacks, its framework, serializer and access
/// unknown.
pub fn foreign(name: &str) -> Result<StackInfo, String> {
    let valid =
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c));
    if !valid {
        return Err(format!(
            "{name:?} cannot name a server: use letters, digits, '-', '_', '.' or '+'"
        ));
    }
    if find(name).is_ok() {
        return Err(format!("{name} is a stack of the registry, not a server of one's own"));
    }
    const UNKNOWN: &str = "?";
    // Named once for the life of the process, as the composed stacks are.
    let service: &'static str = name.to_owned().leak();
    Ok(StackInfo {
        identity: Identity { service, framework: UNKNOWN, default_port: 0 },
        db_calls: DbCalls::Async,
        tags: Tags { framework: UNKNOWN, serializer: UNKNOWN, access: UNKNOWN },
        binary: service,
        kind: Kind::Foreign,
        layout: Layout::Framework,
    })
}

/// Every preset's name, in order.
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
    fn axis_pairs_join_two_stacks_that_differ_in_the_axes_they_claim_and_no_other() {
        for pair in AXIS_PAIRS {
            let (baseline, changed) = pair.stacks();
            assert!(!pair.axes.is_empty());
            for axis in Axis::ALL {
                assert_eq!(
                    baseline.tags.of(axis) != changed.tags.of(axis),
                    pair.axes.contains(&axis),
                    "{} → {}: {axis:?}",
                    pair.baseline,
                    pair.changed
                );
            }
        }
    }

    #[test]
    fn the_axis_pairs_isolate_the_serializer_and_split_access_into_style_and_library() {
        let single = |axis| {
            AXIS_PAIRS
                .iter()
                .filter(move |p| p.axes == [axis])
                .map(|p| p.stacks())
                .collect::<Vec<_>>()
        };
        let serializers: Vec<&str> =
            single(Axis::Serializer).iter().map(|(_, changed)| changed.tags.serializer).collect();
        assert_eq!(serializers, ["simd-json", "sonic-rs"]);
        let access = single(Axis::Access);
        // Style: the library stays diesel, the calls stop blocking.
        assert!(access.iter().any(|(a, b)| a.db_calls == DbCalls::Blocking
            && b.db_calls == DbCalls::Async
            && b.tags.access.starts_with(a.tags.access)));
        // Library: both async.
        assert!(access.iter().any(|(a, b)| a.db_calls == DbCalls::Async
            && b.db_calls == DbCalls::Async
            && a.tags.access != b.tags.access));
    }

    #[test]
    fn every_triple_is_composed_once_with_its_own_port_and_its_framework_s_binary() {
        let composed = composed();
        assert_eq!(composed.len(), 36);
        let mut names: Vec<&str> = composed.iter().map(|s| s.identity.service).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 36);
        let ports: Vec<u16> = composed.iter().map(|s| s.identity.default_port).collect();
        assert_eq!(ports, (8100..8136).collect::<Vec<u16>>());
        let stack = find("axum+sonic-rs+diesel-async").unwrap();
        assert_eq!(
            (stack.binary, stack.kind, stack.db_calls),
            ("axum-any", Kind::Composed, DbCalls::Async)
        );
        // Framework, then serializer, then access: axum's eleventh.
        assert_eq!(stack.identity.default_port, 8110);
        assert_eq!(stack.launch_args(), ["--serializer", "sonic-rs", "--access", "diesel-async"]);
        let blocking = find("hyper+simd-json+diesel").unwrap();
        assert_eq!((blocking.binary, blocking.db_calls), ("hyper-any", DbCalls::Blocking));
        assert!(AXUM_SERDE_SQLX.launch_args().is_empty());
        // No composed name is a preset's, and each preset's triple is composed too.
        for preset in ALL {
            assert!(!names.contains(&preset.identity.service));
            assert!(composed_of(preset.tags).is_some(), "{}", preset.identity.service);
        }
        let per_core = find("axum+serde_json+sqlx@per-core").unwrap();
        assert_eq!(
            (per_core.identity.service, per_core.layout),
            ("axum+serde_json+sqlx@per-core", Layout::PerCore)
        );
        assert_eq!(&per_core.launch_args()[4..], ["--layout", "per-core"]);
        assert_eq!(
            find("actix-serde-diesel@per-core").unwrap().launch_args(),
            ["--layout", "per-core"]
        );
        assert!(find("axum-serde-sqlx@sideways").unwrap_err().contains("per-core"));
        assert_eq!(per_core.in_layout(Layout::Framework).identity.service, "axum+serde_json+sqlx");
        let mine = foreign("mine-v2").unwrap();
        assert_eq!(
            (mine.identity.service, mine.kind, mine.tags.framework),
            ("mine-v2", Kind::Foreign, "?")
        );
        assert!(foreign("axum-serde-sqlx").unwrap_err().contains("registry"));
        assert!(foreign("a b").is_err() && foreign("").is_err());
        let error = find("axum+sonic-rs+jdbc").unwrap_err();
        assert!(error.contains("sqlx|diesel|diesel-async|tokio-postgres"), "{error}");
    }
}
