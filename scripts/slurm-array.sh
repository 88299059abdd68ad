#!/usr/bin/env bash
# Runs the pending cells of an experiment grid as a Slurm job array.
#
# On the login node (from the repository root, on a file system the compute nodes share):
#   scripts/slurm-array.sh experiments/agw-tables.yaml 32 [--profile quick] [--data DIR] ...
# plans the grid once (`dkp grid plan`, one self-contained `dkp run ...` line per pending cell),
# writes the commands to results/slurm/<grid>-<time>.cmds and submits this script as an array
# of N tasks (default 16); task i runs lines i, i+N, i+2N, ... one after the other with one BLAS
# thread. Planning once, before any task starts, makes the tasks partition the pending cells
# exactly even while results are arriving. Results land atomically in results/runs (another
# store: --results DIR, passed on to the plan); rerunning the script later plans only what is
# still missing. Extra sbatch options: SBATCH_ARGS="..."; the .cmds file and the tasks' logs go
# to DKP_SLURM_DIR (default results/slurm). scripts/slurm-test.sh (make test-slurm) runs this
# script on the smoke grid on a single-node Slurm cluster that it starts.
#
# Afterwards:  build/dkp grid status GRID [--verbose]    and    build/dkp tables results/runs
#
# Without Slurm, the same plan runs with GNU parallel, locally or on several hosts that share
# the results directory:
#   build/dkp grid plan experiments/agw-tables.yaml | parallel -j 2 --joblog results/parallel.log
#   build/dkp grid plan experiments/agw-tables.yaml --dkp "$PWD/build/dkp" |
#     parallel --sshlogin 2/host1,2/host2 --workdir "$PWD" --joblog results/parallel.log
# or split by hand: `dkp grid plan GRID --shard 0/2 | sh` on one machine and `--shard 1/2` on the
# other (plan both shards before starting either).
#SBATCH --job-name=dkp-grid
#SBATCH --cpus-per-task=1
#SBATCH --time=48:00:00
set -euo pipefail

dkp=${DKP:-build/dkp}
dir=${DKP_SLURM_DIR:-results/slurm}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  # Submission mode.
  grid=${1:?usage: scripts/slurm-array.sh GRID.yaml [N_TASKS] [dkp grid plan options]}
  shift
  ntasks=16
  if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
    ntasks=$1
    shift
  fi
  [ -x "$dkp" ] || { echo "slurm-array: $dkp not found (build first, or set DKP)" >&2; exit 1; }
  mkdir -p "$dir"
  name=$(basename "$grid" .yaml)
  cmds="$dir/${name}-$(date +%Y%m%d-%H%M%S).cmds"
  "$dkp" grid plan "$grid" --dkp "$(realpath "$dkp")" "$@" > "$cmds"
  n=$(wc -l < "$cmds")
  if [ "$n" -eq 0 ]; then
    echo "slurm-array: no pending cells in $grid"
    rm -f "$cmds"
    exit 0
  fi
  [ "$ntasks" -le "$n" ] || ntasks=$n
  echo "slurm-array: $n pending cells of $grid in $ntasks tasks ($cmds)"
  # shellcheck disable=SC2086
  exec sbatch ${SBATCH_ARGS:-} --array="0-$((ntasks - 1))" \
    --output="$dir/${name}-%A_%a.out" "$0" --commands "$cmds" "$ntasks"
fi

# Task mode: run every ntasks-th command of the plan, starting at this task's index.
[ "${1:-}" = "--commands" ] || { echo "slurm-array: task mode needs --commands FILE N" >&2; exit 2; }
cmds=$2
ntasks=$3
export OPENBLAS_NUM_THREADS=1
failed=0
line=0
while IFS= read -r cmd; do
  if [ $((line % ntasks)) -eq "$SLURM_ARRAY_TASK_ID" ]; then
    echo "[task $SLURM_ARRAY_TASK_ID] $(date +%H:%M:%S) $cmd"
    rc=0
    bash -c "$cmd" || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "[task $SLURM_ARRAY_TASK_ID] FAILED (exit $rc): $cmd" >&2
      failed=$((failed + 1))
    fi
  fi
  line=$((line + 1))
done < "$cmds"
echo "[task $SLURM_ARRAY_TASK_ID] done, $failed failed"
[ "$failed" -eq 0 ]
