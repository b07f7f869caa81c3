#!/usr/bin/env bash
# Whole-field decompression, Huffman against ANS, on every real vector field and on the
# 4096 x 4096 synthetic turbulent field: CPU time of one thread (bench/decode_bench.cpp).
#   bench/decode_compare.sh [DATA_DIR]      (default ../shared/data)
set -euo pipefail
source "$(dirname "$0")/lib/fields.sh"
data=${1:-$root/../shared/data}
bench=${FACTZ_BUILD_DIR:-$root/build}/bench/decode_bench
echo "| field | mode | huffman bytes | ans bytes | huffman decode ms | ans decode ms | ans/huffman time |"
echo "|---|---|---:|---:|---:|---:|---:|"
row() {  # name, then decode_bench arguments
  local name=$1; shift
  "$bench" "$@" | awk -v f="$name" '
    /coder=huffman/ { split($0, a, /[ =]/); for (i = 1; i < length(a); i++) h[a[i]] = a[i + 1]; hb = h["bytes"]; ht = h["whole_cpu_ms"] }
    /coder=ans/ { split($0, a, /[ =]/); for (i = 1; i < length(a); i++) g[a[i]] = a[i + 1];
                  printf "| %s | %s | %s | %s | %s | %s | %.2f |\n", f, g["mode"], hb, g["bytes"], ht, g["whole_cpu_ms"], g["whole_cpu_ms"] / ht }'
}
for f in "$data"/*_u_*.f32; do
  field_of "$f"
  row "$base" "$nx" "$ny" "$u" "$v"
done
row "turbulence 4096x4096" 4096 4096
