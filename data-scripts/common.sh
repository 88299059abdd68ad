# Shared helpers of the fetch scripts (sourced).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sums="$here/SHA256SUMS"

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# download URL DEST: curl or wget, fails on HTTP errors, writes atomically.
download() {
  local url=$1 dest=$2 tmp="$2.part.$$"
  mkdir -p "$(dirname "$dest")"
  if command -v curl >/dev/null; then
    curl -fsSL --retry 3 -o "$tmp" "$url" || { rm -f "$tmp"; return 1; }
  elif command -v wget >/dev/null; then
    wget -q -O "$tmp" "$url" || { rm -f "$tmp"; return 1; }
  else
    die "neither curl nor wget is installed"
  fi
  mv "$tmp" "$dest"
}

# verify ROOT PREFIX: checks every listed file under PREFIX against SHA256SUMS.
verify() {
  local root=$1 prefix=$2
  (cd "$root" && grep "  $prefix" "$sums" | sha256sum --check --strict --quiet) \
    || die "checksum verification failed under $root/$prefix"
  echo "$(basename "$0"): $(grep -c "  $prefix" "$sums") files under $root/$prefix verified"
}

# parse_args "$@": sets DEST (default ./data) and FROM (mirror dir or empty).
parse_args() {
  DEST=./data
  FROM=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --from) FROM=${2:?--from needs a directory}; shift 2 ;;
      --dest) DEST=${2:?--dest needs a directory}; shift 2 ;;
      -h|--help) echo "usage: $(basename "$0") [--dest DIR (default ./data)] [--from MIRROR_DIR]"; exit 0 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
}
