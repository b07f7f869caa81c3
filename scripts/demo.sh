#!/usr/bin/env bash
# The main job on a bundled real field (NOAA GFS 10 m wind, 360 x 181): compress with
# FaCTz-S (the default mode) at REL 1e-2, decompress, verify every critical point, print
# the figures; then the same with FaCTz-B, and zstd -19 for comparison.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh" >/dev/null
factz=${FACTZ_BUILD_DIR:-$root/build}/factz
data=$root/tests/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
u=$data/gfs10m_wind_2014_u_360x181.f32
v=$data/gfs10m_wind_2014_v_360x181.f32
echo "== critical points of the original"
"$factz" cp -2 360 181 -i "$u" -i "$v"
echo "== compress (mode speculative, REL 1e-2)"
"$factz" compress -2 360 181 -i "$u" -i "$v" -z "$work/wind.fz" -M REL 1e-2 2>&1
echo "== decompress"
"$factz" decompress -z "$work/wind.fz" -o "$work/u.f32" -o "$work/v.f32" 2>&1
echo "== verify"
"$factz" verify -2 360 181 -i "$u" -i "$v" -d "$work/u.f32" -d "$work/v.f32"
echo "== the same with mode block"
"$factz" compress -2 360 181 -i "$u" -i "$v" -z "$work/wind_b.fz" -M REL 1e-2 --mode block 2>&1
"$factz" decompress -z "$work/wind_b.fz" -o "$work/ub.f32" -o "$work/vb.f32" 2>/dev/null
"$factz" verify -2 360 181 -i "$u" -i "$v" -d "$work/ub.f32" -d "$work/vb.f32"
echo "== zstd -19 (lossless) for comparison"
raw=$(cat "$u" "$v" | wc -c)
z=$(cat "$u" "$v" | zstd -19 -q -c | wc -c)
echo "zstd19_ratio=$(python3 -c "print(round($raw/$z, 2))") factz_ratio=$(python3 -c "print(round($raw/$(wc -c < "$work/wind.fz"), 2))")"
