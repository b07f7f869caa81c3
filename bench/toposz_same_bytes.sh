#!/usr/bin/env bash
# Same bytes from two builds (issue 19's encoder changes that must not change a stream): every
# scalar field given is compressed by both binaries in modes contour-tree and none at one REL
# bound and one persistence, and the two streams are compared byte for byte. Prints a line per
# stream that differs and "done: N streams, M differ"; exits 1 if any differs.
#
#   bench/toposz_same_bytes.sh BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ...
#
# File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D), raw little-endian float32.
set -euo pipefail
if [[ $# -lt 5 ]]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY REL PERSISTENCE FILE.f32 ..." >&2
  exit 2
fi
export OMP_WAIT_POLICY=passive
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$@" <<'PY'
import os
import sys
import tempfile

import scalar_runs

binaries = [os.path.realpath(b) for b in sys.argv[1:3]]
rel, per, files = sys.argv[3], sys.argv[4], sys.argv[5:]
tmp = tempfile.mkdtemp()
streams = differ = 0
for path in files:
    name, _, _, flag = scalar_runs.grid_of(path)
    for mode in ("contour-tree", "none"):
        threshold = ["--persistence", per] if mode == "contour-tree" else []
        out = [f"{tmp}/before.fz", f"{tmp}/after.fz"]
        for binary, z in zip(binaries, out):
            scalar_runs.run([binary, "compress"] + flag + ["-i", path, "-z", z, "-M", "REL", rel, "--mode", mode] +
                            threshold)
        streams += 1
        data = [open(z, "rb").read() for z in out]
        if data[0] != data[1]:
            print(f"differ: {name} {mode} ({len(data[0])} -> {len(data[1])} bytes)", flush=True)
            differ += 1
print(f"done: {streams} streams, {differ} differ")
sys.exit(1 if differ else 0)
PY
