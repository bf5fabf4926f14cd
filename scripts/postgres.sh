#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests and benchmarks, on loopback only.
#
#   scripts/postgres.sh start   # idempotent; installs Debian's postgresql package when the
#                               # server binaries are missing and we are root
#   scripts/postgres.sh stop
#   scripts/postgres.sh status  # exit 0 when running
#   scripts/postgres.sh url     # postgresql+psycopg://postgres@127.0.0.1:54329/postgres
#
# Environment: XDOE_PG_DIR (cluster folder, default /tmp/xdoe-pg), XDOE_PG_PORT (default 54329),
# XDOE_PG_BIN (server binaries, default /usr/lib/postgresql/15/bin or the newest installed).
# The server refuses to run as root, so as root it runs as the `postgres` user.
# Authentication is `trust`: for throwaway test clusters only.
set -euo pipefail

PG_DIR=${XDOE_PG_DIR:-/tmp/xdoe-pg}
PG_PORT=${XDOE_PG_PORT:-54329}
DATA=$PG_DIR/data
LOG=$PG_DIR/server.log

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
  if [ -n "${XDOE_PG_BIN:-}" ]; then echo "$XDOE_PG_BIN"; return; fi
  if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then echo /usr/lib/postgresql/15/bin; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  echo "${newest:-/usr/lib/postgresql/15/bin}"
}

as_owner() {
  # Run a server command as the cluster's owner: `postgres` when we are root.
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install_server() {
  if [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL server binaries not found in $(find_bin) and not root: install the 'postgresql' package"
    exit 1
  fi
  command -v apt-get >/dev/null || { log "no server binaries and no apt-get to install them"; exit 1; }
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
}

running() {
  local bin
  bin=$(find_bin)
  [ -f "$DATA/PG_VERSION" ] && [ -x "$bin/pg_ctl" ] && as_owner "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

url() { echo "postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/postgres"; }

start() {
  local bin
  bin=$(find_bin)
  [ -x "$bin/pg_ctl" ] || install_server
  bin=$(find_bin)
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  mkdir -p "$PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$PG_DIR"
  # Serialise concurrent starts (several test sessions may start at once).
  exec 9>"$PG_DIR/.lock"
  flock 9
  if running; then
    log "already running: $(url)"
    return 0
  fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$DATA" -A trust -U postgres -E UTF8 >"$PG_DIR/initdb.log" 2>&1 9>&- \
      || { cat "$PG_DIR/initdb.log" >&2; exit 1; }
  fi
  as_owner "$bin/pg_ctl" -D "$DATA" -l "$LOG" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR" -w -t 60 start >/dev/null 9>&- \
    || { log "server did not start; log:"; tail -n 20 "$LOG" >&2; exit 1; }
  log "started: $(url)"
}

stop() {
  local bin
  bin=$(find_bin)
  if running; then
    as_owner "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
    log "stopped"
  else
    log "not running"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) running ;;
  url) url ;;
  *) echo "usage: $0 start|stop|status|url" >&2; exit 2 ;;
esac
