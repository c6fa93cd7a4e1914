#!/usr/bin/env bash
# The database microbenchmarks (see docs/findings.md, "Database access without HTTP"): builds dbbench
# in release and runs it on a throwaway PostgreSQL — CRUD operations over pool sizes ×
# workers, bulk insert strategies, the batch job, threads against tasks; the bulk
# strategies and the batch job on MariaDB (a throwaway server; its binary and client library
# installed with apt as root, else left out with a line saying how) and SQLite too — then writes
# summary/results/dbbench-<time>.json and summary/db-microbench.html. Arguments go to
# `dbbench run` (see its --help), e.g.
#   scripts/dbbench.sh --quick                 # a short sweep: under a minute here, after the build
#   scripts/dbbench.sh --sections bulk,tasks   # some sections only
# Run it on a quiet machine, as the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

require_cargo
ensure_pg_binaries_unless_database_url "$@"
features=(--features "$(dbbench_features)")
wants_containers "$@" && features+=(--features bookstore-fixture/testcontainers)
cargo build --release --locked -p bookstore-dbbench "${features[@]}"
exec target/release/dbbench run "$@"
