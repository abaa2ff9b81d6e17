#!/usr/bin/env bash
# Run a command with a throwaway PostgreSQL server on 127.0.0.1 and
# TOKENRISK_TEST_POSTGRES_URL pointing at it, so the store tests run against a real server.
# Uses an existing URL when one is set; installs Debian's postgresql when missing (needs root).
set -euo pipefail
if [[ -n "${TOKENRISK_TEST_POSTGRES_URL:-}" ]]; then exec "$@"; fi

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [[ -z "$(pg_bin)" ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "with-postgres: installing Debian's postgresql (one time)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
  fi
fi
BIN="$(pg_bin)"
if [[ -z "$BIN" ]]; then
  echo "with-postgres: PostgreSQL is not installed and cannot be installed here;" \
       "the PostgreSQL store tests will report as skipped" >&2
  exec "$@"
fi

RUNAS=()
if [[ "$(id -u)" == 0 ]]; then RUNAS=(runuser -u postgres --); fi
DIR="$(mktemp -d /tmp/tokenrisk-pg.XXXXXX)"
[[ "$(id -u)" == 0 ]] && chown postgres "$DIR"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"${RUNAS[@]}" "$BIN/initdb" -D "$DIR/data" -U tokenrisk --auth=trust >/dev/null
"${RUNAS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c fsync=off" start >/dev/null
cleanup() { "${RUNAS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
export TOKENRISK_TEST_POSTGRES_URL="postgresql+psycopg://tokenrisk@127.0.0.1:$PORT/postgres"
"$@"
