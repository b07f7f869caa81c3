#!/usr/bin/env bash
# FaCTz against SZ3, in one run, on the same files and the same absolute bounds
# (issue 20). For each field and REL bound t: eb = t x the value range over both components
# (what factz's REL means); SZ3 runs with ABS eb on each component separately, as a user of
# SZ3 would. Every decompressed field is checked by `factz verify` (violations: critical
# points lost, gained or changed; max err / eb: the bound). Times are whole processes on
# files in the page cache, the median of REPEAT runs; SZ3 runs serial (its CLI has no
# threads), factz with -x omp=T for each T in THREADS. Each timed command runs under
# `bash -c` as SZ3's pair does (factz overwrites its outputs as SZ3 does; no `rm` before it:
# a process more costs milliseconds here). bench/interleaved_sz3.py times the processes
# themselves, without a shell, which is what a user of the 0.5 MB fields sees.
#
#   SZ3=/path/to/sz3 bash bench/sz3_compare.sh [FIELD_SPEC ...]
#   FIELD_SPEC = name:nx:ny:u_path:v_path   (default: the ocean and wind fields of
#                ../shared/data, or the bundled ones)
# Env: SZ3 (sz3 binary; required), BUILD (factz build dir, default build), RELS (default
# "1e-2 1e-3 1e-4"), REPEAT (default 5), THREADS (default "1 2": factz OMP_NUM_THREADS),
# MODES (default "speculative block"), FACTZ_ARGS (more `factz compress` options, e.g.
# "--anchor-stride 4096"; default none).
# SZ3 is built from its public source outside this repository (docs/benchmarks.md says how).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
factz=$build/factz
sz3=${SZ3:?set SZ3 to the sz3 binary (built from https://github.com/szcompressor/SZ3 outside this repository)}
rels=${RELS:-1e-2 1e-3 1e-4}
repeat=${REPEAT:-5}
threads=${THREADS:-1 2}
modes=${MODES:-speculative block}
read -r -a extra <<<"${FACTZ_ARGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

specs=("$@")
if [[ ${#specs[@]} -eq 0 ]]; then
  for s in cmems_glob1deg_cur:360:171 gfs10m_wind_2014:360:181; do
    IFS=: read -r name nx ny <<<"$s"
    for d in "$root/../shared/data" "$root/tests/data"; do
      if [[ -f $d/${name}_u_${nx}x${ny}.f32 ]]; then
        specs+=("$name:$nx:$ny:$d/${name}_u_${nx}x${ny}.f32:$d/${name}_v_${nx}x${ny}.f32")
        break
      fi
    done
  done
fi

# median_time CMD...: the median wall time of $repeat runs, in seconds.
median_time() {
  local ts=()
  for ((r = 0; r < repeat; ++r)); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    ts+=("$(echo "$t1 - $t0" | bc -l)")
  done
  printf '%s\n' "${ts[@]}" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

size_of() { stat -c %s "$1"; }

echo "| field | REL | compressor | threads | bytes | ratio | vs SZ3 size | compress MB/s | decompress MB/s | violations | max err / eb |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for spec in "${specs[@]}"; do
  IFS=: read -r name nx ny u v <<<"$spec"
  raw=$((2 * 4 * nx * ny))
  mb=$(echo "$raw / 1000000" | bc -l)
  range=$(/usr/bin/python3 -c "
import numpy as np, sys
u = np.fromfile('$u', '<f4'); v = np.fromfile('$v', '<f4')
print(repr(float(max(u.max(), v.max())) - float(min(u.min(), v.min()))))")
  for rel in $rels; do
    eb=$(/usr/bin/python3 -c "print(repr($rel * $range))")
    # SZ3: each component on its own, ABS eb.
    for c in u v; do
      src=$([[ $c == u ]] && echo "$u" || echo "$v")
      "$sz3" -f -i "$src" -z "$tmp/sz3_$c.sz" -2 "$nx" "$ny" -M ABS "$eb" >/dev/null
      "$sz3" -f -z "$tmp/sz3_$c.sz" -o "$tmp/sz3_$c.out" -2 "$nx" "$ny" -M ABS "$eb" >/dev/null
    done
    sz_bytes=$(($(size_of "$tmp/sz3_u.sz") + $(size_of "$tmp/sz3_v.sz")))
    sz_ct=$(median_time bash -c "'$sz3' -f -i '$u' -z '$tmp/a.sz' -2 $nx $ny -M ABS $eb && '$sz3' -f -i '$v' -z '$tmp/b.sz' -2 $nx $ny -M ABS $eb")
    sz_dt=$(median_time bash -c "'$sz3' -f -z '$tmp/sz3_u.sz' -o '$tmp/a.out' -2 $nx $ny -M ABS $eb && '$sz3' -f -z '$tmp/sz3_v.sz' -o '$tmp/b.out' -2 $nx $ny -M ABS $eb")
    ver=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$tmp/sz3_u.out" -d "$tmp/sz3_v.out" --json)
    row() {  # name compressor threads bytes ct dt verify_json
      /usr/bin/python3 - "$@" <<'PY'
import json, sys
name, rel, comp, thr, nbytes, ct, dt, ver, raw, mb, eb, szb = sys.argv[1:]
ver = json.loads(ver); nbytes = int(nbytes); raw = int(raw); mb = float(mb); eb = float(eb)
err = max(ver["max_abs_error"]) / eb if eb > 0 else 0.0
viol = ver["violations"]
print(f"| {name} | {rel} | {comp} | {thr} | {nbytes} | {raw / nbytes:.2f} | {nbytes / int(szb):.3f} | "
      f"{mb / float(ct):.1f} | {mb / float(dt):.1f} | {viol} | {err:.3f} |")
PY
    }
    row "$name" "$rel" sz3 1 "$sz_bytes" "$sz_ct" "$sz_dt" "$ver" "$raw" "$mb" "$eb" "$sz_bytes"
    for mode in $modes; do
      for t in $threads; do
        rm -f "$tmp"/f*.f32 "$tmp/f.fz"
        "$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$tmp/f.fz" -M ABS "$eb" --mode "$mode" "${extra[@]}" -x "omp=$t" >/dev/null 2>&1
        ct=$(median_time bash -c "'$factz' compress -2 $nx $ny -i '$u' -i '$v' -z '$tmp/g.fz' -M ABS $eb --mode $mode ${FACTZ_ARGS:-} -x omp=$t")
        "$factz" decompress -z "$tmp/f.fz" -o "$tmp/fu.f32" -o "$tmp/fv.f32" -x "omp=$t" >/dev/null 2>&1
        dt=$(median_time bash -c "'$factz' decompress -z '$tmp/f.fz' -o '$tmp/gu.f32' -o '$tmp/gv.f32' -x omp=$t")
        ver=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$tmp/fu.f32" -d "$tmp/fv.f32" --json)
        row "$name" "$rel" "factz-${mode:0:1}" "$t" "$(size_of "$tmp/f.fz")" "$ct" "$dt" "$ver" "$raw" "$mb" "$eb" "$sz_bytes"
      done
    done
  done
done
