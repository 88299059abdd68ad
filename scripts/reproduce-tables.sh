#!/usr/bin/env bash
# The main job: prints what it will cost (per grid, the pending cells, their estimated CPU hours
# and the wall time at JOBS cells at a time: `dkp grid plan --estimate`), runs every paper grid in
# experiments/ (all but the smoke grid) with the given profile, then writes the tables
# (results/tables/*.tex and *.csv). A failed cell or grid does not
# stop the others: the tables are written anyway, with missing cells flagged, and the script exits
# non-zero at the end naming what failed. `dkp grid run` skips, and does not fail, the cells on
# optional data that is not installed (Rectangle-Images, the DSVI report's Table 2): their table
# is written with those cells missing beside the report's values. Rerunning reuses every
# finished cell.
#   scripts/reproduce-tables.sh [DKP] [PROFILE] [JOBS] [RESULTS] [TABLES]
# RESULTS (default results/runs) holds the run directories, TABLES (default results/tables) the
# tables.
set -uo pipefail
dkp=${1:-build/dkp}
profile=${2:-full}
jobs=${3:-$(nproc 2>/dev/null || echo 1)}
results=${4:-results/runs}
tables=${5:-results/tables}
start=$(date +%s)
shopt -s nullglob
grids=()
for g in experiments/*.yaml; do
  [ "$(basename "$g")" = smoke.yaml ] || grids+=("$g")
done
if [ ${#grids[@]} -eq 0 ]; then
  echo "reproduce-tables: no grids in experiments/" >&2
  exit 3
fi
failed=()
# The estimate first (a short calibration on this machine for cells the store has no timing of);
# a failure here does not stop the job.
echo "== estimate (profile $profile, $jobs jobs)"
"$dkp" grid plan "${grids[@]}" --estimate --profile "$profile" --results "$results" \
  --cores "$jobs" ||
  echo "reproduce-tables: no estimate (dkp grid plan --estimate failed); computing anyway" >&2
for g in "${grids[@]}"; do
  echo "== $g (profile $profile, $jobs jobs)"
  "$dkp" grid run "$g" --profile "$profile" -j "$jobs" --results "$results" || failed+=("grid $g")
done
# The full profile: every grid's tables and the scoreboard page (results/README.md beside the
# tables) from everything the store holds. Other profiles: each grid's tables of that profile.
if [ "$profile" = full ]; then
  "$dkp" tables experiments --results "$results" --out "$tables" \
    --summary "$(dirname "$tables")/README.md" || failed+=("tables")
else
  for g in "${grids[@]}"; do
    "$dkp" tables "$g" --profile "$profile" --results "$results" --out "$tables" || failed+=("tables $g")
  done
fi
# The compositional-uncertainty paper's Table 1 (dkp toy: its 1-D toy, not a UCI grid; recomputed
# on every call, about an hour on one core for the full protocol).
case $profile in
  quick) toy_args=(--trials 2 --steps 2000 --elbo-samples 100 --var-samples 1000) ;;
  sample) toy_args=(--trials 3) ;;
  *) toy_args=() ;;
esac
echo "== dkp toy (profile $profile)"
"$dkp" toy "${toy_args[@]}" --jobs "$jobs" --out "$tables" || failed+=("toy")
echo "tables: $tables/ (reproduce-tables: $(( $(date +%s) - start )) s in all)"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'reproduce-tables: failures in:\n' >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
