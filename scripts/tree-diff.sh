#!/usr/bin/env bash
# The changes of a dkp work tree against its commit, as one patch: what cmake/version.cmake hashes
# into a build's tree_diff_sha256 (manifest.json, result.json; docs/reproduction-notes.md,
# "Provenance"), and what makes its git_sha end in -dirty when not empty.
#   1. `git diff HEAD` of the tracked files, outside results/ (the store, the tables and the
#      results page: written by runs and `make tables`, read by no build);
#   2. then every untracked file that is not ignored in the build's sources (CMakeLists.txt,
#      cmake/, lib/, app/, bench/, tests/, examples/, data-scripts/: the files CMake globs or
#      reads, where an untracked file changes what is built), each as a new file, in path order.
# Empty for a clean tree. Fixed diff options (full index lines, no renames, the Myers algorithm,
# a/ b/ prefixes) so that the user's git configuration does not change the patch.
#   scripts/tree-diff.sh [SRC]            (default: the current directory's work tree)
#   scripts/tree-diff.sh | sha256sum      (a clean build's tree_diff_sha256 of this tree)
#   scripts/tree-diff.sh > t.patch; git checkout COMMIT && git apply t.patch   (the tree again)
# Exit 0 with the patch on stdout; 2 when SRC is not in a git work tree with a commit.
set -euo pipefail
src=${1:-.}
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || {
  echo "tree-diff: $src is not in a git work tree" >&2
  exit 2
}
cd "$top"
git rev-parse --verify -q HEAD >/dev/null || {
  echo "tree-diff: $top has no commit" >&2
  exit 2
}
gitc=(git -c core.quotePath=true -c diff.noprefix=false -c diff.mnemonicPrefix=false
  -c diff.suppressBlankEmpty=false -c diff.relative=false)
opts=(--binary --full-index --no-renames --no-ext-diff --no-textconv --no-color
  --diff-algorithm=myers --indent-heuristic --src-prefix=a/ --dst-prefix=b/)
"${gitc[@]}" diff HEAD "${opts[@]}" -- . ':(top,exclude)results/'
sources=(CMakeLists.txt cmake lib app bench tests examples data-scripts)
"${gitc[@]}" ls-files -z --others --exclude-standard -- "${sources[@]}" | LC_ALL=C sort -z |
  while IFS= read -r -d '' f; do
    # --no-index exits 1 when the files differ, which a new file always does.
    rc=0
    "${gitc[@]}" diff --no-index "${opts[@]}" -- /dev/null "$f" || rc=$?
    [ "$rc" -le 1 ] || exit "$rc"
  done
