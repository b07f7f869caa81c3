#!/usr/bin/env bash
# ANS against Huffman on the real vector fields: stream sizes of both FaCTz modes at
# REL 1e-2, with the default zstd stage and without it.
#   bench/coder_compare.sh [DATA_DIR]      (default ../shared/data)
set -euo pipefail
source "$(dirname "$0")/lib/fields.sh"
data=${1:-$root/../shared/data}
echo "| field | mode | huffman+zstd | ans+zstd | ans/huffman | huffman | ans | ans/huffman |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for f in "$data"/*_u_*.f32; do
  field_of "$f"
  for mode in speculative block; do
    row="| $base | $mode"
    for z in --zstd --no-zstd; do
      "$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$work/h.fz" --mode $mode --coder huffman $z 2>/dev/null
      "$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$work/a.fz" --mode $mode --coder ans $z 2>/dev/null
      h=$(wc -c < "$work/h.fz"); a=$(wc -c < "$work/a.fz")
      row="$row | $h | $a | $(python3 -c "print(f'{$a/$h:.3f}')")"
    done
    echo "$row |"
  done
done
