#!/usr/bin/env bash
# The rule for a failed cell kept as a result in the committed store, in one place (sourced by
# scripts/store-add.sh and scripts/check-results.sh): its run directory has no result.json, and an
# error.json that carries the directory's hash and says no signal ended the run (it exited with an
# error, the same on every rerun, rather than being killed).
#   kept_failed_cell DIR     exit 0 when DIR is such a cell
kept_failed_cell() {
  local dir=$1 hash
  hash=$(basename "$dir")
  [ ! -f "$dir/result.json" ] && [ -f "$dir/error.json" ] &&
    grep -q "\"config_hash\": \"$hash\"" "$dir/error.json" &&
    grep -q '"signal": null' "$dir/error.json"
}
