"""What the scalar benchmark scripts (bench/toposz_ratios.sh, scalar_predictors.sh,
scalar_sz3.sh) share: the grid a raw float32 file's name gives, and running a command with
its wall time (the script exits with the command's message when it fails)."""

import json
import re
import subprocess
import sys
import time


def grid_of(path):
    """(name, dims, grid, flag) of FILE_NXxNY.f32 / FILE_NXxNYxNZ.f32: dims as strings (x
    first), `grid` the -2 / -3 arguments of verify and `flag` those of compress (2D: with
    --scalar)."""
    m = re.match(r"(.*)_(\d+)x(\d+)(?:x(\d+))?\.f32$", path.rsplit("/", 1)[-1])
    if not m:
        sys.exit(f"{path}: the name must end in _NXxNY.f32 or _NXxNYxNZ.f32")
    dims = [m.group(2), m.group(3)] + ([m.group(4)] if m.group(4) else [])
    grid = (["-3"] + dims) if len(dims) == 3 else (["-2"] + dims)
    flag = grid if len(dims) == 3 else grid + ["--scalar"]
    return m.group(1), dims, grid, flag


def run(cmd):
    """Runs cmd: (stdout, parsed as JSON when cmd holds --json, and the wall seconds)."""
    t = time.time()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(str(c) for c in cmd)} failed: {r.stderr.strip()}")
    return (json.loads(r.stdout) if "--json" in cmd else r.stdout), time.time() - t


def factz_script_args(argv):
    """What a script called as `SCRIPT FACTZ_BINARY REL PERSISTENCE FILE...` works with:
    (rel, persistence, files, a scratch folder, run), run(args) running the factz binary."""
    import os
    import tempfile
    factz = os.path.realpath(argv[1])
    return argv[2], argv[3], argv[4:], tempfile.mkdtemp(), lambda args: run([factz] + args)
