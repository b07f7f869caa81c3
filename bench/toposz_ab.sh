#!/usr/bin/env bash
# Contour-tree streams of two factz binaries (BEFORE and AFTER a change of the encoder), the
# same fields and bounds, run one after the other: each field's mode none stream (AFTER's),
# both contour-tree streams with their compression seconds, AFTER's exact vertices, and
# both streams decompressed and checked with AFTER's `factz verify` (same contour tree,
# error within the bound; the check column names a failing one). Prints markdown rows and a
# summary line (geometric mean of BEFORE / AFTER sizes, fields where contour-tree / none >=
# 0.6 for each, summed seconds); exits 1 if a check fails.
#
#   bench/toposz_ab.sh BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ...
#
# File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D), raw little-endian float32.
set -euo pipefail
if [[ $# -lt 5 ]]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ..." >&2
  exit 2
fi
export OMP_WAIT_POLICY=passive
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$@" <<'PY'
import math
import os
import sys
import tempfile

import scalar_runs

before, after = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
rel, per, files = sys.argv[3], sys.argv[4], sys.argv[5:]
tmp = tempfile.mkdtemp()
bad = 0
logs, ok = [], [0, 0]
secs = [0.0, 0.0]
print("| field | REL | P | none bytes | before bytes | after bytes | before / after | after exact vertices | seconds before / after | check |")
print("|---|---|---|---|---|---|---|---|---|---|")
# Fields of one name (the smooth 256^3 and 192^3 fields) are told apart by their grids.
names = [scalar_runs.grid_of(path)[0] for path in files]
for path in files:
    name, dims, grid, flag = scalar_runs.grid_of(path)
    if names.count(name) > 1:
        name += " " + "x".join(dims)
    base = ["compress"] + flag + ["-i", path, "-M", "REL", rel, "--json"]
    ct = ["--mode", "contour-tree", "--persistence", per]
    none, _ = scalar_runs.run([after] + base + ["--mode", "none", "-z", f"{tmp}/n.fz"])
    b, _ = scalar_runs.run([before] + base + ct + ["-z", f"{tmp}/b.fz"])
    a, _ = scalar_runs.run([after] + base + ct + ["-z", f"{tmp}/a.fz"])
    failed = []
    for tag, stream, stats, decoder in (("before", "b", b, before), ("after", "a", a, after)):
        scalar_runs.run([decoder, "decompress", "-z", f"{tmp}/{stream}.fz", "-o", f"{tmp}/{stream}.f32"])
        v, _ = scalar_runs.run([after, "verify"] + grid + ["-i", path, "-d", f"{tmp}/{stream}.f32", "--persistence",
                                                          per, "--json"])
        if not (v["max_abs_error"] <= stats["eb_abs"] and v["same_tree"] == 1):
            failed.append(tag)
    good = not failed
    bad += not good
    nb, bb, ab = none["compressed_bytes"], b["compressed_bytes"], a["compressed_bytes"]
    logs.append(math.log(bb / ab))
    ok[0] += nb / bb >= 0.6
    ok[1] += nb / ab >= 0.6
    secs[0] += b["compress_seconds"]
    secs[1] += a["compress_seconds"]
    print(f"| {name} | {rel} | {per} | {nb} | {bb} | {ab} | {bb / ab:.3f} | {a['exact_vertices']} | "
          f"{b['compress_seconds']:.2f} / {a['compress_seconds']:.2f} | {'ok' if good else 'FAILED: ' + ' and '.join(failed)} |")
print(f"\nbefore / after geometric mean {math.exp(sum(logs) / len(logs)):.3f}; contour-tree / none >= 0.6: "
      f"before {ok[0]}, after {ok[1]} of {len(files)}; compression seconds summed: before {secs[0]:.2f}, after {secs[1]:.2f}")
sys.exit(1 if bad else 0)
PY
