#!/usr/bin/env bash
# Land masked against land as zeros (issue 17). For each field, mode and REL bound: the
# stream size with the land as zeros (data like any other), and with the land missing
# (stored bit for bit, outside the bound and the mesh), and factz verify's violations and
# max error / eb on the masked field. Prints one markdown table row per case.
#   bash bench/mask_ratios.sh [BUILD_DIR]
# Fields (each skipped, with a message on stderr, when its source is missing):
# - cmems_glob1deg_cur, metno_arctic20_cur (../shared/data, else tests/data): their land is
#   stored as exact zero vectors (NaN was set to 0 when they were made); masked = those
#   zero vectors set to NaN.
# - ncl_pop_cur: urot and vrot of the POP ocean model (Debian libncarg-data,
#   /usr/share/ncarg/data/cdf/pop.nc, netCDF classic, nx 320 x ny 384, read with
#   scipy.io.netcdf_file, else from ncdump's text), land at their _FillValue 9.96921e36;
#   masked = the fill value kept and declared (--fill), zeros = the fill value replaced by 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${FACTZ_BUILD_DIR:-$root/build}}
factz=$build/factz
data=$root/../shared/data
pop=${FACTZ_POP_NC:-/usr/share/ncarg/data/cdf/pop.nc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Raw-field sources: land as zero vectors in NAME_{u,v}_NXxNY.f32 -> zeros and NaN-masked copies.
raw_field() {
  local name=$1 nx=$2 ny=$3 u v
  u=$data/${name}_u_${nx}x${ny}.f32 v=$data/${name}_v_${nx}x${ny}.f32
  [[ -f $u ]] || u=$root/tests/data/${name}_u_${nx}x${ny}.f32 v=$root/tests/data/${name}_v_${nx}x${ny}.f32
  [[ -f $u && -f $v ]] || { echo "skip $name: ${name}_{u,v}_${nx}x${ny}.f32 in neither $data nor tests/data" >&2; return 1; }
  /usr/bin/python3 - "$u" "$v" "$tmp" <<'PY'
import sys, numpy as np
u, v = (np.fromfile(p, "<f4") for p in sys.argv[1:3])
land = (u == 0) & (v == 0)
u.tofile(f"{sys.argv[3]}/zu.f32"); v.tofile(f"{sys.argv[3]}/zv.f32")
u, v = u.copy(), v.copy()
u[land] = np.nan
v[land] = np.nan
u.tofile(f"{sys.argv[3]}/mu.f32"); v.tofile(f"{sys.argv[3]}/mv.f32")
PY
}

# POP's urot / vrot: the fill value kept (masked copy, declared with --fill) and set to 0.
# Prints "NX NY FILL".
pop_field() {
  [[ -f $pop ]] || { echo "skip ncl_pop_cur: $pop not found (Debian package libncarg-data)" >&2; return 1; }
  /usr/bin/python3 - "$pop" "$tmp" <<'PY'
import re, subprocess, sys
import numpy as np
path, tmp = sys.argv[1:]
try:
    from scipy.io import netcdf_file
    with netcdf_file(path, "r", mmap=False) as f:
        planes = [np.asarray(f.variables[n].data, dtype="<f4") for n in ("urot", "vrot")]
        fills = [np.float32(f.variables[n]._FillValue) for n in ("urot", "vrot")]
except ImportError:  # no python3-scipy: ncdump's text (-p 9 prints float32 exactly, '_' = _FillValue)
    try:
        head = subprocess.run(["ncdump", "-h", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        sys.exit("skip ncl_pop_cur: neither python3-scipy nor ncdump (netcdf-bin) to read " + path)
    ny, nx = (int(re.search(rf"\b{d} = (\d+)", head).group(1)) for d in ("nlat", "nlon"))
    fills = [np.float32(re.search(rf"{n}:_FillValue = ([^f ;]+)", head).group(1)) for n in ("urot", "vrot")]
    planes = []
    for n, fill in zip(("urot", "vrot"), fills):
        text = subprocess.run(["ncdump", "-v", n, "-p", "9", path], check=True, capture_output=True, text=True).stdout
        body = text[text.index(f"{n} =", text.index("data:")) + len(n) + 2:text.rindex(";")]
        planes.append(np.array([fill if t == "_" else np.float32(t) for t in re.split(r"[\s,]+", body) if t],
                               dtype="<f4").reshape(ny, nx))
if fills[0] != fills[1]:
    sys.exit("skip ncl_pop_cur: urot and vrot have different fill values")
u, v = planes
land = (u == fills[0]) | (v == fills[0])
u.tofile(f"{tmp}/mu.f32"); v.tofile(f"{tmp}/mv.f32")
u, v = u.copy(), v.copy()
u[land] = 0
v[land] = 0
u.tofile(f"{tmp}/zu.f32"); v.tofile(f"{tmp}/zv.f32")
print(u.shape[1], u.shape[0], "%.9g" % fills[0])
PY
}

echo "| field | mode | REL | zeros: bytes | masked: bytes | masked / zeros | masked vertices | violations (masked) | max err / eb |"
echo "|---|---|---|---|---|---|---|---|---|"
for spec in cmems_glob1deg_cur:360:171 metno_arctic20_cur:41:41 ncl_pop_cur; do
  IFS=: read -r name nx ny <<<"$spec"
  fill=()
  if [[ $name == ncl_pop_cur ]]; then
    out=$(pop_field) || continue
    read -r nx ny f <<<"$out"
    fill=(--fill "$f")
  else
    raw_field "$name" "$nx" "$ny" || continue
  fi
  for mode in none block speculative; do
    for rel in 1e-1 1e-2 1e-3 1e-4; do
      z=$("$factz" compress -2 "$nx" "$ny" -i "$tmp/zu.f32" -i "$tmp/zv.f32" -z "$tmp/z.fz" -M REL "$rel" --mode "$mode" --json)
      m=$("$factz" compress -2 "$nx" "$ny" -i "$tmp/mu.f32" -i "$tmp/mv.f32" -z "$tmp/m.fz" -M REL "$rel" --mode "$mode" \
        "${fill[@]}" --json)
      "$factz" decompress -z "$tmp/m.fz" -o "$tmp/du.f32" -o "$tmp/dv.f32" >/dev/null 2>&1
      ver=$("$factz" verify -2 "$nx" "$ny" -i "$tmp/mu.f32" -i "$tmp/mv.f32" -d "$tmp/du.f32" -d "$tmp/dv.f32" \
        "${fill[@]}" --json)
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
