#!/usr/bin/env bash
# Scalar fields against SZ3, same files and the same absolute bound: for every field, factz's
# mode none and mode contour-tree (default options: predictor best, coder smallest) and SZ3
# (`sz3 -f -M ABS eb`, eb the absolute bound factz used for REL), each decompressed and
# checked with `factz verify` at the persistence given: the ratio, the contour tree's false
# cases (SZ3 and mode none keep no tree; contour-tree must have none), the error, and the
# whole process's compression seconds (median of REPEAT runs). Prints markdown rows; exits 1
# if a contour-tree stream loses its tree or any stream exceeds the bound.
#
#   SZ3=/path/to/sz3 bench/scalar_sz3.sh FACTZ_BINARY REL PERSISTENCE FILE.f32 ...
#
# File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D), raw little-endian float32. SZ3 is
# built from its public source outside this repository (docs/benchmarks.md, "FaCTz against SZ3").
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: SZ3=/path/to/sz3 $0 FACTZ_BINARY REL PERSISTENCE FILE.f32 ..." >&2
  exit 2
fi
: "${SZ3:?set SZ3 to the sz3 binary}"
export OMP_WAIT_POLICY=passive
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$SZ3" "${REPEAT:-3}" "$@" <<'PY'
import os, statistics, sys, tempfile

from scalar_runs import grid_of, run

sz3, repeat, factz, rel, per, files = sys.argv[1], int(sys.argv[2]), os.path.realpath(sys.argv[3]), sys.argv[4], \
    sys.argv[5], sys.argv[6:]
tmp = tempfile.mkdtemp()

def timed(cmd):
    out, secs = None, []
    for _ in range(repeat):
        out, s = run(cmd)
        secs.append(s)
    return out, statistics.median(secs)

bad = 0
print("| field | REL | P | compressor | ratio | size / SZ3's | false cases (P) | max err / eb | compress s |")
print("|---|---|---|---|---|---|---|---|---|")
for path in files:
    name, dims, grid, flag = grid_of(path)
    raw = os.path.getsize(path)
    rows = []
    eb = None
    for mode in ("none", "contour-tree"):
        extra = ["--persistence", per] if mode == "contour-tree" else []
        out, secs = timed([factz, "compress"] + flag + ["-i", path, "-z", f"{tmp}/f.fz", "-M", "REL", rel, "--mode",
                                                         mode, "--json"] + extra)
        st = out
        eb = st["eb_abs"]
        run([factz, "decompress", "-z", f"{tmp}/f.fz", "-o", f"{tmp}/f.f32"])
        os.replace(f"{tmp}/f.f32", f"{tmp}/{mode}.f32")
        rows.append((f"factz {mode} ({st['predictor']})", raw / os.path.getsize(f"{tmp}/f.fz"), f"{tmp}/{mode}.f32",
                     secs, mode == "contour-tree"))
    # SZ3's dimensions: slowest last (its -3 takes nx ny nz with x fastest, as factz's).
    sdims = ["-2"] + dims if len(dims) == 2 else ["-3"] + dims
    _, secs = timed([sz3, "-f", "-i", path, "-z", f"{tmp}/s.sz"] + sdims + ["-M", "ABS", repr(eb)])
    run([sz3, "-f", "-z", f"{tmp}/s.sz", "-o", f"{tmp}/sz3.f32"] + sdims + ["-M", "ABS", repr(eb)])
    rows.append(("sz3", raw / os.path.getsize(f"{tmp}/s.sz"), f"{tmp}/sz3.f32", secs, False))
    sz3_ratio = rows[-1][1]
    for who, ratio, dec, secs, keeps in rows:
        v, _ = run([factz, "verify"] + grid + ["-i", path, "-d", dec, "--persistence", per, "--json"])
        ok = v["max_abs_error"] <= eb and (not keeps or v["same_tree"] == 1)
        bad += not ok
        print(f"| {name} | {rel} | {per} | {who} | {ratio:.2f} | {sz3_ratio / ratio:.3f} | "
              f"{v['false_cases']} | {v['max_abs_error'] / eb:.3f} | {secs:.3f} |" + ("" if ok else " FAILED"),
              flush=True)
sys.exit(1 if bad else 0)
PY
