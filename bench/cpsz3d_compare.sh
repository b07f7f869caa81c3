#!/usr/bin/env bash
# FaCTz against cpSZ's 3D compressors on the same 3D vector fields and the same absolute
# bounds (issue 22). For each field and REL bound t: eb = t x the value range over the three
# components together (max over u, v, w minus min over u, v, w: what factz's REL means in 3D
# and what cpSZ-SoS's relative bound means); every compressor gets that eb:
#   cpSZ      the original 3D cpSZ (sz_compress_cp_preserve_3d_online_abs, ABS eb)
#   cpSZ-SoS  the SoS variant (sz_compress_cp_preserve_sos_3d_*; its bound is relative to the
#             same range, so it is given t), each option in SOS_OPTIONS: 0 no speculation,
#             1 speculative eb, 2 speculative execution, 3 the same with 8 blocks, 4 all
#   factz-S / factz-B  factz compress -M ABS eb --mode speculative / block, -x omp=T
# Every decompressed field is checked by `factz verify -3` (violations: critical points lost,
# spurious or changed type; max err / eb: the bound). Times are in-process (cpSZ: its test
# driver's printed compression and decompression times, zstd included; factz: the
# library's compress_seconds / decompress_seconds of --json), the median of REPEAT runs;
# MB/s counts the 12 bytes of float32 u, v, w per vertex. cpSZ runs serial (it has no threads).
#
#   CPSZ=... CPSZ_SOS=... bash bench/cpsz3d_compare.sh [FIELD_SPEC ...]
#   FIELD_SPEC = name:nx:ny:nz:u_path:v_path:w_path   (default: cavity3d, bandlim3d and
#                abc3d of FIELDS, made by scripts/real_vector3d_fields.sh FIELDS)
# Env: CPSZ (driver: CPSZ U V W NZ NY NX ABS_EB; writes U.out, V.out, W.out; built from
# test/sz_compress_cp_preserve_3d_test.cpp of https://github.com/szcompressor/cpSZ),
# CPSZ_SOS (driver: CPSZ_SOS U V W NZ NY NX REL_EB OPTION, from
# test/sz_compress_cp_preserve_3d_test.cpp of https://github.com/xty9501/cpsz-sos); either
# may be empty to skip it. Both are built outside this repository (docs/benchmarks.md, "3D:
# real data and cpSZ", names the sources and versions). BUILD (factz build dir, default
# build), FIELDS (default /tmp/factz_fields3d), RELS (default "1e-1 1e-2 1e-3 1e-4"), REPEAT
# (default 3), THREADS (default "1 2"), MODES (default "speculative block"), SOS_OPTIONS
# (default "0 1 2 3 4"), OMP_WAIT_POLICY (default passive: a waiting OpenMP thread yields its
# core, which on a loaded machine keeps two threads from being slower than one).
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
factz=$build/factz
cpsz=${CPSZ-}
cpsz_sos=${CPSZ_SOS-}
fields=${FIELDS:-/tmp/factz_fields3d}
rels=${RELS:-1e-1 1e-2 1e-3 1e-4}
repeat=${REPEAT:-3}
threads=${THREADS:-1 2}
modes=${MODES:-speculative block}
sos_options=${SOS_OPTIONS:-0 1 2 3 4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows.tsv
: >"$rows"

specs=("$@")
if [[ ${#specs[@]} -eq 0 ]]; then
  for s in cavity3d:48:48:48 bandlim3d:64:64:64 abc3d:64:64:64; do
    IFS=: read -r name nx ny nz <<<"$s"
    d="${nx}x${ny}x${nz}"
    specs+=("$name:$nx:$ny:$nz:$fields/${name}_u_$d.f32:$fields/${name}_v_$d.f32:$fields/${name}_w_$d.f32")
  done
fi

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
json_field() { /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

# verify_row NAME REL EB COMPRESSOR THREADS BYTES COMP_S DEC_S DU DV DW: one row of $rows.
verify_row() {
  local name=$1 rel=$2 eb=$3 comp=$4 thr=$5 bytes=$6 cs=$7 ds=$8
  local ver
  ver=$("$factz" verify -3 "$nx" "$ny" "$nz" -i "$u" -i "$v" -i "$w" -d "$9" -d "${10}" -d "${11}" --json)
  /usr/bin/python3 - "$name" "$rel" "$eb" "$comp" "$thr" "$bytes" "$cs" "$ds" "$ver" "$raw" >>"$rows" <<'PY'
import json, sys
name, rel, eb, comp, thr, nbytes, cs, ds, ver, raw = sys.argv[1:]
ver = json.loads(ver); eb = float(eb); raw = int(raw); nbytes = int(nbytes)
err = max(ver["max_abs_error"]) / eb
print("\t".join(str(x) for x in (
    name, rel, f"{eb:.6g}", comp, thr, nbytes, f"{raw / nbytes:.2f}", f"{raw / 1e6 / float(cs):.2f}",
    f"{raw / 1e6 / float(ds):.2f}", f"{err:.6f}", ver["violations"],
    f'{ver["lost"]}/{ver["spurious"]}/{ver["type_changed"]}', ver["cp_original"])))
PY
}

# run_cpsz LABEL CMD...: runs a cpSZ driver REPEAT times on links to u, v, w in $tmp/c;
# leaves the decompressed fields in $tmp/c/{u,v,w}.f32.out and a row in $rows.
run_cpsz() {
  local label=$1
  shift
  local cts=() dts=() bytes=0 r log
  for ((r = 0; r < repeat; ++r)); do
    rm -rf "$tmp/c" && mkdir "$tmp/c"
    ln -s "$u" "$tmp/c/u.f32" && ln -s "$v" "$tmp/c/v.f32" && ln -s "$w" "$tmp/c/w.f32"
    log=$("$@" "$tmp/c/u.f32" "$tmp/c/v.f32" "$tmp/c/w.f32" "${tail_args[@]}" 2>&1) || {
      echo "$label failed on $name REL $rel" >&2
      return 0
    }
    cts+=("$(sed -n 's/^Compression time: \([0-9.e+-]*\)s.*/\1/p' <<<"$log")")
    dts+=("$(sed -n 's/^Decompression time: \([0-9.e+-]*\)s.*/\1/p' <<<"$log")")
    bytes=$(sed -n 's/^Compressed size = \([0-9]*\),.*/\1/p' <<<"$log")
  done
  verify_row "$name" "$rel" "$eb" "$label" 1 "$bytes" "$(printf '%s\n' "${cts[@]}" | median)" \
    "$(printf '%s\n' "${dts[@]}" | median)" "$tmp/c/u.f32.out" "$tmp/c/v.f32.out" "$tmp/c/w.f32.out"
}

for spec in "${specs[@]}"; do
  IFS=: read -r name nx ny nz u v w <<<"$spec"
  raw=$((3 * 4 * nx * ny * nz))
  range=$(/usr/bin/python3 -c "
import numpy as np
c = [np.fromfile(p, '<f4') for p in ('$u', '$v', '$w')]
print(repr(float(max(x.max() for x in c)) - float(min(x.min() for x in c))))")
  for rel in $rels; do
    eb=$(/usr/bin/python3 -c "print(repr($rel * $range))")
    if [[ -n $cpsz ]]; then
      tail_args=("$nz" "$ny" "$nx" "$eb")
      run_cpsz cpSZ "$cpsz"
    fi
    if [[ -n $cpsz_sos ]]; then
      for opt in $sos_options; do
        tail_args=("$nz" "$ny" "$nx" "$rel" "$opt")
        run_cpsz "cpSZ-SoS/$opt" "$cpsz_sos"
      done
    fi
    for mode in $modes; do
      for t in $threads; do
        cts=() dts=()
        for ((r = 0; r < repeat; ++r)); do
          rm -f "$tmp/f.fz" "$tmp"/f?.f32
          js=$("$factz" compress -3 "$nx" "$ny" "$nz" -i "$u" -i "$v" -i "$w" -z "$tmp/f.fz" -M ABS "$eb" \
            --mode "$mode" -x "omp=$t" --json)
          cts+=("$(json_field compress_seconds <<<"$js")")
          js=$("$factz" decompress -z "$tmp/f.fz" -o "$tmp/fu.f32" -o "$tmp/fv.f32" -o "$tmp/fw.f32" -x "omp=$t" --json)
          dts+=("$(json_field decompress_seconds <<<"$js")")
        done
        verify_row "$name" "$rel" "$eb" "factz-${mode:0:1}" "$t" "$(stat -c %s "$tmp/f.fz")" \
          "$(printf '%s\n' "${cts[@]}" | median)" "$(printf '%s\n' "${dts[@]}" | median)" \
          "$tmp/fu.f32" "$tmp/fv.f32" "$tmp/fw.f32"
      done
    done
  done
done

# The full table, then per field and bound: the best cpSZ ratio without violations against
# factz-S on one thread (ratio and compression speed).
/usr/bin/python3 - "$rows" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| field | REL | eb | compressor | threads | bytes | ratio | compress MB/s | decompress MB/s "
      "| max err / eb | violations | lost/spurious/changed | critical points |")
print("|" + "---|" * 13)
for r in rows:
    print("| " + " | ".join(r) + " |")
print()
print("| field | REL | best violation-free cpSZ (setting) | its compress MB/s | factz-S ratio "
      "| factz-S / best | factz-S compress MB/s (1 thread) | speed factor | factz-S MB/s (2 threads) "
      "| speed factor (2 threads) | factz-B ratio |")
print("|" + "---|" * 11)
keys = []
for r in rows:
    if (r[0], r[1]) not in keys:
        keys.append((r[0], r[1]))
for name, rel in keys:
    sel = [r for r in rows if r[0] == name and r[1] == rel]
    cp = [r for r in sel if r[3].startswith("cpSZ") and r[10] == "0" and float(r[9]) <= 1.0]
    fs = [r for r in sel if r[3] == "factz-s" and r[4] == "1"]
    fs2 = [r for r in sel if r[3] == "factz-s" and r[4] == "2"]
    fb = [r for r in sel if r[3] == "factz-b" and r[4] == "1"]
    if not fs:
        continue
    s = fs[0]
    s2 = fs2[0][7] if fs2 else "-"
    b = fb[0][6] if fb else "-"
    if cp:
        best = max(cp, key=lambda r: float(r[6]))
        f2 = f"{float(s2) / float(best[7]):.1f}" if fs2 else "-"
        print(f"| {name} | {rel} | {best[6]} ({best[3]}) | {best[7]} | {s[6]} | "
              f"{float(s[6]) / float(best[6]):.2f} | {s[7]} | {float(s[7]) / float(best[7]):.1f} | {s2} | {f2} | {b} |")
    else:
        print(f"| {name} | {rel} | none | - | {s[6]} | - | {s[7]} | - | {s2} | - | {b} |")
PY
