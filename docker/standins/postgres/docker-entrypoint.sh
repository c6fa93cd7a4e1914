#!/usr/bin/env bash
# What the official postgres image's entrypoint does, for the parts this project uses (see
# build.sh): on an empty $PGDATA, initdb as $POSTGRES_USER with $POSTGRES_PASSWORD and
# $POSTGRES_INITDB_ARGS, password (scram) auth from any address, $POSTGRES_DB created, and
# /docker-entrypoint-initdb.d/*.sql run in name order with ON_ERROR_STOP on a server that
# listens on its socket only (so a TCP healthcheck stays unhealthy until they are done).
# Then the real server, as the postgres user, with the container's command line.
set -Eeuo pipefail

if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    chown postgres:postgres "$PGDATA"
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (the official image refuses to start without it too)}"
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments
    initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") ${POSTGRES_INITDB_ARGS:-} -D "$PGDATA" >/dev/null
    printf '\nhost all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start >/dev/null
    export PGPASSWORD=$POSTGRES_PASSWORD
    psql=(psql -v ON_ERROR_STOP=1 --username "$user" --no-password --no-psqlrc -q)
    if [ "$db" != postgres ]; then
        "${psql[@]}" --dbname postgres -c "CREATE DATABASE \"$db\""
    fi
    for f in /docker-entrypoint-initdb.d/*; do
        case "$f" in
            *.sql) echo "docker-entrypoint.sh: running $f"; "${psql[@]}" --dbname "$db" -f "$f" ;;
            *.sh | *.sql.gz | *.sql.xz) echo "docker-entrypoint.sh: $f: not supported by this stand-in" >&2; exit 1 ;;
            *) [ -e "$f" ] && echo "docker-entrypoint.sh: ignoring $f" ;;
        esac
    done
    unset PGPASSWORD
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "docker-entrypoint.sh: init process complete; ready for start up"
fi
exec "$@"
