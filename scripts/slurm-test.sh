#!/usr/bin/env bash
# The Slurm test (`make test-slurm`, which installs Debian's slurm-wlm and munge first): starts a
# single-node Slurm cluster on this machine (munged, slurmctld and slurmd, with a generated munge
# key and a slurm.conf for this host on loopback, every file, socket, state and log in one
# temporary directory), submits scripts/slurm-array.sh on the smoke grid into a fresh store, waits
# for the job array, and checks that every cell is done and that the tables equal, byte for byte,
# those of `dkp grid run` on the same grid. The daemons are stopped and the directory removed at
# the end, whatever happens (SLURM_TEST_KEEP=1 keeps the directory for a look after a failure).
#
#   scripts/slurm-test.sh [DKP]      DKP: the dkp binary (default build/dkp)
#
# The daemons run as the user running the script, root or not (SlurmUser = SlurmdUser = that user,
# who submits the jobs), and need no systemd and no cgroups: processes tracked through the process
# tree (proctrack/linuxproc), no task binding, no accounting (no slurmdbd: the tasks' states come
# from squeue, their cells' exits from their logs). SLURM_TEST_TASKS (default 4): array tasks;
# SLURM_TEST_TIMEOUT (default 600): seconds to wait for the array.
set -euo pipefail
cd "$(dirname "$0")/.."
failure=""
work=""
fail() { # once the cluster's directory exists, the message comes after the daemons' logs
  failure="slurm-test: FAILED: $*"
  [ -n "$work" ] || echo "$failure" >&2
  exit 1
}
start=$(date +%s)
dkp=${1:-build/dkp}
[ -x "$dkp" ] || fail "$dkp not found or not executable (build first, or pass the dkp binary)"
dkp=$(realpath "$dkp")
ntasks=${SLURM_TEST_TASKS:-4}
timeout=${SLURM_TEST_TIMEOUT:-600}
keep=${SLURM_TEST_KEEP:-0}
grid=experiments/smoke.yaml

for c in munged mungekey munge unmunge slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$c" >/dev/null ||
    fail "$c not found: install Debian's slurm-wlm and munge (make test-slurm does)"
done
# Nothing of an enclosing Slurm job or of the caller's sbatch defaults reaches this cluster.
for v in $(compgen -e); do
  case $v in SLURM_TEST_*) ;; SLURM_* | SBATCH_* | SQUEUE_* | SINFO_* | SCONTROL_*) unset "$v" ;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dkp-slurm-test.XXXXXX")
