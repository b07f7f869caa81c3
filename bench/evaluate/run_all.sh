#!/usr/bin/env bash
# The whole FaCTz evaluation (docs/evaluation.md): synthetic decaying turbulence, the
# harness on every real 2D vector field and the synthetic ones, the figures, and the
# Figure 9 pictures. Progress on stderr; a summary of stage times at the end.
#
#   bench/evaluate/run_all.sh                  # everything, into build-eval/evaluation
#   QUICK=1 bench/evaluate/run_all.sh          # real fields + a 512^2 synthetic one (a minute)
#
# Environment: BUILD (build dir, default build-eval), OUT (default $BUILD/evaluation),
# DATA (default ../shared/data), SYNTH_SIZES (default "4096 10000"), THREADS (OpenMP
# threads, default OpenMP's), NICE (default 10), FIG9_FIELD / FIG9_ZOOM (the field and
# window of the Figure 9 pictures), SZ3 (SZ3's command-line tool, built from its public
# source outside this repository: adds the sz3 baseline), DOCS=1 to copy tables and figures
# into docs/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-eval}
OUT=${OUT:-$BUILD/evaluation}
DATA=${DATA:-$ROOT/../shared/data}
NICE=${NICE:-10}
THREADS=${THREADS:-0}
if [[ -n "${QUICK:-}" ]]; then SYNTH_SIZES=${SYNTH_SIZES:-512}; else SYNTH_SIZES=${SYNTH_SIZES:-"4096 10000"}; fi
export OMP_WAIT_POLICY=passive

EVALUATE=$BUILD/bench/evaluate/evaluate
DT_SYNTH=$BUILD/bench/evaluate/dt_synth
FACTZ=$BUILD/factz
PLOT=$ROOT/bench/evaluate/plot.py
for exe in "$EVALUATE" "$DT_SYNTH" "$FACTZ"; do
  [[ -x "$exe" ]] || { echo "run_all.sh: missing $exe (cmake --build $BUILD --target evaluate dt_synth factz_cli)" >&2; exit 1; }
done
[[ -x /usr/bin/python3 ]] || { echo "run_all.sh: /usr/bin/python3 (with matplotlib) is needed for the figures" >&2; exit 1; }

mkdir -p "$OUT/data" "$OUT/figures" "$OUT/fig9"
RUN="nice -n $NICE"
T0=$(date +%s)
declare -a STAGES=()
stage() {  # stage NAME START
  local now; now=$(date +%s)
  STAGES+=("$1: $((now - $2)) s")
  echo "== $1 done in $((now - $2)) s (total $((now - T0)) s)" >&2
}

# 1. Synthetic decaying turbulence (seeded by its size; kept between runs).
t=$(date +%s)
SYNTH=()
for n in $SYNTH_SIZES; do
  u="$OUT/data/dt${n}_u_${n}x${n}.f32"
  if [[ ! -f "$u" ]]; then
    echo "== dt_synth ${n}x${n}" >&2
    $RUN "$DT_SYNTH" "$n" "$n" "$n" "$OUT/data/dt${n}" | tee "$OUT/data/dt${n}.txt" >&2
  fi
  SYNTH+=("$u")
done
stage "synthetic turbulence" "$t"

# 2. The harness: every real 2D vector field (a _u_ file with its _v_ partner), then the
#    synthetic ones.
t=$(date +%s)
REAL=()
for u in "$DATA"/*_u_*.f32; do
  v=${u/_u_/_v_}
  [[ -f "$v" ]] && REAL+=("$u")
done
echo "== evaluate: ${#REAL[@]} real fields + ${#SYNTH[@]} synthetic" >&2
SZ3_ARGS=()
[[ -n "${SZ3:-}" ]] && SZ3_ARGS=(--sz3 "$SZ3")
$RUN "$EVALUATE" --out "$OUT" --threads "$THREADS" "${SZ3_ARGS[@]}" "${REAL[@]}" "${SYNTH[@]}"
stage "harness" "$t"

# 3. Figures 6, 10 and the ratio curves.
t=$(date +%s)
$RUN /usr/bin/python3 "$PLOT" "$OUT/results.csv" "$OUT/figures" >&2
stage "plots" "$t"

# 4. Figure 9: the original and three reconstructions at REL 1e-2, critical points by fate.
t=$(date +%s)
first=${SYNTH[0]:-${REAL[0]}}
FIG9_FIELD=${FIG9_FIELD:-$first}
base=$(basename "$FIG9_FIELD" .f32)
name=${base%_u_*}
dims=${base##*_u_}
nx=${dims%x*}
ny=${dims#*x}
FIG9_ZOOM=${FIG9_ZOOM:-"0 0 $(( (nx < 512 ? nx : 512) - 1 )) $(( (ny < 512 ? ny : 512) - 1 ))"}
v9=${FIG9_FIELD/_u_/_v_}
$RUN "$FACTZ" render -2 "$nx" "$ny" -i "$FIG9_FIELD" -i "$v9" --zoom $FIG9_ZOOM --lic --size 720 \
  -o "$OUT/figures/fig9_${name}_original.png" >&2
for comp in zfp factz-none factz-S; do
  $RUN "$EVALUATE" --out "$OUT/fig9" --compressors "$comp" --bounds 1e-2 --no-throughput --repeats 1 \
    --threads "$THREADS" --dump "$comp@1e-2" "$FIG9_FIELD" 2>/dev/null
  r="$OUT/fig9/recon_${name}_${comp}_0.01"
  $RUN "$FACTZ" render -2 "$nx" "$ny" -i "$FIG9_FIELD" -i "$v9" -d "${r}_u_${dims}.f32" -d "${r}_v_${dims}.f32" \
    --zoom $FIG9_ZOOM --lic --size 720 -o "$OUT/figures/fig9_${name}_${comp}.png" >&2
  rm -f "${r}_u_${dims}.f32" "${r}_v_${dims}.f32"
done
stage "figure 9" "$t"

TOTAL=$(( $(date +%s) - T0 ))
{
  echo "run_all.sh finished $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores, total wall ${TOTAL} s"
  for s in "${STAGES[@]}"; do echo "  $s"; done
} | tee "$OUT/wall_time.txt" >&2

if [[ -n "${DOCS:-}" ]]; then
  mkdir -p "$ROOT/docs/figures"
  cp "$OUT"/figures/*.png "$ROOT/docs/figures/"
  cp "$OUT/table2.md" "$OUT/wall_time.txt" "$ROOT/docs/figures/"
  echo "== copied figures and tables into docs/figures" >&2
fi
