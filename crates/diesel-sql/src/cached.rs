//! [`CachedSql`]: a fixed SQL text that diesel's statement cache keeps.

use diesel::pg::{Pg, PgConnection};
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Untyped};
use diesel::{QueryResult, RunQueryDsl};

/// A fixed SQL text with `bigint` parameters `$1`, `$2`, … that diesel's statement cache
/// keeps per connection (keyed by the text), as it keeps every DSL query and as sqlx keeps
/// every statement. `diesel::sql_query` marks itself unsafe to cache, so it is parsed and
/// planned again on every call: the stacks' aggregate ran that way until a test looked
/// (`pg_prepared_statements`), against the parity rule of SPEC §1. Load rows with
/// `QueryableByName`, as from `sql_query`.
#[derive(Debug, Clone, Copy)]
pub struct CachedSql<'a> {
    sql: &'static str,
    binds: &'a [i64],
}

impl<'a> CachedSql<'a> {
    /// `sql` with `binds` for `$1`… in order (at most nine; each placeholder once).
    pub fn new(sql: &'static str, binds: &'a [i64]) -> Self {
        assert!(binds.len() < 10, "at most nine parameters: {sql}");
        debug_assert_eq!(sql.matches('$').count(), binds.len(), "one $n per parameter: {sql}");
        Self { sql, binds }
    }
}

impl QueryId for CachedSql<'_> {
    type QueryId = ();
    // Not a static id: the cache keys it by its SQL text and bind types instead.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for CachedSql<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // Runs on every execution (diesel builds the text to find the cached statement):
        // no allocation of ours.
        const PLACEHOLDERS: [&str; 9] = ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9"];
        let mut rest = self.sql;
        for (value, placeholder) in self.binds.iter().zip(PLACEHOLDERS) {
            let (before, after) = rest.split_once(placeholder).ok_or_else(|| {
                diesel::result::Error::QueryBuilderError(
                    format!("{placeholder} missing from {}", self.sql).into(),
                )
            })?;
            out.push_sql(before);
            out.push_bind_param::<BigInt, _>(value)?;
            rest = after;
        }
        out.push_sql(rest);
        Ok(())
    }
}

impl Query for CachedSql<'_> {
    type SqlType = Untyped;
}

impl RunQueryDsl<PgConnection> for CachedSql<'_> {}
