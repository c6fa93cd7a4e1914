//! `bookstore-any`: any serializer and any database access on one framework — what the
//! composed stacks' binaries (`axum-any`, `actix-web-any`, `hyper-any`, in
//! `crates/any-stacks/`) share.
//!
//! A framework's binary compiles in all twelve serializer × access instantiations of its
//! server ([`serve`], one monomorphic function each) and picks one at start-up from
//! `--serializer` and `--access` ([`pick`]); after that, a request meets exactly the code a
//! preset with the same three parts runs — no trait object, no branch on the choice. The
//! stack's name, port and tags come from the registry (`bookstore_registry::stacks::composed`).
//!
//! ```text
//! cargo run --release -p axum-any -- --serializer sonic-rs --access diesel-async \
//!     --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```

use bookstore_app::stacks::{self, Tags};
use bookstore_app::{Identity, ServeFn, ServerConfig, Shutdown};
use bookstore_codec::{Codec, SerdeJson, SimdJson, SonicRs};
use bookstore_domain::offload::Offload;
use bookstore_domain::store::Store;

/// A web framework's side of a composed stack: its tag, where its blocking store's calls
/// run, and its generic server.
pub trait Framework: 'static {
    /// Its tag (small-json's first), as the registry's [`stacks::FRAMEWORKS`] names it.
    const TAG: &'static str;
    /// Where a blocking store's calls run on it (the preset on the same framework's).
    type Offload: Offload;
    /// Serves `listener` with store `S` and serializer `C` until `shutdown` completes.
    fn serve<S: Store, C: Codec>(
        identity: Identity,
        listener: std::net::TcpListener,
        config: ServerConfig,
        shutdown: Shutdown,
    ) -> anyhow::Result<()>;
}

/// A database access: the store it means on a framework whose blocking calls run on `O`.
pub trait Access: 'static {
    /// The store.
    type Store<O: Offload>: Store;
}

/// Async sqlx on its `PgPool`.
#[derive(Debug)]
pub struct Sqlx;
/// Blocking diesel on an r2d2 pool, its calls handed to the framework's blocking threads.
#[derive(Debug)]
pub struct Diesel;
/// Async diesel-async on a bb8 pool.
#[derive(Debug)]
pub struct DieselAsync;
/// Async tokio-postgres directly, statements prepared per connection, on a bb8 pool.
#[derive(Debug)]
pub struct TokioPostgres;

impl Access for Sqlx {
    type Store<O: Offload> = bookstore_store_sqlx::SqlxStore;
}

impl Access for Diesel {
    type Store<O: Offload> = bookstore_store_diesel::DieselStore<O>;
}

impl Access for DieselAsync {
    type Store<O: Offload> = bookstore_store_diesel_async::DieselAsyncStore;
}

impl Access for TokioPostgres {
    type Store<O: Offload> = bookstore_store_tokio_postgres::TokioPostgresStore;
}

/// The tags of the stack `F` + `C` + `A`, from the types themselves.
pub fn tags<F: Framework, C: Codec, A: Access>() -> Tags {
    Tags { framework: F::TAG, serializer: C::NAME, access: <A::Store<F::Offload> as Store>::ACCESS }
}

/// Serves the composed stack `F` + `C` + `A` under its registry name and port.
pub fn serve<F: Framework, C: Codec, A: Access>(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let tags = tags::<F, C, A>();
    let stack = stacks::composed_of(tags)
        .ok_or_else(|| anyhow::anyhow!("{} is not a stack of the registry", tags.name()))?;
    F::serve::<A::Store<F::Offload>, C>(stack.identity, listener, config, shutdown)
}

/// The entry point compiled in for `tags` on `F`, if `tags` name one of its twelve triples.
pub fn pick<F: Framework>(tags: Tags) -> Option<ServeFn> {
    if tags.framework != F::TAG {
        return None;
    }
    [
        pick_access::<F, SerdeJson>(tags),
        pick_access::<F, SimdJson>(tags),
        pick_access::<F, SonicRs>(tags),
    ]
    .into_iter()
    .flatten()
    .next()
}

/// Among `F` + `C`'s four accesses, the one `tags` name.
fn pick_access<F: Framework, C: Codec>(tags: Tags) -> Option<ServeFn> {
    let choices: [(Tags, ServeFn); 4] = [
        (self::tags::<F, C, Sqlx>(), serve::<F, C, Sqlx>),
        (self::tags::<F, C, Diesel>(), serve::<F, C, Diesel>),
        (self::tags::<F, C, DieselAsync>(), serve::<F, C, DieselAsync>),
        (self::tags::<F, C, TokioPostgres>(), serve::<F, C, TokioPostgres>),
    ];
    choices.into_iter().find(|(offered, _)| *offered == tags).map(|(_, serve)| serve)
}

/// A composed stack binary's whole `main`: the triple on `F` its flags name.
pub fn main<F: Framework>() -> std::process::ExitCode {
    bookstore_app::cli::main_composed(F::TAG, pick::<F>)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A framework that only records what it was asked to serve.
    struct Recorder;

    impl Framework for Recorder {
        const TAG: &'static str = "axum";
        type Offload = bookstore_store_diesel::SpawnBlocking;
        fn serve<S: Store, C: Codec>(
            identity: Identity,
            _: std::net::TcpListener,
            _: ServerConfig,
            _: Shutdown,
        ) -> anyhow::Result<()> {
            anyhow::bail!("{} {} {}", identity.service, C::NAME, S::ACCESS)
        }
    }

    #[test]
    fn each_of_a_framework_s_twelve_triples_picks_the_instantiation_of_its_own_types() {
        let on_axum: Vec<_> =
            stacks::composed().iter().filter(|s| s.tags.framework == "axum").collect();
        assert_eq!(on_axum.len(), 12);
        for stack in on_axum {
            let serve = pick::<Recorder>(stack.tags).expect("compiled in");
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let config = bookstore_app::cli::parse_composed(
                "axum",
                ["axum-any", "--database-url", "postgres://x@y/z"]
                    .into_iter()
                    .chain(["--serializer", stack.tags.serializer, "--access", stack.tags.access])
                    .map(Into::into),
            )
            .map(|(_, invocation)| match invocation {
                bookstore_app::cli::Invocation::Serve(config) => config,
                other => panic!("{other:?}"),
            })
            .unwrap();
            let said = serve(listener, config, Box::pin(async {})).unwrap_err().to_string();
            let t = stack.tags;
            assert_eq!(said, format!("{} {} {}", stack.identity.service, t.serializer, t.access));
        }
        let elsewhere = stacks::find("hyper+serde_json+sqlx").unwrap().tags;
        assert!(pick::<Recorder>(elsewhere).is_none());
    }
}
