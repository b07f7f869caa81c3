#!/usr/bin/env bash
# Speculative against block mode: ratios on every real vector field at REL 1e-1, 1e-2,
# 1e-3, each stream verified, and the geometric mean of speculative / block.
#   bench/mode_ratios.sh [DATA_DIR]      (default ../shared/data)
set -euo pipefail
source "$(dirname "$0")/lib/fields.sh"
data=${1:-$root/../shared/data}
echo "| field | REL | block ratio | speculative ratio | speculative / block | violations (block, spec) |"
echo "|---|---:|---:|---:|---:|---|"
for f in "$data"/*_u_*.f32; do
  field_of "$f"
  for rel in 1e-1 1e-2 1e-3; do
    line="| $base | $rel"
    viol=""
    for mode in block speculative; do
      c=$("$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$work/s.fz" -M REL $rel --mode $mode --json)
      "$factz" decompress -z "$work/s.fz" -o "$work/u" -o "$work/v" 2>/dev/null
      r=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$work/u" -d "$work/v" --json)
      ratio=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['ratio'])" "$c")
      viol="$viol$(python3 -c "import json,sys; r=json.loads(sys.argv[1]); c=json.loads(sys.argv[2]); print(r['violations'] if max(r['max_abs_error']) <= c['eb_abs'] else 'BOUND')" "$r" "$c") "
      eval "ratio_$mode=$ratio"
    done
    echo "$line | $(printf %.2f "$ratio_block") | $(printf %.2f "$ratio_speculative") | $(python3 -c "print(f'{$ratio_speculative/$ratio_block:.2f}')") | $viol|"
    echo "$ratio_block $ratio_speculative" >> "$work/ratios"
  done
done
python3 - "$work/ratios" <<'PY'
import math, sys
pairs = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
g = math.exp(sum(math.log(s / b) for b, s in pairs) / len(pairs))
print(f"\ngeometric mean of speculative / block over {len(pairs)} (field, bound) pairs: {g:.2f}")
PY
