#!/usr/bin/env bash
# Same bytes from two builds (issue 19's encoder changes that must not change a stream): every
# scalar field given is compressed by both binaries in modes contour-tree and none at one REL
# bound and one persistence, and the two streams are compared byte for byte. Prints a line per
# stream that differs and "done: N streams, M differ"; exits 1 if any differs.
#
#   bench/toposz_same_bytes.sh BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ...
#
# File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D), raw little-endian float32.
set -euo pipefail
if [[ $# -lt 5 ]]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ..." >&2
  exit 2
fi
before=$1 after=$2 rel=$3 per=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY=passive
streams=0 differ=0
for file in "$@"; do
  name=$(basename "$file" .f32)
  dims=${name##*_}
  IFS=x read -r nx ny nz <<< "$dims"
  if [[ -n "${nz:-}" ]]; then grid=(-3 "$nx" "$ny" "$nz"); else grid=(-2 "$nx" "$ny"); fi
  for mode in contour-tree none; do
    threshold=()
    [[ $mode == contour-tree ]] && threshold=(--persistence "$per")
    for side in before after; do
      bin=$before
      [[ $side == after ]] && bin=$after
      rm -f "$tmp/$side.fz"
      if ! "$bin" compress "${grid[@]}" --scalar -i "$file" -z "$tmp/$side.fz" -M REL "$rel" --mode "$mode" \
        "${threshold[@]}" --json > /dev/null 2> "$tmp/err"; then
        echo "$bin failed on $name ($mode):" >&2
        cat "$tmp/err" >&2
        exit 1
      fi
    done
    streams=$((streams + 1))
    if ! cmp -s "$tmp/before.fz" "$tmp/after.fz"; then
      echo "differ: $name $mode ($(stat -c %s "$tmp/before.fz") -> $(stat -c %s "$tmp/after.fz") bytes)"
      differ=$((differ + 1))
    fi
  done
done
echo "done: $streams streams, $differ differ"
[[ $differ -eq 0 ]]
