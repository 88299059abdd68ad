#!/usr/bin/env bash
# Runs every experiment grid in experiments/ and writes the tables (results/tables).
set -euo pipefail
dkp=${1:-build/dkp}
profile=${2:-full}
shopt -s nullglob
grids=(experiments/*.yaml)
if [ ${#grids[@]} -eq 0 ]; then
  echo "reproduce-tables: no grids yet (the experiment pipeline lands with issue 7)" >&2
  exit 3
fi
for g in "${grids[@]}"; do
  "$dkp" grid run "$g" --profile "$profile"
done
"$dkp" tables results/runs --out results/tables
