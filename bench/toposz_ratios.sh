#!/usr/bin/env bash
# TopoSZ ratio and cost against mode none (issue 19): for every scalar field given, compresses
# with --mode none and --mode contour-tree at one REL bound and one persistence, checks the
# contour-tree stream with `factz verify` (same tree, error within the bound), and prints a
# markdown row: field, REL, persistence, both ratios, exact vertices, compress and verify
# seconds. Exits 1 if any verify fails.
#
#   bench/toposz_ratios.sh FACTZ_BINARY REL PERSISTENCE FILE.f32 ...
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
print("| field | REL | persistence | ratio none | ratio contour-tree | ct / none | exact vertices | compress s | verify s | same tree |")
print("|---|---|---|---|---|---|---|---|---|---|")
for path in files:
    name, dims, grid, flag = scalar_runs.grid_of(path)
    n = 1
    for d in dims:
        n *= int(d)
    none, _ = run(["compress"] + flag + ["-i", path, "-z", f"{tmp}/none.fz", "--mode", "none", "-M", "REL", rel, "--json"])
    ct, tc = run(["compress"] + flag + ["-i", path, "-z", f"{tmp}/ct.fz", "-M", "REL", rel, "--persistence", per, "--json"])
    run(["decompress", "-z", f"{tmp}/ct.fz", "-o", f"{tmp}/ct.f32"])
    ver, tv = run(["verify"] + grid + ["-i", path, "-d", f"{tmp}/ct.f32", "--persistence", per, "--json"])
    ok = bool(ver["same_tree"]) and ver["max_abs_error"] <= ct["eb_abs"]
    bad += not ok
    print(f"| {name} ({'x'.join(dims)}) | {rel} | {per} | {none['ratio']:.2f} | {ct['ratio']:.2f} | "
          f"{ct['ratio'] / none['ratio']:.2f} | {ct['exact_vertices']} ({100 * ct['exact_vertices'] / n:.2f} %) | "
          f"{tc:.2f} | {tv:.2f} | {'yes' if ok else 'NO'} |", flush=True)
sys.exit(1 if bad else 0)
PY
