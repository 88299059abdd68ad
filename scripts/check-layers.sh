#!/usr/bin/env bash
# The layering check (CTest `layering`): every #include "<folder>/..." in lib/, bench/ and app/ must go
# down the layers of docs/architecture.md, never up or sideways. The layers, bottom first (a
# folder may include folders of lower rank only; app/ may include any lib/ folder; nothing in lib/
# includes app/):
#   0 util | 1 platform random | 2 linalg data report | 3 autodiff
#   4 kernels likelihoods distributions | 5 layers | 6 models | 7 training eval | 8 experiments
#   9 bench (the benchmarks, outside the library) | 10 app
# Known exceptions, each to be removed by the architecture work (docs/architecture.md, "Debts"),
# are listed in ALLOWED as "file -> folder".
#   scripts/check-layers.sh [ROOT]   (default: the repository root); exit 1 on any violation
#   scripts/check-layers.sh --selftest   checks that the check fails on a copy of lib/, bench/ and app/
#                                        with an upward include added (CTest layering_selftest)
set -euo pipefail
if [ "${1:-}" = --selftest ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  cp -r "$here/lib" "$here/app" "$here/bench" "$copy/"
  "$0" "$copy" >/dev/null || { echo "check-layers selftest: the clean copy fails" >&2; exit 1; }
  echo '#include "experiments/grid.hpp"' >>"$copy/lib/linalg/chol.hpp"
  if "$0" "$copy" 2>"$copy/err"; then
    echo "check-layers selftest: an upward include (linalg -> experiments) passed" >&2
    exit 1
  fi
  grep -q 'lib/linalg/chol.hpp:[0-9]* includes "experiments/grid.hpp"' "$copy/err" ||
    { echo "check-layers selftest: the violation was not named: $(cat "$copy/err")" >&2; exit 1; }
  echo "check-layers selftest: an upward include fails the check: $(cat "$copy/err")"
  exit 0
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
declare -A rank=(
  [util]=0 [platform]=1 [random]=1 [linalg]=2 [data]=2 [report]=2 [autodiff]=3
  [kernels]=4 [likelihoods]=4 [distributions]=4 [layers]=5 [models]=6
  [training]=7 [eval]=7 [experiments]=8 [bench]=9 [app]=10
)
ALLOWED=()
bad=0
checked=0
while IFS= read -r file; do
  rel=${file#"$root"/}
  if [[ $rel == app/* ]]; then
    from=app
  elif [[ $rel == bench/* ]]; then
    from=bench
  else
    from=$(echo "$rel" | cut -d/ -f2)
  fi
  if [ -z "${rank[$from]+x}" ]; then
    echo "check-layers: $rel: folder '$from' has no layer (add it to scripts/check-layers.sh and docs/architecture.md)" >&2
    bad=1
    continue
  fi
  while IFS=: read -r line target; do
    to=${target%%/*}
    [ "$to" = "$from" ] && continue
    checked=$((checked + 1))
    if [ -z "${rank[$to]+x}" ]; then
      echo "check-layers: $rel:$line includes \"$target\": folder '$to' has no layer" >&2
      bad=1
    elif [ "${rank[$to]}" -ge "${rank[$from]}" ]; then
      allowed=0
      for a in "${ALLOWED[@]}"; do [ "${a%%  #*}" = "$rel -> $to" ] && allowed=1; done
      if [ "$allowed" = 0 ]; then
        echo "check-layers: $rel:$line includes \"$target\": $to (layer ${rank[$to]}) is not below $from (layer ${rank[$from]})" >&2
        bad=1
      fi
    fi
  done < <(grep -no '^#include "[a-z_]*/[^"]*"' "$file" | sed 's/#include "//; s/"$//')
done < <(find "$root/lib" "$root/app" "$root/bench" -name '*.cpp' -o -name '*.hpp' | sort)
[ "$bad" = 0 ] && echo "check-layers: $checked includes across folders, all down the layers"
exit "$bad"
