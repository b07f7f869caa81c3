#!/usr/bin/env bash
# Ratio table on the real vector fields of ../shared/data: FaCTz modes against zstd -19
# (lossless, both components concatenated), with the verification of every stream.
#   bench/real_fields.sh [REL] [DATA_DIR]        (defaults: 1e-2, ../shared/data)
set -euo pipefail
source "$(dirname "$0")/lib/fields.sh"
rel=${1:-1e-2}
data=${2:-$root/../shared/data}
echo "| field | dims | critical points | zstd -19 | block ratio | block violations | block max err / eb | block exact vertices | none ratio | none violations |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in "$data"/*_u_*.f32; do
  field_of "$f"
  raw=$((nx * ny * 8))
  z=$(cat "$u" "$v" | zstd -19 -q -c | wc -c)
  row="| $base | $dims"
  first=1
  for mode in block none; do
    c=$("$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$work/s.fz" -M REL "$rel" --mode $mode --json)
    "$factz" decompress -z "$work/s.fz" -o "$work/u" -o "$work/v" 2>/dev/null
    r=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$work/u" -d "$work/v" --json)
    row="$row$(python3 - "$c" "$r" "$raw" "$z" "$mode" "$first" <<'PY'
import json, sys
c, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
raw, z, mode, first = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
err = max(r["max_abs_error"]) / c["eb_abs"] if c["eb_abs"] > 0 else 0.0
out = f' | {r["cp_original"]} | {raw / z:.2f}' if first else ''
if mode == "block":
    out += f' | {c["ratio"]:.2f} | {r["violations"]} | {err:.3f} | {c["exact_vertices"]}'
else:
    out += f' | {c["ratio"]:.2f} | {r["violations"]}'
print(out, end='')
PY
)"
    first=0
  done
  echo "$row |"
done
