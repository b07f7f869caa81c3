"""Overhead of the Python and HDF5 paths against the C++ API (the factz CLI's own timer),
and the ratio cost of HDF5 chunking. Usage (from the repository root, after building):

    OMP_WAIT_POLICY=passive PYTHONPATH=build/python HDF5_PLUGIN_PATH=build/hdf5/plugin \\
        /usr/bin/python3 python/bench/bench_bindings.py build/factz /work/shared/data

Prints one markdown table row per (field, mode, path). Times are medians of 5 runs."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

import factz

FIELDS = [("gfs10m_wind_2014", 360, 181), ("foam_shearlayer_t0.75", 512, 512)]
REPS = 5


def median_time(fn):
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(cli, data):
    tmp = tempfile.mkdtemp()
    print(f"default coder: {factz.DEFAULT_CODER}; REL 1e-2; medians of {REPS} runs")
    print("| field | mode | path | chunks | bytes | ratio | compress s | decompress s |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for name, nx, ny in FIELDS:
        up, vp = (os.path.join(data, f"{name}_{c}_{nx}x{ny}.f32") for c in "uv")
        u = np.fromfile(up, "<f4").reshape(ny, nx)
        v = np.fromfile(vp, "<f4").reshape(ny, nx)
        raw = u.nbytes + v.nbytes
        for mode in ("speculative", "block"):
            runs = []
            for _ in range(REPS):
                out = subprocess.run([cli, "compress", "-2", str(nx), str(ny), "-i", up, "-i", vp, "-z",
                                      os.path.join(tmp, "s.fz"), "--mode", mode, "--json"],
                                     check=True, capture_output=True, text=True)
                runs.append(json.loads(out.stdout))
            dec = []
            for _ in range(REPS):
                out = subprocess.run([cli, "decompress", "-z", os.path.join(tmp, "s.fz"), "-o",
                                      os.path.join(tmp, "u2"), "-o", os.path.join(tmp, "v2"), "--json"],
                                     check=True, capture_output=True, text=True)
                dec.append(json.loads(out.stdout)["decompress_seconds"])
            size = runs[0]["compressed_bytes"]
            print(f"| {name} | {mode} | C++ (CLI timer) | - | {size} | {raw / size:.2f} | "
                  f"{statistics.median(r['compress_seconds'] for r in runs):.4f} | {statistics.median(dec):.4f} |")
            tc, buf = median_time(lambda: factz.compress(u, v, mode=mode))
            td, _ = median_time(lambda: factz.decompress(buf))
            print(f"| {name} | {mode} | Python | - | {len(buf)} | {raw / len(buf):.2f} | {tc:.4f} | {td:.4f} |")
            w = np.stack([u, v])
            for chunks in ((2, ny, nx), (2, 128, 128), (2, 64, 64)):
                path = os.path.join(tmp, "w.h5")

                def write():
                    with h5py.File(path, "w") as f:
                        f.create_dataset("w", data=w, chunks=chunks, dcpl=factz.hdf5_dcpl(mode))

                def read():
                    with h5py.File(path, "r") as f:
                        return f["w"][...]

                tw, _ = median_time(write)
                tr, back = median_time(read)
                with h5py.File(path, "r") as f:
                    stored = f["w"].id.get_storage_size()
                print(f"| {name} | {mode} | HDF5 (h5py) | {chunks[1]}x{chunks[2]} | {stored} | "
                      f"{raw / stored:.2f} | {tw:.4f} | {tr:.4f} |")
                assert back.shape == w.shape


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
