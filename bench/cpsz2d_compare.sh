#!/usr/bin/env bash
# FaCTz against cpSZ's 2D compressors on the same 2D vector fields and the same absolute
# bounds (issue 20: the cpSZ ratios that block mode is to reach). For each field and REL bound
# t: eb = t x the value range over the two components together (max over u, v minus min over
# u, v: what factz's REL means in 2D, src/backend/cpu/cpu_codec.cpp value_range, and what
# cpSZ-SoS's relative bound means); every compressor gets that eb:
#   cpSZ      the original 2D cpSZ driver (sz3_compress_cp_preserve_2d_online_abs, ABS eb)
#   cpSZ-SoS  the SoS variant (sz_compress_cp_preserve_sos_2d_*; its bound is relative to the
#             same range, in its fixed point, so it is given t), each option in SOS_OPTIONS:
#             0 no speculation, 1 speculative eb, 2 speculative execution, 3 the same with
#             max factor 8, 4 all
#   factz-S / factz-B  factz compress -M ABS eb --mode speculative / block, -x omp=T
# Every decompressed field is checked by `factz verify -2` (violations: critical points lost,
# spurious or changed type; max err / eb: the bound). Times are in-process (cpSZ: its test
# driver's printed compression and decompression times, zstd included; factz: the
# library's compress_seconds / decompress_seconds of --json), the median of REPEAT runs;
# ratio and MB/s count the 8 bytes of float32 u, v per vertex. cpSZ runs serial (it has no
# threads).
#
#   CPSZ=... CPSZ_SOS=... bash bench/cpsz2d_compare.sh [FIELD_SPEC ...]
#   FIELD_SPEC = name:nx:ny:u_path:v_path   (default: every 2D vector field of DATA, the
#                files NAME_u_NXxNY.f32 with their NAME_v_NXxNY.f32)
# Env: CPSZ (driver: CPSZ U V NY NX ABS_EB; writes U.out, V.out; built from
# test/sz_compress_cp_preserve_2d_test.cpp of https://github.com/szcompressor/cpSZ),
# CPSZ_SOS (driver: CPSZ_SOS U V NY NX REL_EB OPTION, from
# test/sz_compress_cp_preserve_2d_test.cpp of https://github.com/xty9501/cpsz-sos); either
# may be empty to skip it. Both are built outside this repository by bench/build_cpsz2d.sh.
# BUILD (factz build dir, default build), DATA (default ../shared/data beside the repository), RELS (default
# "1e-2 1e-3 1e-4"), REPEAT (default 3), THREADS (default 1), MODES (default "speculative
# block"), SOS_OPTIONS (default "0 1 2 3 4"), OMP_WAIT_POLICY (default passive).
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
factz=$build/factz
cpsz=${CPSZ-}
cpsz_sos=${CPSZ_SOS-}
data=${DATA:-$root/../shared/data}
rels=${RELS:-1e-2 1e-3 1e-4}
repeat=${REPEAT:-3}
threads=${THREADS:-1}
modes=${MODES:-speculative block}
sos_options=${SOS_OPTIONS:-0 1 2 3 4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows.tsv
: >"$rows"

specs=("$@")
if [[ ${#specs[@]} -eq 0 ]]; then
  for u in "$data"/*_u_*.f32; do
    f=$(basename "$u")
    [[ $f =~ ^(.+)_u_([0-9]+)x([0-9]+)\.f32$ ]] || continue
    v=$data/${BASH_REMATCH[1]}_v_${BASH_REMATCH[2]}x${BASH_REMATCH[3]}.f32
    [[ -f $v ]] || continue
    specs+=("${BASH_REMATCH[1]}:${BASH_REMATCH[2]}:${BASH_REMATCH[3]}:$u:$v")
  done
fi

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
json_field() { /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

# verify_row NAME REL EB COMPRESSOR THREADS BYTES COMP_S DEC_S DU DV: one row of $rows.
verify_row() {
  local name=$1 rel=$2 eb=$3 comp=$4 thr=$5 bytes=$6 cs=$7 ds=$8
  local ver
  ver=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$9" -d "${10}" --json)
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

# run_cpsz LABEL CMD...: runs a cpSZ driver REPEAT times on links to u, v in $tmp/c; leaves
# the decompressed fields in $tmp/c/{u,v}.f32.out and a row in $rows.
run_cpsz() {
  local label=$1
  shift
  local cts=() dts=() bytes=0 r log
  for ((r = 0; r < repeat; ++r)); do
    rm -rf "$tmp/c" && mkdir "$tmp/c"
    ln -s "$u" "$tmp/c/u.f32" && ln -s "$v" "$tmp/c/v.f32"
    log=$("$@" "$tmp/c/u.f32" "$tmp/c/v.f32" "${tail_args[@]}" 2>&1) || {
      echo "$label failed on $name REL $rel" >&2
      return 0
    }
    cts+=("$(sed -n 's/^Compression time: \([0-9.e+-]*\)s.*/\1/p' <<<"$log")")
    dts+=("$(sed -n 's/^Decompression time: \([0-9.e+-]*\)s.*/\1/p' <<<"$log")")
    bytes=$(sed -n 's/^Compressed size = \([0-9]*\),.*/\1/p' <<<"$log")
  done
  verify_row "$name" "$rel" "$eb" "$label" 1 "$bytes" "$(printf '%s\n' "${cts[@]}" | median)" \
    "$(printf '%s\n' "${dts[@]}" | median)" "$tmp/c/u.f32.out" "$tmp/c/v.f32.out"
}

for spec in "${specs[@]}"; do
  IFS=: read -r name nx ny u v <<<"$spec"
  raw=$((2 * 4 * nx * ny))
  range=$(/usr/bin/python3 -c "
import numpy as np
c = [np.fromfile(p, '<f4') for p in ('$u', '$v')]
print(repr(float(max(x.max() for x in c)) - float(min(x.min() for x in c))))")
  for rel in $rels; do
    eb=$(/usr/bin/python3 -c "print(repr($rel * $range))")
    if [[ -n $cpsz ]]; then
      tail_args=("$ny" "$nx" "$eb")
      run_cpsz cpSZ "$cpsz"
    fi
    if [[ -n $cpsz_sos ]]; then
      for opt in $sos_options; do
        tail_args=("$ny" "$nx" "$rel" "$opt")
        run_cpsz "cpSZ-SoS/$opt" "$cpsz_sos"
      done
    fi
    for mode in $modes; do
      for t in $threads; do
        cts=() dts=()
        for ((r = 0; r < repeat; ++r)); do
          rm -f "$tmp/f.fz" "$tmp"/f?.f32
          js=$("$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$tmp/f.fz" -M ABS "$eb" \
            --mode "$mode" -x "omp=$t" --json)
          cts+=("$(json_field compress_seconds <<<"$js")")
          js=$("$factz" decompress -z "$tmp/f.fz" -o "$tmp/fu.f32" -o "$tmp/fv.f32" -x "omp=$t" --json)
          dts+=("$(json_field decompress_seconds <<<"$js")")
        done
        verify_row "$name" "$rel" "$eb" "factz-${mode:0:1}" "$t" "$(stat -c %s "$tmp/f.fz")" \
          "$(printf '%s\n' "${cts[@]}" | median)" "$(printf '%s\n' "${dts[@]}" | median)" \
          "$tmp/fu.f32" "$tmp/fv.f32"
      done
    done
  done
done

# The full table, then per field and bound: the best cpSZ ratio without violations that holds
# the bound, against factz-B and factz-S on the first of THREADS.
/usr/bin/python3 - "$rows" "${threads%% *}" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
t1 = sys.argv[2]
print("| field | REL | eb | compressor | threads | bytes | ratio | compress MB/s | decompress MB/s "
      "| max err / eb | violations | lost/spurious/changed | critical points |")
print("|" + "---|" * 13)
for r in rows:
    print("| " + " | ".join(r) + " |")
print()
print("| field | REL | best violation-free cpSZ (setting) | factz-B ratio | factz-B / best "
      "| factz-S ratio | factz-S / best |")
print("|" + "---|" * 7)
keys = []
for r in rows:
    if (r[0], r[1]) not in keys:
        keys.append((r[0], r[1]))
ok = lambda r: r[10] == "0" and float(r[9]) <= 1.0
for name, rel in keys:
    sel = [r for r in rows if r[0] == name and r[1] == rel]
    cp = [r for r in sel if r[3].startswith("cpSZ") and ok(r)]
    best = max(cp, key=lambda r: float(r[6])) if cp else None
    cells = [f"{best[6]} ({best[3]})" if best else "none"]
    for m in ("factz-b", "factz-s"):
        f = [r for r in sel if r[3] == m and r[4] == t1]
        if not f:
            cells += ["-", "-"]
            continue
        mark = "" if ok(f[0]) else " (NOT violation-free)"
        cells += [f[0][6] + mark, f"{float(f[0][6]) / float(best[6]):.2f}" if best else "-"]
    print(f"| {name} | {rel} | " + " | ".join(cells) + " |")
PY
