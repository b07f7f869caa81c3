#!/usr/bin/env bash
# Scalar streams: the Lorenzo predictor alone against the default (both predictors, the
# smaller stream kept; contour-tree races both), one binary, the same run. For every scalar
# field given and both modes: the ratio with `--predictor lorenzo` and by default, the
# predictor the default kept, its exact vertices and compression seconds; every default
# stream is decompressed and checked with `factz verify` (same contour tree in mode
# contour-tree, error within the bound in both). Prints markdown rows; exits 1 if a check fails.
#
#   bench/scalar_predictors.sh FACTZ_BINARY REL PERSISTENCE FILE.f32 ...
#
# File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D), raw little-endian float32.
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 FACTZ_BINARY REL PERSISTENCE FILE.f32 ..." >&2
  exit 2
fi
export OMP_WAIT_POLICY=passive
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$@" <<'PY'
import sys

import scalar_runs

rel, per, files, tmp, run = scalar_runs.factz_script_args(sys.argv)

bad = 0
print("| field | REL | P | mode | ratio lorenzo | ratio default | default / lorenzo | kept | exact vertices | compress s lorenzo / default | check |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for path in files:
    name, dims, grid, flag = scalar_runs.grid_of(path)
    for mode in ("none", "contour-tree"):
        extra = ["--persistence", per] if mode == "contour-tree" else []
        base = ["compress"] + flag + ["-i", path, "-M", "REL", rel, "--mode", mode, "--json"] + extra
        lz, tl = run(base + ["-z", f"{tmp}/l.fz", "--predictor", "lorenzo"])
        df, td = run(base + ["-z", f"{tmp}/d.fz"])
        run(["decompress", "-z", f"{tmp}/d.fz", "-o", f"{tmp}/d.f32"])
        out, _ = run(["verify"] + grid + ["-i", path, "-d", f"{tmp}/d.f32", "--json"] +
                     (["--persistence", per] if mode == "contour-tree" else ["--persistence", "0"]))
        v = out
        ok = v["max_abs_error"] <= df["eb_abs"] and (mode == "none" or v["same_tree"] == 1)
        bad += not ok
        print(f"| {name} | {rel} | {per if mode != 'none' else '-'} | {mode} | {lz['ratio']:.2f} | "
              f"{df['ratio']:.2f} | {df['ratio'] / lz['ratio']:.3f} | {df['predictor']} | {df['exact_vertices']} | "
              f"{tl:.2f} / {td:.2f} | {'ok' if ok else 'FAILED'} |", flush=True)
sys.exit(1 if bad else 0)
PY
