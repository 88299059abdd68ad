#!/usr/bin/env bash
# The C++ snippet of README.md ("Using the library from C++") is the region of
# examples/train_predict.cpp between its "README begin" and "README end" lines, dedented: that file
# is built (dkp_example) and run by the smoke test, so the README's code compiles and works.
#   scripts/check-readme-snippet.sh      (from the repository root; exit 1 when they differ)
set -euo pipefail
cd "$(dirname "$0")/.."
region=$(awk '/README begin/{on=1; next} /README end/{on=0} on' examples/train_predict.cpp | sed 's/^    //')
snippet=$(awk '/^## Using the library from C\+\+/{s=1} s && /^```cpp$/{on=1; next} on && /^```$/{exit} on' README.md)
if [ -z "$region" ] || [ "$region" != "$snippet" ]; then
  echo "check-readme-snippet: README.md's C++ snippet is not examples/train_predict.cpp's README region:" >&2
  diff <(echo "$region") <(echo "$snippet") >&2 || true
  exit 1
fi
echo "check-readme-snippet: README.md's snippet is examples/train_predict.cpp's (built as dkp_example)"
