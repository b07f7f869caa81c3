#!/usr/bin/env bash
# bench/mpi/run.sh: the MPI benchmarks of docs/benchmarks.md ("Distributed compression"),
# printed as markdown tables. Heavy (a 16384 x 16384 field is 2 GiB of input; about 10
# minutes on 2 cores): run it once, alone.
#
#   bash bench/mpi/run.sh            # FACTZ_BUILD_DIR (default build, as scripts/build.sh makes it) holds factz, bench/synth_bench
#   N1=2048 N2=4096 bash bench/mpi/run.sh   # a quick smaller run
#
# 1. An N1 x N1 (8192) synthetic turbulent field (factz::synth::turbulence) compressed with 4
#    ranks --blocks 2 2 in speculative and block mode: global verify of the decompressed
#    field (exact extractor, no --blocks), max error vs eb, ratio vs one process without
#    --blocks.
# 2. An N2 x N2 (16384) field in 8 x 8 blocks: --region decode of a 512 x 512 window (inside
#    one block, and across a corner of four) against the whole-file decode: time, bytes read.
# 3. Scaling over 1..4 ranks, fixed layout --blocks 4 4 on the N1 field: wall time, per-rank
#    bytes written, per-rank communication payload; every file byte-identical.
# Fields are generated into a scratch folder under /tmp and deleted on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${FACTZ_BUILD_DIR:-$root/build}
factz=$build/factz
synth=$build/bench/synth_bench
for tool in "$factz" "$synth"; do
  [ -x "$tool" ] || { echo "run.sh: $tool not built (cmake --build $build --target factz_cli synth_bench)" >&2; exit 1; }
