#!/usr/bin/env python3
"""Stream sizes of a packed netCDF variable pair (int16 with scale_factor / add_offset), read
unpacked by `factz compress -i FILE.nc:U -i FILE.nc:V`, at several REL bounds, beside the
packed file's own bytes per value and an estimate of what a lossless code of the integers
would take (mode none at ABS 0.5 on the integers written as float32: its codes are the
integers' Lorenzo residuals, and it decodes them exactly).

  python3 bench/packed_sizes.py --factz build/factz --scale 0.01 U.f32 V.f32 NX NY [--rel 1e-2 1e-3 ...]
      [--abs 0.0049 ...]

Every stream is decompressed and re-packed (round((x - offset) / scale)); the column
"integers re-packed" counts the integers that come back. With h5py, every stream is also
decompressed with `factz decompress --repack` into a netCDF-4 file, whose int16 values h5py
reads as stored ("--repack integers": those equal to the file's).

U.f32 and V.f32 are raw float32 fields, packed here as round((x - offset) / scale) in int16
(offset: the middle of the range, so that the integers fit); the netCDF-3 file is written by
ncgen (netcdf-bin), never by FaCTz.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import h5py
except ImportError:  # the --repack column is left out
    h5py = None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--factz", required=True)
    ap.add_argument("--scale", type=float, required=True)
    ap.add_argument("--rel", type=float, nargs="+", default=[1e-2, 1e-3, 1e-4, 1e-5])
    ap.add_argument("--abs", type=float, nargs="*", default=[], help="absolute bounds (after the REL ones)")
    ap.add_argument("u")
    ap.add_argument("v")
    ap.add_argument("nx", type=int)
    ap.add_argument("ny", type=int)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    x = [np.fromfile(p, dtype="<f4").astype(np.float64) for p in (a.u, a.v)]
    offset = float(np.float32((min(c.min() for c in x) + max(c.max() for c in x)) / 2))
    packed = [np.round((c - offset) / a.scale) for c in x]
    if any(np.abs(p).max() > 32766 for p in packed):
        sys.exit("the packed integers do not fit in int16 at this scale")
    packed = [p.astype(np.int16) for p in packed]
    body = lambda p: ", ".join(str(int(v)) for v in p)
    cdl = (f"netcdf packed {{\ndimensions:\n  lat = {a.ny} ;\n  lon = {a.nx} ;\nvariables:\n"
           + "".join(f"  short {n}(lat, lon) ;\n    {n}:scale_factor = {a.scale!r}f ;\n    {n}:add_offset = {offset!r}f ;\n"
                     for n in ("U", "V"))
           + f"data:\n  U = {body(packed[0])} ;\n  V = {body(packed[1])} ;\n}}\n")
    with open(os.path.join(tmp, "p.cdl"), "w") as f:
        f.write(cdl)
    subprocess.run(["ncgen", "-k", "classic", "-o", os.path.join(tmp, "p.nc"), os.path.join(tmp, "p.cdl")], check=True)
    n = a.nx * a.ny
    raw32 = 2 * n * 4
    def compress(args):
        r = subprocess.run([a.factz, "compress"] + args + ["-z", os.path.join(tmp, "s.fz"), "--json"],
                           capture_output=True, text=True, check=True)
        return json.loads(r.stdout)["compressed_bytes"]
    for k, p in enumerate(packed):
        p.astype(np.float32).tofile(os.path.join(tmp, f"k{k}.f32"))
    lossless = compress(["-2", str(a.nx), str(a.ny), "-i", os.path.join(tmp, "k0.f32"), "-i", os.path.join(tmp, "k1.f32"),
                         "-M", "ABS", "0.5", "--mode", "none"])
    print(f"packed file: {os.path.getsize(os.path.join(tmp, 'p.nc'))} bytes (int16: {2 * n * 2} bytes of values); "
          f"offset {offset!r}, scale {a.scale!r}")
    print("| bound | eb | eb / (scale / 2) | mode | stream bytes | ratio to float32 | ratio to the int16 values "
          "| integers re-packed | --repack integers | lossless integers (estimate) bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rng = max(c.max() for c in x) - min(c.min() for c in x)
    nc = os.path.join(tmp, "p.nc")
    bounds = [("REL", r, r * rng) for r in a.rel] + [("ABS", e, e) for e in a.abs]
    for kind, value, eb in bounds:
        for mode in ("speculative", "block"):
            b = compress(["-i", nc + ":U", "-i", nc + ":V", "-M", kind, repr(value), "--mode", mode])
            outs = [os.path.join(tmp, f"d{k}.f32") for k in range(2)]
            subprocess.run([a.factz, "decompress", "-z", os.path.join(tmp, "s.fz"), "-o", outs[0], "-o", outs[1]],
                           capture_output=True, check=True)
            scale32, offset32 = float(np.float32(a.scale)), float(np.float32(offset))
            back = sum(int(np.sum(np.round((np.fromfile(o, dtype="<f4").astype(np.float64) - offset32) / scale32)
                                  == p.astype(np.float64)))
                       for o, p in zip(outs, packed))
            repacked = "-"
            if h5py is not None:
                out = os.path.join(tmp, "r.nc")
                subprocess.run([a.factz, "decompress", "-z", os.path.join(tmp, "s.fz"), "-o", out + ":U", "-o",
                                out + ":V", "--repack"], capture_output=True, check=True)
                with h5py.File(out, "r") as f:
                    same = sum(int(np.sum(f[name][()].ravel() == p)) for name, p in zip(("U", "V"), packed))
                    kinds = {str(f[name].dtype) for name in ("U", "V")}
                repacked = f"{same} of {2 * n} ({'/'.join(sorted(kinds))})"
            print(f"| {kind} {value:g} | {eb:.4g} | {eb / (a.scale / 2):.3g} | {mode} | {b} | {raw32 / b:.2f} "
                  f"| {2 * n * 2 / b:.2f} | {back} of {2 * n} | {repacked} | {lossless} |")


if __name__ == "__main__":
    main()
