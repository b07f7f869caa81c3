#!/usr/bin/env python3
"""What the source record (section 12) costs in a stream: a scalar field compressed from a
netCDF variable against the same values from a raw file, on two grids, with the record's
stored and raw bytes (`factz info`):

  python3 bench/source_record_sizes.py --factz build/factz [--rel 1e-2]

- era: a 721 x 1440 grid with float32 latitude / longitude every 0.25 degrees (ERA5's), a
  smooth synthetic field;
- pop: ../shared/data/pop_ocean_temp_320x384.f32 on float64 coordinates from numpy.linspace
  (no regular steps in binary), when ../shared is there.

The netCDF-4 files are written by ncgen (netcdf-bin), never by FaCTz.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def body(values):
    return ", ".join(repr(float(x)) for x in values)


def make(tmp, name, field, lat, lon, ctype):
    ny, nx = len(lat), len(lon)
    cdl = (f"netcdf {name} {{\ndimensions:\n  time = UNLIMITED ; lat = {ny} ; lon = {nx} ;\nvariables:\n"
           f"  double time(time) ; time:units = \"hours since 1900-01-01\" ;\n"
           f"  {ctype} lat(lat) ; lat:units = \"degrees_north\" ;\n  {ctype} lon(lon) ; lon:units = \"degrees_east\" ;\n"
           f"  float T(time, lat, lon) ; T:units = \"K\" ;\n  :title = \"{name}\" ;\ndata:\n time = 0 ;\n"
           f" lat = {body(lat)} ;\n lon = {body(lon)} ;\n T = {body(field.ravel())} ;\n}}\n")
    with open(os.path.join(tmp, name + ".cdl"), "w") as f:
        f.write(cdl)
    nc = os.path.join(tmp, name + ".nc")
    subprocess.run(["ncgen", "-k", "nc4", "-o", nc, os.path.join(tmp, name + ".cdl")], check=True)
    raw = os.path.join(tmp, name + ".f32")
    field.astype("<f4").tofile(raw)
    return nc, raw


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--factz", required=True)
    ap.add_argument("--rel", type=float, default=1e-2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    cases = []
    y, x = np.meshgrid(np.arange(721), np.arange(1440), indexing="ij")
    era = (np.sin(x / 50.0) + np.cos(y / 40.0)).astype(np.float32)
    cases.append(("era 1440x721, float32 0.25-degree coordinates",
                  make(tmp, "era", era, np.arange(90, -90.25, -0.25), np.arange(0, 360, 0.25), "float"), era.shape))
    pop_path = os.path.join(HERE, "..", "..", "shared", "data", "pop_ocean_temp_320x384.f32")
    if os.path.exists(pop_path):
        pop = np.fromfile(pop_path, dtype="<f4").reshape(384, 320)
        cases.append(("pop 320x384, float64 linspace coordinates",
                      make(tmp, "pop", pop, np.linspace(-79, 89, 384), np.linspace(0, 359, 320), "double"), pop.shape))
    print("| field | mode | from the raw file, bytes | from the variable, bytes | source section stored / raw bytes |")
    print("|---|---|---|---|---|")
    for label, (nc, raw), (ny, nx) in cases:
        for mode in ("none", "contour-tree"):
            sizes = []
            for args in (["-2", str(nx), str(ny), "-i", raw], ["-i", nc + ":T"]):
                z = os.path.join(tmp, "s.fz")
                r = subprocess.run([a.factz, "compress", "--scalar"] + args + ["-z", z, "--mode", mode, "-M", "REL",
                                    repr(a.rel), "--json"], capture_output=True, text=True, check=True)
                sizes.append(json.loads(r.stdout)["compressed_bytes"])
            info = subprocess.run([a.factz, "info", "-z", z], capture_output=True, text=True, check=True).stdout
            m = re.search(r"^\s+12\s+source\s+(\d+)\s+(\d+)", info, re.M)
            section = f"{m.group(1)} / {m.group(2)}" if m else "-"
            print(f"| {label} | {mode} | {sizes[0]} | {sizes[1]} | {section} |")


if __name__ == "__main__":
    main()
