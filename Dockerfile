# syntax=docker/dockerfile:1
# One image per binary of the workspace, chosen with STACK:
#   docker build --build-arg STACK=axum-serde-sqlx -t bookstore/axum-serde-sqlx .
# STACK is one of the five stacks (SPEC §1) or `loadgen`. Every image is built with the
# same release profile and .cargo/config.toml flags as scripts/bench.sh builds (SPEC §1
# parity); the runtime image holds the one binary (libpq is linked statically).
ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
ARG STACK
RUN test -n "$STACK" || { echo "set --build-arg STACK=<stack name or loadgen>" >&2; exit 1; }
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin "$STACK" \
    && install -D "target/release/$STACK" /out/server

FROM debian:bookworm-slim
ARG STACK
COPY --from=build /out/server /usr/local/bin/${STACK}
# The stacks listen on 127.0.0.1 by default (SPEC §1); in a container they need 0.0.0.0,
# which docker-compose.yml sets with BIND.
USER nobody
ENV STACK=${STACK}
ENTRYPOINT ["/bin/sh", "-c", "exec /usr/local/bin/$STACK \"$@\"", "--"]
