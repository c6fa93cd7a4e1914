#!/usr/bin/env bash
# Builds local stand-ins for the three base images the project's Dockerfile and
# docker-compose.yml name, for an engine that cannot reach an image registry (CI here: no
# registry is reachable, only Debian's mirror and crates.io). Each is tagged with the very
# name the project's files use, so those files run unchanged; each says below what it
# stands in for and how it differs. Nothing is pulled: the Debian base comes from
# debootstrap, the others are built on it with `docker build` (the legacy builder, with the
# host's network for apt only).
#
#   docker/standins/build.sh            # builds whichever stand-in is missing or stale
#
# Needs root (debootstrap), a running engine, and a Rust toolchain on the host (copied into
# the rust stand-in). A stand-in already built is kept: the engine's image store is the
# cache; an image whose inputs changed (Cargo.lock, these files, the toolchain) is rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
say() { echo "standins: $*" >&2; }
die() { say "$*"; exit 1; }
docker=${DOCKER:-docker}
# Temporary directories, removed however the script ends.
scratch=()
trap 'rm -rf "${scratch[@]}"' EXIT

# The names, read from the files that use them (one source).
debian=$(sed -n 's/^FROM \(debian:[^ ]*\).*/\1/p' "$root/Dockerfile" | head -n 1)
rust_version=$(sed -n 's/^ARG RUST_VERSION=//p' "$root/Dockerfile")
rust="rust:$rust_version-bookworm"
postgres=$(sed -n 's/^ *image: \(postgres:.*\)$/\1/p' "$root/docker-compose.yml" | head -n 1)
[ -n "$debian" ] && [ -n "$rust_version" ] && [ -n "$postgres" ] \
    || die "cannot read the base image names from Dockerfile and docker-compose.yml"

# Whether image $1 exists with label bookstore.standin.inputs = $2.
current() {
    [ "$("$docker" image inspect -f '{{index .Config.Labels "bookstore.standin.inputs"}}' "$1" 2>/dev/null)" = "$2" ]
}

digest() { sha256sum | cut -c1-16; }

mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}

# debian:12.x-slim — Debian bookworm as `debootstrap --variant=minbase` installs it from
# the mirror, with the official slim image's trims (no docs, man pages or apt lists). It is
# whatever point release the mirror has today; /etc/debian_version inside tells which.
build_debian() {
    local inputs
    inputs=$(cat "$here/build.sh" | digest)
    if current "$debian" "$inputs"; then say "$debian: cached"; return; fi
    command -v debootstrap >/dev/null || die "debootstrap not found (Debian: apt-get install debootstrap)"
    local dir
    dir=$(mktemp -d /tmp/standin-debian.XXXXXX)
    scratch+=("$dir")
    say "$debian: debootstrap --variant=minbase bookworm from $mirror"
    debootstrap --variant=minbase bookworm "$dir/rootfs" "$mirror" > "$dir/log" 2>&1 \
        || { tail -n 5 "$dir/log" >&2; die "debootstrap failed"; }
    local fs=$dir/rootfs
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
        'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
        'path-exclude /usr/share/locale/*' > "$fs/etc/dpkg/dpkg.cfg.d/docker-slim"
    find "$fs/usr/share/doc" -mindepth 2 ! -name copyright -type f -delete 2>/dev/null || true
    rm -rf "$fs"/usr/share/man/* "$fs"/usr/share/info/* "$fs"/usr/share/locale/* \
        "$fs"/var/cache/apt/archives/*.deb "$fs"/var/lib/apt/lists/* "$fs"/tmp/*
    say "$debian: Debian $(cat "$fs/etc/debian_version")"
    tar -C "$fs" -c . | "$docker" import \
        --change 'CMD ["bash"]' --change "LABEL bookstore.standin.inputs=$inputs" \
        --change "LABEL bookstore.standin.debian-version=$(cat "$fs/etc/debian_version")" \
        - "$debian" >/dev/null
}

# postgres:17.x — PostgreSQL 15 from Debian bookworm (no registry and no PGDG mirror here)
# with an entrypoint that does what the official image's does for this project: initdb as
# POSTGRES_USER with POSTGRES_PASSWORD and POSTGRES_INITDB_ARGS, password auth over TCP,
# POSTGRES_DB created, /docker-entrypoint-initdb.d/*.sql run in name order on a server that
# listens on its socket only, then `postgres "$@"` as the postgres user. Differs from the
# official image in the server version (15, not 17) and in what the project never uses
# (*.sh init scripts, POSTGRES_HOST_AUTH_METHOD, Docker secrets).
build_postgres() {
    local inputs
    inputs=$(cat "$here/postgres/Dockerfile" "$here/postgres/docker-entrypoint.sh" <("$docker" image inspect -f '{{.Id}}' "$debian") | digest)
    if current "$postgres" "$inputs"; then say "$postgres: cached"; return; fi
    say "$postgres: PostgreSQL 15 from Debian on $debian"
    DOCKER_BUILDKIT=0 "$docker" build -q --network host --build-arg "BASE=$debian" \
        --label "bookstore.standin.inputs=$inputs" -t "$postgres" "$here/postgres" >/dev/null
}

# rust:1.95.x-bookworm — the host's own toolchain (rustc --print sysroot, without its docs)
# with gcc and libc6-dev from Debian, where the official image has rustup and the whole
# buildpack-deps. Crates come from a directory vendored from Cargo.lock (`cargo vendor
# --locked`), set as the crates.io source in $CARGO_HOME/config.toml, because a container
# here reaches no registry; the official image downloads them.
build_rust() {
    local sysroot version
    sysroot=$(rustc --print sysroot)
    version=$(rustc --version)
    [[ "$version" == "rustc $rust_version "* ]] \
        || die "$rust: the host's toolchain is $version; the stand-in copies the host's, so they must agree"
    local inputs
    inputs=$(cat "$here/rust/Dockerfile" "$root/Cargo.lock" <(echo "$version") <("$docker" image inspect -f '{{.Id}}' "$debian") | digest)
    if current "$rust" "$inputs"; then say "$rust: cached"; return; fi
    local context
    mkdir -p "$root/target"
    context=$(mktemp -d "$root/target/standin-rust.XXXXXX")
    scratch+=("$context")
    say "$rust: $version from the host, crates vendored from Cargo.lock"
    mkdir -p "$context/toolchain"
    # Hard links where the file system allows: the toolchain is large even without its docs
    # (`du -sh "$sysroot"`), and a copy per build would be its size again.
    cp -al "$sysroot/bin" "$sysroot/lib" "$context/toolchain/" 2>/dev/null \
        || cp -a "$sysroot/bin" "$sysroot/lib" "$context/toolchain/"
    (cd "$root" && cargo vendor --locked --quiet "$context/vendor" >/dev/null)
    cp "$here/rust/Dockerfile" "$context/"
    DOCKER_BUILDKIT=0 "$docker" build -q --network host --build-arg "BASE=$debian" \
        --label "bookstore.standin.inputs=$inputs" -t "$rust" "$context" >/dev/null
}

build_debian
build_postgres
build_rust
