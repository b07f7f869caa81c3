#!/usr/bin/env bash
# TopoSZ acceptance on real scalar fields: for every field, at REL 1e-2 and 1e-3 and
# persistence 1e-2 and 1e-3, compresses with --mode contour-tree and --mode none, checks
# the contour tree and the pointwise bound with `factz verify`, and compares the ratio with
# `zstd -19` (lossless). Prints a markdown table; exits 1 if any field has a false case,
# a different tree, or an error above the bound.
#
#   scripts/scalar_ratios.sh FACTZ_BINARY [DIR ...]
#
# DIRs default to ../shared/data (its scalar fields) and a fresh scripts/real_scalar_fields.sh
# extraction (held-out fields). File names end in _NXxNY.f32 or _NXxNYxNZ.f32.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 FACTZ_BINARY [DIR ...]" >&2
  exit 2
fi
factz=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
  held=$(mktemp -d)
  "$here/real_scalar_fields.sh" "$held" >/dev/null
  dirs=("$here/../../shared/data" "$held")
fi
export OMP_WAIT_POLICY=passive
/usr/bin/python3 - "$factz" "${dirs[@]}" <<'PY'
import json, os, re, subprocess, sys, tempfile

factz, dirs = sys.argv[1], sys.argv[2:]
scalar_shared = ("pop_ocean_temp", "eraint_z500", "ttk_heatedcyl", "ttk_isabel02_velmag", "ttk_viscousfingers")
fields = []
for d in dirs:
    for name in sorted(os.listdir(d)):
        m = re.match(r"(.*)_(\d+)x(\d+)(?:x(\d+))?\.f32$", name)
        if not m or "_u_" in name or "_v_" in name:
            continue
        if "shared" in d and not name.startswith(scalar_shared):
            continue
        dims = [int(m.group(2)), int(m.group(3))] + ([int(m.group(4))] if m.group(4) else [])
        fields.append((os.path.join(d, name), m.group(1), dims))

def run(args):
    r = subprocess.run([factz] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"factz {' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)

bad = 0
tmp = tempfile.mkdtemp()
print("| field | dims | REL | P | nodes | ratio contour-tree | ratio none | ratio zstd -19 | iterations | exact % | false cases | same tree | max err / eb | PSNR ct |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for path, name, dims in fields:
    dflag = ["-3"] + [str(x) for x in dims] if len(dims) == 3 else ["-2"] + [str(x) for x in dims] + ["--scalar"]
    vflag = (["-3"] if len(dims) == 3 else ["-2"]) + [str(x) for x in dims]
    raw = os.path.getsize(path)
    z = subprocess.run(["zstd", "-19", "-q", "-c", path], capture_output=True).stdout
    zratio = raw / len(z)
    n = 1
    for x in dims: n *= x
    for rel in ("1e-2", "1e-3"):
        none = run(["compress"] + dflag + ["-i", path, "-z", f"{tmp}/n.fz", "--mode", "none", "-M", "REL", rel, "--json"])
        for p in ("1e-2", "1e-3"):
            ct = run(["compress"] + dflag + ["-i", path, "-z", f"{tmp}/c.fz", "--persistence", p, "-M", "REL", rel, "--json"])
            run(["decompress", "-z", f"{tmp}/c.fz", "-o", f"{tmp}/c.f32", "--json"])
            v = run(["verify"] + vflag + ["-i", path, "-d", f"{tmp}/c.f32", "--persistence", p, "--json"])
            ok = v["false_cases"] == 0 and v["same_tree"] and v["max_abs_error"] <= ct["eb_abs"]
            bad += not ok
            err = v["max_abs_error"] / ct["eb_abs"] if ct["eb_abs"] > 0 else 0
            print(f"| {name} | {'x'.join(map(str, dims))} | {rel} | {p} | {v['nodes_original']} | {ct['ratio']:.2f} | "
                  f"{none['ratio']:.2f} | {zratio:.2f} | {ct['iterations']} | {100.0 * ct['exact_vertices'] / n:.1f} | "
                  f"{v['false_cases']} | {'yes' if v['same_tree'] else 'NO'} | {err:.3f} | {v['psnr']:.1f} |", flush=True)
sys.exit(1 if bad else 0)
PY
