#!/usr/bin/env bash
# Runs scripts/slurm-sweep.sh on a real one-node Slurm cluster and checks that the merged output
# of a 4-task job array is byte for byte the unsharded sweep's.
#
#   tests/slurm/test_slurm_sweep.sh RINGSIM REPO_ROOT
#
# The cluster lives in a temporary folder: its own munge key and munged (own socket), a
# slurm.conf from tests/slurm/slurm.conf.in with free high ports, slurmctld and slurmd in the
# foreground as children of this script. Nothing under /etc, /run or /var is used or changed,
# so it runs beside a real Slurm or munge. On exit (success, failure or signal) the jobs are
# cancelled, the daemons stopped and waited for, and the folder removed; a detached watchdog
# does the same if this script is killed with SIGKILL.
#
# Exit 0: pass; 1: fail; 77: skipped because Slurm or munge is not installed (Debian packages
# slurmctld, slurmd, slurm-client, munge). With CI=true a missing binary is a failure: CI must
# run this test.
set -euo pipefail

log() { echo "test_slurm_sweep: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

if [[ $# -ne 2 ]]; then
    echo "usage: $0 RINGSIM REPO_ROOT" >&2
    exit 2
fi
ringsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$2" && pwd)
[[ -x "$ringsim" ]] || fail "no ringsim executable at $1"
[[ -x "$repo/scripts/slurm-sweep.sh" ]] || fail "no scripts/slurm-sweep.sh under $2"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The daemons live in sbin, which is not on every user's PATH.
export PATH="$PATH:/usr/sbin:/sbin"
for b in munged munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    if ! command -v "$b" >/dev/null 2>&1; then
        reason="'$b' not found (Debian packages: slurmctld slurmd slurm-client munge)"
        if [[ "${CI:-}" == true ]]; then
            fail "$reason; CI=true, so this test must run"
        fi
        echo "SKIP: $reason"
        exit 77
    fi
done

# Every wait below is bounded; the whole test must end well inside ctest's TIMEOUT.
deadline=$((SECONDS + 110))
wait_for() { # wait_for SECONDS WHAT COMMAND...: poll COMMAND until it succeeds
    local limit=$1 what=$2 end
    shift 2
    end=$((SECONDS + limit))
    until "$@"; do
        if [[ $SECONDS -ge $end || $SECONDS -ge $deadline ]]; then
            log "gave up waiting for $what"
            return 1
        fi
        sleep 0.5
    done
}
alive() { kill -0 "$1" 2>/dev/null; }
queue_empty() { [[ -z "$(squeue -h -o %i 2>/dev/null)" ]]; }
proc_state() { # R, S, Z, ... from /proc/PID/stat (no procps needed)
    local stat
    stat=$({ cat "/proc/$1/stat"; } 2>/dev/null) || return 0
    stat=${stat##*) }
    echo "${stat%% *}"
}

# Unix socket paths (munge's, slurmd's per-step ones) must fit in 108 bytes: a long TMPDIR
# is passed over for /tmp.
tmp_root=${TMPDIR:-/tmp}
[[ ${#tmp_root} -le 40 ]] || tmp_root=/tmp
tmp=$(mktemp -d "$tmp_root/ringsim-slurm.XXXXXX")
chmod 700 "$tmp"
pids_file="$tmp/pids"   # one pid per line: the processes this test started and must stop
: > "$pids_file"
munged_pid="" ctld_pid="" slurmd_pid="" watchdog_pid="" sweep_pid=""

stop_pid() { # stop_pid PID: TERM, up to 10 s, then KILL; reaps it when it is our child
    local pid=$1 i
    [[ -n "$pid" ]] && alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        alive "$pid" || break
        # A zombie child counts as alive until reaped; reap it if it has exited.
        if [[ "$(proc_state "$pid")" == Z ]]; then break; fi
        sleep 0.5
    done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
}

# Processes of this cluster: every daemon and job step started by it names the temporary folder
# in its command line or carries SLURM_CONF=$tmp/slurm.conf in its environment (slurmstepd, the
# batch scripts). The watchdog is excluded: it is stopped last.
our_processes() {
    local p
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ "$p" == "$$" || "$p" == "$watchdog_pid" || "$p" == "$BASHPID" ]] && continue
        if { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | grep -qF -- "$tmp" ||
           { tr '\0' '\n' < "/proc/$p/environ"; } 2>/dev/null | grep -qxF -- "SLURM_CONF=$tmp/slurm.conf"; then
            echo "$p"
        fi
    done
}

cleanup() {
    local rc=$? left
    set +e
    trap - EXIT INT TERM HUP
    deadline=$((SECONDS + 30))   # cleanup's own bound, whatever the test used up
    stop_pid "$sweep_pid"   # timeout passes the TERM on to slurm-sweep.sh
    if [[ -n "$ctld_pid" ]] && alive "$ctld_pid"; then
        scancel --user="$(id -un)" >/dev/null 2>&1
        # Jobs leave the queue once their steps are killed (KillWait in slurm.conf).
        wait_for 15 "an empty queue" queue_empty ||
            log "jobs still queued at cleanup"
    fi
    stop_pid "$slurmd_pid"
    stop_pid "$ctld_pid"
    # slurmstepd detaches from slurmd; with the jobs cancelled it is gone or going.
    for p in $(our_processes); do
        [[ "$p" == "$munged_pid" ]] && continue
        log "stopping leftover process $p: $({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null)"
        stop_pid "$p"
    done
    stop_pid "$munged_pid"
    left=$(our_processes)
    if [[ -n "$left" ]]; then
        echo "FAIL: processes left running: $left" >&2
        for p in $left; do echo "  $p: $({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null)" >&2; done
        rc=1
    fi
    if [[ $rc -ne 0 && -d "$tmp" ]]; then
        for f in "$tmp"/*.log "$tmp"/out/*.slurm/*.out; do
            [[ -f "$f" ]] || continue
            echo "---- $f (last 30 lines)" >&2
            tail -n 30 "$f" >&2
        done
    fi
    [[ -n "$watchdog_pid" ]] && kill "$watchdog_pid" 2>/dev/null
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The watchdog outlives a SIGKILL of this script (double fork: not our child, its own session)
# and then stops what the pid file names and removes the folder. It exits with this script.
# shellcheck disable=SC2016  # the watchdog's script is expanded by its own bash
( setsid bash -c '
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    [[ -d "$2" ]] || exit 0
    SLURM_CONF="$2/slurm.conf" timeout 5 scancel --user="$3"
    sleep 1
    while read -r p; do kill -TERM "$p" 2>/dev/null; done < "$2/pids"
    sleep 3
    while read -r p; do kill -KILL "$p" 2>/dev/null; done < "$2/pids"
    rm -rf "$2"' ringsim-slurm-watchdog "$$" "$tmp" "$(id -un)" </dev/null >/dev/null 2>&1 &
  echo $! > "$tmp/watchdog.pid" )
watchdog_pid=$(cat "$tmp/watchdog.pid")

# ---- munge: own key, own socket ---------------------------------------------------------------
# The key must belong to the user running munged and be readable by it alone.
if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile="$tmp/munge.key" >/dev/null
else
    dd if=/dev/urandom of="$tmp/munge.key" bs=1 count=1024 status=none
fi
chmod 400 "$tmp/munge.key"
# --force: munged refuses a socket under a world-writable /tmp (sticky or not) without it.
munged -F --force --socket="$tmp/munge.socket" --key-file="$tmp/munge.key" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" \
    >"$tmp/munged.out" 2>&1 &
munged_pid=$!
echo "$munged_pid" >> "$pids_file"
wait_for 10 "munged's socket" test -S "$tmp/munge.socket" || fail "munged did not start"
munge -S "$tmp/munge.socket" -n | unmunge -S "$tmp/munge.socket" >/dev/null ||
    fail "munge credentials do not round-trip through $tmp/munge.socket"

# ---- Slurm: one node, free ports ---------------------------------------------------------------
host=$(uname -n)
host=${host%%.*}   # slurmd's own name for this node: the short host name
cpus=$(nproc)
user=$(id -un)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/out"
: > "$tmp/plugstack.conf"   # not /etc/slurm's SPANK plugins
# Only this cluster's settings: a caller's SBATCH_PARTITION, SLURM_JOB_ID (a test run inside a
# job), SQUEUE_FORMAT, ... would change what the clients below ask for.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SBATCH|SLURM|SALLOC|SRUN|SQUEUE|SINFO|SCONTROL|SCANCEL)_' || true)
export SLURM_CONF="$tmp/slurm.conf"

port_in_use() { # listening TCP sockets, IPv4 and IPv6, from /proc (no ss/netstat needed)
    local hex
    hex=$(printf ':%04X' "$1")
    awk -v h="$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        port_in_use "$p" || port_in_use "$((p + 1))" || { echo "$p"; return; }
    done
}

start_slurm() {
    local ctld_port=$1 slurmd_port=$2
    sed -e "s|@TMP@|$tmp|g" -e "s|@HOST@|$host|g" -e "s|@CPUS@|$cpus|g" -e "s|@USER@|$user|g" \
        -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
        "$here/slurm.conf.in" > "$tmp/slurm.conf"
    # -D: foreground, so they are our children (their pids are $!, and wait reaps them); -i:
    # ignore unreadable state (there is none); -N: the node name of slurm.conf.
    slurmctld -D -i -f "$tmp/slurm.conf" >"$tmp/slurmctld.out" 2>&1 &
    ctld_pid=$!
    echo "$ctld_pid" >> "$pids_file"
    slurmd -D -N "$host" -f "$tmp/slurm.conf" >"$tmp/slurmd.out" 2>&1 &
    slurmd_pid=$!
    echo "$slurmd_pid" >> "$pids_file"
    node_idle() { # both daemons up and the node registered
        alive "$ctld_pid" && alive "$slurmd_pid" &&
            [[ "$(sinfo -h -n "$host" -o %T 2>/dev/null)" == idle ]]
    }
    wait_for 30 "idle node" node_idle
}

started=0
for attempt in 1 2 3; do
    # Another process may take a port between the check and the bind: try fresh ports then.
    ctld_port=$(free_port)
    if start_slurm "$ctld_port" "$((ctld_port + 1))"; then started=1; break; fi
    log "attempt $attempt: Slurm did not come up on ports $ctld_port/$((ctld_port + 1)); node: $(sinfo -h -n "$host" -o %T 2>&1 | head -n 1)"
    stop_pid "$slurmd_pid"; slurmd_pid=""
    stop_pid "$ctld_pid"; ctld_pid=""
    tail -n 5 "$tmp/slurmctld.log" "$tmp/slurmd.log" 2>/dev/null || true
    rm -rf "$tmp/state"/* "$tmp/spool"/*
done
[[ $started -eq 1 ]] || fail "the one-node Slurm cluster did not become idle"
log "slurm up: node $host, $cpus CPUs, slurmctld port $ctld_port ($((SECONDS))s)"

# ---- the sweep: unsharded, then as a 4-task array and a merge --------------------------------
sweep=(--hardware a100-80gb --model ringattn-1b --mesh "1x4,1x8" --seq "8192,16384"
       --layout "contiguous,striped")
cd "$tmp/out"
"$ringsim" sweep "${sweep[@]}" -o full.csv
points=$(sed -n '1s/^# ringsim sweep: \([0-9]*\) points.*/\1/p' full.csv)
[[ "${points:-0}" -ge 8 ]] || fail "the reference sweep has ${points:-no} points, expected at least 8"

remaining=$((deadline - SECONDS))
[[ $remaining -gt 10 ]] || fail "no time left for the Slurm sweep"
# In the background and waited for, so that a signal to this script runs its cleanup at once
# (bash runs a trap only after a foreground command ends).
timeout "$remaining" "$repo/scripts/slurm-sweep.sh" --ringsim "$ringsim" --tasks 4 --time 5 --wait \
    -o merged.csv -- "${sweep[@]}" &
sweep_pid=$!
echo "$sweep_pid" >> "$pids_file"
wait "$sweep_pid" || fail "slurm-sweep.sh failed (exit $?)"
sweep_pid=""

ls merged.csv.slurm/shard-{1,2,3,4}-of-4.csv >/dev/null || fail "shard files missing"
cmp full.csv merged.csv || fail "merged.csv differs from the unsharded sweep"
log "PASS: $points points, 4 array tasks merged byte for byte ($((SECONDS))s)"
