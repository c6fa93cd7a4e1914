# syntax=docker/dockerfile:1
# One image per binary of the workspace, chosen with STACK:
#   docker build --build-arg STACK=axum-serde-sqlx -t bookstore/axum-serde-sqlx .
# STACK is one of the five stacks (SPEC §1) or `loadgen` (with the responder). Every image is built with the
# same release profile and .cargo/config.toml flags as scripts/bench.sh builds (SPEC §1
# parity); the runtime image holds the one binary (libpq is linked statically).
ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
ARG STACK
RUN test -n "$STACK" || { echo "set --build-arg STACK=<stack name or loadgen>" >&2; exit 1; }
WORKDIR /src
COPY . .
# The load generator needs the responder beside it (the suite's HTTP ceiling).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    set -e; bins="$STACK"; [ "$STACK" != loadgen ] || bins="loadgen responder"; \
    for bin in $bins; do set -- "$@" --bin "$bin"; done; \
    cargo build --release --locked "$@"; \
    for bin in $bins; do install -D "target/release/$bin" "/out/$bin"; done

FROM debian:bookworm-slim
ARG STACK
COPY --from=build /out/ /usr/local/bin/
# The stacks listen on 127.0.0.1 by default (SPEC §1); in a container they need 0.0.0.0,
# which docker-compose.yml sets with BIND.
USER nobody
ENV STACK=${STACK}
ENTRYPOINT ["/bin/sh", "-c", "exec /usr/local/bin/$STACK \"$@\"", "--"]