chmod 755 "$work" # munged wants its socket's directories searchable by all
pids=()     # the daemons this script started, stopped in reverse order at the end
jobid=""
cleanup() {
  local rc=$? pid i
  set +e
  if [ -n "$jobid" ] && [ -n "$(squeue -h -j "$jobid" 2>/dev/null)" ]; then
    scancel "$jobid" 2>/dev/null
    for _ in $(seq 30); do
      [ -z "$(squeue -h -j "$jobid" -t pending,running,completing 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ "$rc" != 0 ]; then
    for f in "$work"/log/*.stderr; do
      [ -s "$f" ] && { echo "--- last lines of $f:" >&2; tail -15 "$f" >&2; }
    done
    [ -z "$failure" ] || echo "$failure" >&2
  fi
  if [ "$keep" = 1 ]; then
    echo "slurm-test: kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for SECS WHAT CMD: polls CMD (a string for eval) every half second until it succeeds, for
# at most SECS seconds, and fails at once when the last daemon started has exited.
wait_for() {
  local secs=$1 what=$2 cmd=$3 i
  for ((i = 0; i < secs * 2; i++)); do
    eval "$cmd" >/dev/null 2>&1 && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || fail "$what: the daemon (pid ${pids[-1]}) has exited"
    sleep 0.5
  done
  fail "$what not within $secs s"
}
# A TCP port on 127.0.0.1 that nothing listens on now.
used_ports=" "
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    case $used_ports in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      used_ports="$used_ports$p "
      echo "$p"
      return 0
    fi
  done
  fail "no free TCP port found"
}

# The reference: the same grid run by `dkp grid run` into its own store, and its tables.
cells=$("$dkp" grid plan "$grid" --results "$work/empty" 2>/dev/null | wc -l)
[ "$cells" -gt 0 ] || fail "dkp grid plan $grid --results EMPTY printed no command"
"$dkp" grid run "$grid" --results "$work/ref" -j 2 --quiet >"$work/ref.log" 2>&1 ||
  { tail -5 "$work/ref.log" >&2; fail "dkp grid run $grid"; }
"$dkp" tables "$grid" --results "$work/ref" --out "$work/ref-tables" >"$work/ref-tables.log" 2>&1 ||
  { cat "$work/ref-tables.log" >&2; fail "dkp tables on the dkp grid run store"; }

# munge: a fresh key, a daemon on a socket of our own.
mkdir -p "$work/munge" "$work/log" "$work/state" "$work/spool" "$work/slurm"
chmod 755 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key" >/dev/null 2>"$work/log/mungekey.log" ||
  fail "mungekey --create: $(cat "$work/log/mungekey.log")"
sock="$work/munge/munge.socket"
munged --foreground --socket="$sock" --key-file="$work/munge/munge.key" \
  --log-file="$work/log/munged.log" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/munged.seed" </dev/null >"$work/log/munged.stderr" 2>&1 &
pids+=($!)
wait_for 20 "munged answering on $sock" "munge -n -S '$sock' | unmunge -S '$sock'"

# Slurm: one node, this host on loopback, every path in $work.
host=$(hostname -s)
user=$(id -un) # the daemons' user, who can run jobs only as itself: this script's user
ncpus=$(nproc)
ctld_port=$(free_port)
slurmd_port=$(free_port)
conf="$work/slurm.conf"
: >"$work/plugstack.conf"
cat >"$conf" <<EOF
ClusterName=dkptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$work/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"
slurmctld -D -f "$conf" </dev/null >"$work/log/slurmctld.stderr" 2>&1 &
pids+=($!)
wait_for 30 "slurmctld answering (scontrol ping)" "scontrol ping | grep -q UP"
slurmd -D -f "$conf" -N "$host" </dev/null >"$work/log/slurmd.stderr" 2>&1 &
pids+=($!)
wait_for 30 "node $host idle" "[ \"\$(sinfo -h -n '$host' -o %t)\" = idle ]"

# Submit the array as a user would (its .cmds file and logs into $work/slurm), and wait for it.
DKP="$dkp" DKP_SLURM_DIR="$work/slurm" SBATCH_ARGS="" scripts/slurm-array.sh "$grid" "$ntasks" \
  --results "$work/store" >"$work/submit.log" 2>&1 ||
  { cat "$work/submit.log" >&2; fail "scripts/slurm-array.sh $grid $ntasks"; }
grep -q "^slurm-array: $cells pending cells of $grid in $ntasks tasks " "$work/submit.log" ||
  fail "slurm-array.sh did not plan $cells cells in $ntasks tasks: $(cat "$work/submit.log")"
jobid=$(sed -nE 's/^Submitted batch job ([0-9]+)$/\1/p' "$work/submit.log")
[ -n "$jobid" ] || fail "no job id in the sbatch output: $(cat "$work/submit.log")"
waited=0
while :; do
  states=$(squeue -h -j "$jobid" -t all -o '%i %T' 2>&1) || fail "squeue -j $jobid: $states"
  # Done when the array is expanded into its ntasks tasks and none is pending or running.
  if [ "$(wc -l <<<"$states")" = "$ntasks" ] &&
    ! grep -Eq ' (PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|RESIZING)' <<<"$states"; then
    break
  fi
  [ "$waited" -lt "$timeout" ] || fail "array job $jobid not finished within $timeout s: $states"
  sleep 2
  waited=$((waited + 2))
done
bad=$(grep -v ' COMPLETED$' <<<"$states" || true)
[ -z "$bad" ] || fail "array tasks did not complete: $bad"
# Task t ran the plan's lines t, t+N, t+2N, ...: ceil((cells - t) / N) cells, none failed.
for ((t = 0; t < ntasks; t++)); do
  out="$work/slurm/smoke-${jobid}_$t.out"
  [ -s "$out" ] || fail "no log $out of task $t"
  grep -q "^\[task $t\] done, 0 failed$" "$out" || fail "task $t: $(tail -3 "$out")"
  n=$(grep -Ec "^\[task $t\] [0-9:]{8} " "$out" || true)
  [ "$n" = $(((cells - t + ntasks - 1) / ntasks)) ] || fail "task $t ran $n cells of the $cells"
done

# Every cell done, and the tables those of `dkp grid run`, byte for byte.
"$dkp" grid status "$grid" --results "$work/store" >"$work/status" 2>&1 ||
  fail "dkp grid status: $(cat "$work/status")"
grep -q "cells: done $cells, running 0, interrupted 0, missing 0, failed 0" "$work/status" ||
  fail "after the Slurm array: $(cat "$work/status")"
"$dkp" tables "$grid" --results "$work/store" --out "$work/tables" >"$work/tables.log" 2>&1 ||
  { cat "$work/tables.log" >&2; fail "dkp tables on the Slurm store"; }
ntables=0
for f in "$work"/ref-tables/*; do
  cmp -s "$f" "$work/tables/$(basename "$f")" ||
    fail "Slurm array and dkp grid run give different $(basename "$f")"
  ntables=$((ntables + 1))
done
[ "$ntables" -gt 0 ] || fail "dkp tables wrote no table"
[ "$(find "$work/tables" -type f | wc -l)" = "$ntables" ] ||
  fail "the Slurm store's tables are not the same files as dkp grid run's"
# Submitting again plans nothing: every cell is in the store.
DKP="$dkp" DKP_SLURM_DIR="$work/slurm" SBATCH_ARGS="" scripts/slurm-array.sh "$grid" "$ntasks" \
  --results "$work/store" >"$work/submit2.log" 2>&1 ||
  { cat "$work/submit2.log" >&2; fail "second scripts/slurm-array.sh"; }
grep -q "^slurm-array: no pending cells in $grid$" "$work/submit2.log" ||
  fail "a second submission did not find the grid complete: $(cat "$work/submit2.log")"

echo "slurm-test: array job $jobid, $ntasks tasks on $host ($ncpus CPUs): every task completed"
echo "slurm-test: grid status: $(grep 'cells: done' "$work/status")"
echo "slurm-test: $ntables table files equal to dkp grid run's, byte for byte"
echo "slurm-test: OK, $cells grid cells ($(($(date +%s) - start)) s)"
