#!/usr/bin/env bash
# Land masked against land as zeros (issue 17): the ocean fields of ../shared/data hold their
# land as exact zero vectors (NaN was set to 0 when they were made). For each field, mode and
# REL bound: the stream size with the land as zeros, and with the land masked (set to NaN
# here, so every zero vector becomes a missing vertex), and factz verify's violations on the
# masked field. Prints one markdown table row per case.
#   bash bench/mask_ratios.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${FACTZ_BUILD_DIR:-$root/build}}
factz=$build/factz
data=$root/../shared/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| field | mode | REL | zeros: bytes | masked: bytes | masked / zeros | masked vertices | violations (masked) | max err / eb |"
echo "|---|---|---|---|---|---|---|---|---|"
for spec in cmems_glob1deg_cur:360:171 metno_arctic20_cur:41:41; do
  IFS=: read -r name nx ny <<<"$spec"
  u=$data/${name}_u_${nx}x${ny}.f32 v=$data/${name}_v_${nx}x${ny}.f32
  [[ -f $u ]] || u=$root/tests/data/${name}_u_${nx}x${ny}.f32 v=$root/tests/data/${name}_v_${nx}x${ny}.f32
  [[ -f $u ]] || { echo "skip $name: not found" >&2; continue; }
  /usr/bin/python3 - "$u" "$v" "$tmp/mu.f32" "$tmp/mv.f32" <<'PY'
import sys, numpy as np
u, v = (np.fromfile(p, "<f4") for p in sys.argv[1:3])
land = (u == 0) & (v == 0)
u, v = u.copy(), v.copy()
u[land] = np.nan
v[land] = np.nan
u.tofile(sys.argv[3]); v.tofile(sys.argv[4])
PY
  for mode in none block speculative; do
    for rel in 1e-1 1e-2 1e-3 1e-4; do
      z=$("$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$tmp/z.fz" -M REL "$rel" --mode "$mode" --json)
      m=$("$factz" compress -2 "$nx" "$ny" -i "$tmp/mu.f32" -i "$tmp/mv.f32" -z "$tmp/m.fz" -M REL "$rel" --mode "$mode" --json)
      "$factz" decompress -z "$tmp/m.fz" -o "$tmp/du.f32" -o "$tmp/dv.f32" >/dev/null 2>&1
      ver=$("$factz" verify -2 "$nx" "$ny" -i "$tmp/mu.f32" -i "$tmp/mv.f32" -d "$tmp/du.f32" -d "$tmp/dv.f32" --json)
      /usr/bin/python3 - "$name" "$mode" "$rel" "$z" "$m" "$ver" <<'PY'
import json, sys
name, mode, rel, z, m, ver = sys.argv[1:]
z, m, ver = json.loads(z), json.loads(m), json.loads(ver)
err = max(ver["max_abs_error"]) / m["eb_abs"] if m["eb_abs"] > 0 else 0.0
print(f"| {name} | {mode} | {rel} | {z['compressed_bytes']} | {m['compressed_bytes']} | "
      f"{m['compressed_bytes'] / z['compressed_bytes']:.3f} | {m['masked_vertices']} | {ver['violations']} | {err:.3f} |")
PY
    done
  done
done
