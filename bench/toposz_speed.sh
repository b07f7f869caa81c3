#!/usr/bin/env bash
# TopoSZ speed on a smooth random field (issue 19): makes the field (numpy Gaussian noise,
# default_rng(SEED), Fourier coefficients of wavenumber >= 8 set to 0, float32 raw), then
# times `factz compress` (contour-tree mode), `decompress` and `verify` with /usr/bin/time
# (wall seconds, peak resident memory), checks that verify finds the same tree, and that
# the stream is the same with 1 and with the default number of threads. Prints the load
# average with the numbers: the machine may be shared.
#
#   bench/toposz_speed.sh FACTZ_BINARY [N=256] [REL=1e-2] [PERSISTENCE=1e-2] [SEED=1]
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 FACTZ_BINARY [N] [REL] [PERSISTENCE] [SEED]" >&2
  exit 2
fi
factz=$(realpath "$1")
n=${2:-256}
rel=${3:-1e-2}
per=${4:-1e-2}
seed=${5:-1}
export OMP_WAIT_POLICY=passive
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field="$tmp/smooth_${n}x${n}x${n}.f32"
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$n" "$seed" "$field" <<'PY'
import sys
from smooth_fields import smooth
n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
smooth(n, 8, seed, 3).tofile(out)
PY

timed() {  # timed NAME CMD...: runs CMD under /usr/bin/time, prints "NAME seconds peak_KB"
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > "$tmp/$name.out" 2>&1
  read -r secs kb < "$tmp/time"
  echo "$name $secs $kb"
}
grid=(-3 "$n" "$n" "$n")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
timed compress "$factz" compress "${grid[@]}" -i "$field" -z "$tmp/s.fz" -M REL "$rel" --persistence "$per"
cat "$tmp/compress.out"
timed decompress "$factz" decompress -z "$tmp/s.fz" -o "$tmp/s.f32"
timed verify "$factz" verify "${grid[@]}" -i "$field" -d "$tmp/s.f32" --persistence "$per"
cat "$tmp/verify.out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -q "same_tree=1" "$tmp/verify.out" || { echo "verify: not the same tree" >&2; exit 1; }
OMP_NUM_THREADS=1 "$factz" compress "${grid[@]}" -i "$field" -z "$tmp/s1.fz" -M REL "$rel" --persistence "$per" > /dev/null 2>&1
cmp -s "$tmp/s.fz" "$tmp/s1.fz" || { echo "the stream depends on the thread count" >&2; exit 1; }
echo "same stream with 1 thread"
