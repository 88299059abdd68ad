#!/usr/bin/env bash
# The main job: prints what it will cost (per grid, the pending cells, their estimated CPU hours
# and the wall time at JOBS cells at a time: `dkp grid plan --estimate`), runs every paper grid in
# experiments/ (all but the smoke grid) that has the given profile (a grid without it is skipped
# with a line saying so; `full` is every grid's), then writes the tables (results/tables/*.tex,
# *.csv and *.md). A failed cell or grid does not
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
profile=${2:-sample}
jobs=${3:-$(nproc 2>/dev/null || echo 1)}
results=${4:-results/runs}
tables=${5:-results/tables}
allow_dirty=${6:-}  # --allow-dirty (make ALLOW_DIRTY=1): passed to every grid run
start=$(date +%s)
# Ctrl-C or a TERM stops the whole job, not only the grid it interrupts: dkp grid run leaves its
# cells resumable and exits 130, and so does this script then.
interrupted() {
  echo "reproduce-tables: interrupted; rerun to resume (finished cells are kept)" >&2
  exit 130
}
trap interrupted INT TERM
shopt -s nullglob
grids=()
failed=()
for g in experiments/*.yaml; do
  [ "$(basename "$g")" = smoke.yaml ] && continue
  # A grid without this profile is skipped (its cells come with PROFILE=full); any other error of
  # the grid file counts as a failure.
  if ! err=$("$dkp" grid plan "$g" --profile "$profile" --results "$results" 2>&1 >/dev/null); then
    if [[ $err == *"no profile '$profile'"* ]]; then
      echo "== $g: no profile '$profile', skipped (PROFILE=full runs it)"
    else
      echo "$err" >&2
      failed+=("grid $g")
    fi
    continue
  fi
  grids+=("$g")
done
if [ ${#grids[@]} -eq 0 ]; then
  echo "reproduce-tables: no grid in experiments/ has the profile '$profile'" >&2
  exit 3
fi
# The estimate first (a short calibration on this machine for cells the store has no timing of);
# a failure here does not stop the job.
echo "== estimate (profile $profile, $jobs jobs)"
"$dkp" grid plan "${grids[@]}" --estimate --profile "$profile" --results "$results" \
  --cores "$jobs" ||
  echo "reproduce-tables: no estimate (dkp grid plan --estimate failed); computing anyway" >&2
for g in "${grids[@]}"; do
  echo "== $g (profile $profile, $jobs jobs)"
  "$dkp" grid run "$g" --profile "$profile" -j "$jobs" --results "$results" $allow_dirty
  rc=$?
  [ $rc -eq 130 ] && interrupted
  [ $rc -eq 0 ] || failed+=("grid $g")
done
# When every cell of the profile is a cell of the full grids (a profile that narrows the axes:
# sample, sample-wide, aep): every grid's tables, the scoreboard page (results/README.md beside
# the tables) and the claims page (results/claims.md) from everything the store holds, as
# `make tables`. A profile that changes the
# protocol (quick, scaled): each grid's tables of that profile.
cells_of() { # GRID PROFILE: the config hashes of every cell of the grid's profile
  "$dkp" grid plan "$1" --profile "$2" --results "$empty" 2>/dev/null | grep -o -- '--out [^ ]*' |
    sed 's|.*/||' | sort
}
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
within_full=yes
if [ "$profile" != full ]; then
  for g in "${grids[@]}"; do
    if [ -n "$(comm -23 <(cells_of "$g" "$profile") <(cells_of "$g" full))" ]; then
      within_full=no
      break
    fi
  done
fi
if [ "$within_full" = yes ]; then
  "$dkp" tables experiments --results "$results" --out "$tables" \
    --summary "$(dirname "$tables")/README.md" || failed+=("tables")
else
  for g in "${grids[@]}"; do
    "$dkp" tables "$g" --profile "$profile" --results "$results" --out "$tables" || failed+=("tables $g")
  done
fi
echo "tables: $tables/ (reproduce-tables: $(( $(date +%s) - start )) s in all)"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'reproduce-tables: failures in:\n' >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