done
N1=${N1:-8192}
N2=${N2:-16384}
work=$(mktemp -d /tmp/factz_mpi_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=passive OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

mpi() { local n=$1; shift; mpirun --oversubscribe -np "$n" -x OMP_NUM_THREADS=1 -x OMP_WAIT_POLICY "$@"; }
# get FILE KEY: one value of the last JSON object in FILE.
get() {
  /usr/bin/python3 -c 'import json,sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
v = d[sys.argv[2]]
print(v if not isinstance(v, list) else max(v))' "$1" "$2"
}
calc() { /usr/bin/python3 -c "print($1)"; }
now() { date +%s.%N; }

echo "## Distributed compression (bench/mpi/run.sh, $(nproc) cores, $(date -u +%Y-%m-%d))"
echo
"$synth" turbulence "$N1" "$N1" 1 "$work/t" >/dev/null
u=$work/t_u_${N1}x${N1}.f32
v=$work/t_v_${N1}x${N1}.f32

echo "### 1. ${N1} x ${N1} turbulence, 4 ranks --blocks 2 2 vs one process (REL 1e-2)"
echo
echo "| mode | ratio, 1 process | ratio, 4 ranks | difference | critical points | violations (global verify) | max error | eb | compress s, 1 process (2 threads) | compress s, 4 ranks |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for mode in speculative block; do
  "$factz" compress -2 "$N1" "$N1" -i "$u" -i "$v" -z "$work/one.fz" --mode "$mode" --json >"$work/one.json"
  rm -f "$work/one.fz"
  mpi 4 "$factz" compress -2 "$N1" "$N1" -i "$u" -i "$v" -z "$work/m.fzmb" --blocks 2 2 --mode "$mode" -x omp=1 \
    --json >"$work/m.json"
  mpi 4 "$factz" decompress -z "$work/m.fzmb" -o "$work/du.f32" -o "$work/dv.f32" --json >/dev/null
  "$factz" verify -2 "$N1" "$N1" -i "$u" -i "$v" -d "$work/du.f32" -d "$work/dv.f32" --json >"$work/ver.json"
  r1=$(get "$work/one.json" ratio)
  r4=$(get "$work/m.json" ratio)
  eb=$(get "$work/m.json" eb_abs)
  err=$(get "$work/ver.json" max_abs_error)
  ok=$(calc "'yes' if $err <= $eb else 'NO'")
  printf "| %s | %.3f | %.3f | %+.2f %% | %s | %s | %.6g (<= eb: %s) | %.6g | %.2f | %.2f |\n" "$mode" "$r1" "$r4" \
    "$(calc "100 * ($r4 - $r1) / $r1")" "$(get "$work/ver.json" cp_original)" "$(get "$work/ver.json" violations)" \
    "$err" "$ok" "$eb" "$(get "$work/one.json" compress_seconds)" "$(get "$work/m.json" compress_seconds)"
  rm -f "$work/m.fzmb" "$work/du.f32" "$work/dv.f32"
done
echo

echo "### 3. Scaling, ${N1} x ${N1}, speculative, --blocks 4 4 (16 blocks), -x omp=1 per rank"
echo
echo "| ranks | wall s (mpirun) | compress s (slowest rank) | read s | write s | bytes written per rank (max) | communication payload per rank (max) | file identical to 1 rank |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1 2 3 4; do
  t0=$(now)
  mpi "$n" "$factz" compress -2 "$N1" "$N1" -i "$u" -i "$v" -z "$work/s$n.fzmb" --blocks 4 4 -x omp=1 --json \
    >"$work/s$n.json"
  t1=$(now)
  same=yes
  if [ "$n" -gt 1 ]; then cmp -s "$work/s1.fzmb" "$work/s$n.fzmb" || same=NO; rm -f "$work/s$n.fzmb"; fi
  printf "| %d | %.2f | %.2f | %.2f | %.2f | %s | %s B | %s |\n" "$n" "$(calc "$t1 - $t0")" \
    "$(get "$work/s$n.json" compress_seconds)" "$(get "$work/s$n.json" read_seconds)" \
    "$(get "$work/s$n.json" write_seconds)" "$(get "$work/s$n.json" rank_bytes_max)" \
    "$(get "$work/s$n.json" comm_bytes_max)" "$same"
done
echo
rm -f "$u" "$v" "$work"/s*.fzmb

"$synth" turbulence "$N2" "$N2" 2 "$work/b" >/dev/null
u=$work/b_u_${N2}x${N2}.f32
v=$work/b_v_${N2}x${N2}.f32
mpi 4 "$factz" compress -2 "$N2" "$N2" -i "$u" -i "$v" -z "$work/big.fzmb" --blocks 8 8 -x omp=1 --json >"$work/big.json"
rm -f "$u" "$v"
size=$(stat -c %s "$work/big.fzmb")
echo "### 2. Region decode, ${N2} x ${N2} turbulence (speculative, REL 1e-2), --blocks 8 8, file $size bytes (ratio $(get "$work/big.json" ratio); compressed by 4 ranks in $(get "$work/big.json" total_seconds) s)"
echo
echo "| decode | blocks decoded | bytes read | share of file | seconds |"
echo "|---|---|---|---|---|"
half=$((N2 / 2))
inner=$((N2 / 16))
for w in "$inner $inner $((inner + 512)) $((inner + 512))" "$((half - 256)) $((half - 256)) $((half + 256)) $((half + 256))"; do
  set -- $w
  "$factz" decompress -z "$work/big.fzmb" --region "$@" -o "$work/ru.f32" -o "$work/rv.f32" --json >"$work/r.json"
  printf "| --region %s %s %s %s (512 x 512) | %s | %s | %.4f %% | %.4f |\n" "$1" "$2" "$3" "$4" \
    "$(get "$work/r.json" blocks_decoded)" "$(get "$work/r.json" bytes_read)" \
    "$(calc "100 * $(get "$work/r.json" bytes_read) / $size")" "$(get "$work/r.json" decompress_seconds)"
done
t0=$(now)
"$factz" decompress -z "$work/big.fzmb" -o "$work/du.f32" -o "$work/dv.f32" --json >"$work/full.json"
t1=$(now)
printf "| whole file, 1 process (2 threads) | 64 | %s | 100 %% | %.2f (decode), %.2f (wall with reading and writing 2 GiB) |\n" \
  "$size" "$(get "$work/full.json" decompress_seconds)" "$(calc "$t1 - $t0")"
rm -f "$work/du.f32" "$work/dv.f32"
t0=$(now)
mpi 4 "$factz" decompress -z "$work/big.fzmb" -o "$work/du.f32" -o "$work/dv.f32" --json >"$work/full4.json"
t1=$(now)
printf "| whole file, 4 ranks | 64 | %s | 100 %% | %.2f (decode, slowest rank), %.2f (wall) |\n" \
  "$size" "$(get "$work/full4.json" decompress_seconds)" "$(calc "$t1 - $t0")"
echo
