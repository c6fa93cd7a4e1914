# One image per binary of the workspace, chosen with STACK:
#   docker build --build-arg STACK=axum-serde-sqlx -t bookstore-bench/axum-serde-sqlx .
# STACK is one of the five stacks (SPEC §1), `loadgen` (with the responder), or — with
# IMAGES naming them — a composed stacks' framework binary (`axum-any`, …). Every image is
# built with the same release profile and .cargo/config.toml flags as scripts/bench.sh
# builds (SPEC §1 parity); the runtime image holds its binaries (libpq is linked
# statically), stripped (`install -s`: the same code without its line tables, which only
# make a panic's backtrace readable, for a smaller image).
# The build stage does not depend on STACK: it builds every image's binaries in one cargo
# run (the links run side by side), and the engine's cache hands that one result to each of
# the six images docker-compose.yml builds, instead of six builds.
# No `# syntax=` line: it makes BuildKit fetch a frontend image from a registry; the
# engine's built-in frontend handles `RUN --mount=type=cache`. Base images are pinned to a
# minor version (scripts/compose-test.sh builds local stand-ins under these same names).
ARG RUST_VERSION=1.95.0

FROM rust:${RUST_VERSION}-bookworm AS build
# The images whose binaries this build makes: the six by default; the composed stacks'
# services (docker-compose.yml's profile `composed`) name their three framework binaries
# instead, so `docker compose up` never builds those.
ARG IMAGES="axum-serde-sqlx axum-serde-diesel actix-serde-diesel actix-simd-sqlx hyper-sonic-sqlx loadgen"
WORKDIR /src
COPY . .
# /out/<image>/ holds each image's binaries: a stack alone; the load generator with the
# responder beside it (the suite's HTTP ceiling).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    set -e; \
    images="$IMAGES"; \
    set --; for image in $images; do set -- "$@" --bin "$image"; done; \
    case " $images " in *" loadgen "*) set -- "$@" --bin responder ;; esac; \
    cargo build --release --locked "$@"; \
    for image in $images; do \
        bins=$image; [ "$image" != loadgen ] || bins="loadgen responder"; \
        for bin in $bins; do install -D -s "target/release/$bin" "/out/$image/$bin"; done; \
    done

FROM debian:12.15-slim
ARG STACK
RUN test -n "$STACK" || { echo "set --build-arg STACK=<stack name or loadgen>" >&2; exit 1; }
COPY --from=build /out/${STACK}/ /usr/local/bin/
# The stacks listen on 127.0.0.1 by default (SPEC §1); in a container they need 0.0.0.0,
# which docker-compose.yml sets with BIND.
USER nobody
ENV STACK=${STACK}
ENTRYPOINT ["/bin/sh", "-c", "exec /usr/local/bin/$STACK \"$@\"", "--"]
