#!/usr/bin/env bash
# scripts/slurm.sh: a throwaway single-node SLURM cluster for xdoe's tests and
# benchmarks (Debian/Ubuntu, run as root, no systemd, loopback only).
#
#   scripts/slurm.sh start    install munge + slurm when missing (apt-get), write
#                             $XDOE_SLURM_DIR/slurm.conf, start munged, slurmctld
#                             and slurmd, wait until the node is idle; prints
#                             `export SLURM_CONF=...`. Idempotent: a running
#                             cluster is left as it is.
#   scripts/slurm.sh stop     cancel the cluster's jobs, stop the daemons whose
#                             PIDs `start` recorded (never by name)
#   scripts/slurm.sh env      print `export SLURM_CONF=...` (use: eval "$(scripts/slurm.sh env)")
#   scripts/slurm.sh status   exit 0 when the cluster is up, 1 otherwise
#
# Clients (sbatch, squeue, sinfo, scontrol) need SLURM_CONF exported; the
# config is not written to /etc/slurm. No accounting (sacct does not work).
#
# Settings (environment, all optional):
#   XDOE_SLURM_DIR        config, state, logs, sockets, pid files  [/tmp/xdoe-slurm]
#   XDOE_SLURM_PARTITION  name of the (default) partition          [debug]
#   XDOE_SLURM_CPUS       CPUs the node advertises (may exceed nproc) [nproc]
#   XDOE_SLURM_CTLD_PORT / XDOE_SLURM_SLURMD_PORT                  [6817 / 6818]
#   XDOE_SLURM_SKIP_INSTALL=1  never call apt-get
#   XDOE_SLURM_TIMEOUT    seconds to wait for each daemon           [60]
#
# Based on a recipe checked on Debian 12 with slurm-wlm 22.05: munged wants its
# socket directory 0755 and owned by munge; without RealMemory jobs asking for
# --mem never start; sched_interval/batch_sched_delay make array tasks start at
# once instead of every few seconds.
set -euo pipefail

DIR=${XDOE_SLURM_DIR:-/tmp/xdoe-slurm}
PARTITION=${XDOE_SLURM_PARTITION:-debug}
CTLD_PORT=${XDOE_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${XDOE_SLURM_SLURMD_PORT:-6818}
TIMEOUT=${XDOE_SLURM_TIMEOUT:-60}
NODE=localhost
export SLURM_CONF="$DIR/slurm.conf"
PIDS="$DIR/pids"
LOG="$DIR/log"
MUNGE_DIR="$DIR/munge"
MUNGE_SOCKET="$MUNGE_DIR/munge.socket"
SETTINGS="partition=$PARTITION cpus=${XDOE_SLURM_CPUS:-auto} ports=$CTLD_PORT,$SLURMD_PORT"

say() { echo "[xdoe-slurm] $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# --- helpers -------------------------------------------------------------------
# alive NAME: the PID recorded for NAME runs and is that program (not a zombie)
alive() {
  local f="$PIDS/$1.pid" pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}
# record NAME PIDFILE: copy the PID the daemon wrote into $PIDS/NAME.pid
record() {
  local name=$1 pidfile=$2
  for _ in $(seq 1 $((TIMEOUT * 10))); do
    if [ -s "$pidfile" ]; then
      cp "$pidfile" "$PIDS/$name.pid"
      alive "$name" && return 0
    fi
    sleep 0.1
  done
  die "$name did not start (no live pid in $pidfile); see $LOG/"
}
wait_until() {  # wait_until DESCRIPTION COMMAND...
  local what=$1; shift
  for _ in $(seq 1 $((TIMEOUT * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "timed out after ${TIMEOUT}s waiting for $what; see $LOG/"
}
node_state() { timeout 10 sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1; }
node_usable() {
  case "$(node_state)" in idle|mixed|allocated|completing) return 0 ;; *) return 1 ;; esac
}
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
is_up() {
  alive munged && alive slurmctld && alive slurmd && node_usable && \
    [ "$(cat "$DIR/settings" 2>/dev/null)" = "$SETTINGS" ]
}
print_env() { echo "export SLURM_CONF=$SLURM_CONF"; }
lock() {  # serialise concurrent start/stop (e.g. parallel test sessions)
  mkdir -p "$(dirname "$DIR")"
  exec 9>"$DIR.lock"
  flock -w $((TIMEOUT * 10)) 9 || die "could not lock $DIR.lock"
}

# stop_one NAME SECONDS: SIGTERM the recorded PID, SIGKILL if it lingers
stop_one() {
  local name=$1 wait_s=$2 pid
  if ! alive "$name"; then rm -f "$PIDS/$name.pid"; return 0; fi
  pid=$(cat "$PIDS/$name.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((wait_s * 10))); do
    alive "$name" || { say "stopped $name ($pid)"; rm -f "$PIDS/$name.pid"; return 0; }
    sleep 0.1
  done
  say "$name ($pid) ignored SIGTERM for ${wait_s}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.5
  rm -f "$PIDS/$name.pid"
}

do_stop() {
  if [ ! -d "$PIDS" ]; then say "nothing recorded under $PIDS"; return 0; fi
  # cancel the jobs first, while the daemons still run, so no job process stays behind
  if alive slurmctld && [ -r "$SLURM_CONF" ]; then
    local jobs
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ' || true)
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      for _ in $(seq 1 100); do
        [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null || true)" ] && break
        sleep 0.2
      done
    fi
  fi
  stop_one slurmd 20
  stop_one slurmctld 20
  stop_one munged 10
  rmdir "$PIDS" 2>/dev/null || true
  rm -f "$DIR/settings"
}

do_start() {
  [ "$(id -u)" = 0 ] || die "must run as root (it installs packages and runs munged as munge)"
  if [ -d "$PIDS" ] && is_up; then
    say "already running (node $NODE is $(node_state))"
    print_env
    return 0
  fi
  # on failure: show the logs and stop what this start began
  trap 'rc=$?; if [ $rc -ne 0 ]; then say "start failed (exit $rc)";
        tail -n 15 "$LOG"/*.log "$LOG"/*.stdout "$MUNGE_DIR/munged.log" 2>/dev/null >&2 || true;
        do_stop >&2 || true; fi' EXIT

  # 1. packages
  local t0 t1 t2 need=()
  t0=$(date +%s)
  command -v munged    >/dev/null || need+=(munge)
  command -v slurmctld >/dev/null || need+=(slurmctld)
  command -v slurmd    >/dev/null || need+=(slurmd)
  command -v sbatch    >/dev/null || need+=(slurm-client)
  command -v ss        >/dev/null || need+=(iproute2)
  if [ ${#need[@]} -gt 0 ]; then
    [ "${XDOE_SLURM_SKIP_INSTALL:-0}" = 1 ] && die "missing packages: ${need[*]}"
    say "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  t1=$(date +%s)

  # 2. leftovers of an earlier start (only what we recorded)
  [ -d "$PIDS" ] && do_stop >/dev/null 2>&1
  rm -f "$DIR/settings"
  local p
  for p in "$CTLD_PORT" "$SLURMD_PORT"; do
    port_free "$p" || die "port $p is in use (another slurmctld/slurmd? set XDOE_SLURM_CTLD_PORT/XDOE_SLURM_SLURMD_PORT)"
  done
  mkdir -p "$DIR" "$PIDS" "$LOG" "$DIR/state" "$DIR/spool" "$DIR/run" "$MUNGE_DIR"
  chmod 0755 "$DIR"

  # 3. munge (the key is the machine's; created when missing)
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile=/etc/munge/munge.key --force
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  chown munge:munge "$MUNGE_DIR"
  chmod 0755 "$MUNGE_DIR"
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock" "$MUNGE_DIR/munged.pid"
  runuser -u munge -- /usr/sbin/munged \
    --socket="$MUNGE_SOCKET" --pid-file="$MUNGE_DIR/munged.pid" \
    --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" \
    --key-file=/etc/munge/munge.key </dev/null >"$LOG/munged.stdout" 2>&1 9>&- \
    || die "munged failed to start; see $MUNGE_DIR/munged.log"
  record munged "$MUNGE_DIR/munged.pid"
  wait_until "munge" bash -c "munge --socket='$MUNGE_SOCKET' -n | unmunge --socket='$MUNGE_SOCKET'"

  # 4. slurm.conf from the hardware slurmd sees
  local hw cpus real_cpus mem node_hw overrides=""
  hw=$(slurmd -C 2>/dev/null | head -n1)
  get() { echo "$hw" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
  real_cpus=$(get CPUs); real_cpus=${real_cpus:-$(nproc)}
  mem=$(get RealMemory); mem=${mem:-1024}
  cpus=${XDOE_SLURM_CPUS:-$real_cpus}
  if [ "$cpus" = "$real_cpus" ]; then
    node_hw="Boards=$(get Boards) SocketsPerBoard=$(get SocketsPerBoard) CoresPerSocket=$(get CoresPerSocket) ThreadsPerCore=$(get ThreadsPerCore)"
  else
    node_hw="Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1"
    overrides="SlurmdParameters=config_overrides"
  fi
  cat > "$SLURM_CONF" <<EOF
# Written by xdoe's scripts/slurm.sh: a single-node test cluster on 127.0.0.1.
ClusterName=xdoe
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
# listen on 127.0.0.1 only
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups (containers, no systemd)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=5
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=5
Waittime=0
MinJobAge=300
$overrides
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$cpus $node_hw RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  chmod 0644 "$SLURM_CONF"

  # 5. slurmctld + slurmd in foreground mode, detached
  rm -f "$DIR/run/slurmctld.pid" "$DIR/run/slurmd.pid"
  setsid nohup /usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$LOG/slurmctld.stdout" 2>&1 </dev/null 9>&- &
  record slurmctld "$DIR/run/slurmctld.pid"
  wait_until "slurmctld" scontrol ping
  setsid nohup /usr/sbin/slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$LOG/slurmd.stdout" 2>&1 </dev/null 9>&- &
  record slurmd "$DIR/run/slurmd.pid"
  local st
  for _ in $(seq 1 $((TIMEOUT * 5))); do
    st=$(node_state)
    case "$st" in
      idle|mixed|allocated) break ;;
      down*|drain*|fail*) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.2
  done
  node_usable || die "node $NODE not usable (state '$(node_state)'); see $LOG/"
  t2=$(date +%s)
  echo "$SETTINGS" > "$DIR/settings"
  say "up: munged $(cat "$PIDS/munged.pid"), slurmctld $(cat "$PIDS/slurmctld.pid"), slurmd $(cat "$PIDS/slurmd.pid");" \
      "node $NODE is $(node_state); install $((t1 - t0)) s, start $((t2 - t1)) s"
  trap - EXIT
  print_env
}

case "${1:-}" in
  start)  lock; do_start ;;
  stop)   lock; do_stop ;;
  env)    print_env ;;
  status) if is_up; then say "up (node $NODE is $(node_state))"; else say "not running"; exit 1; fi ;;
  *)      echo "usage: $0 start|stop|env|status" >&2; exit 2 ;;
esac
