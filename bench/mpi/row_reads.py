#!/usr/bin/env python3
"""Peak memory and time of `mpirun -np R factz compress|verify --blocks` on a netCDF pair and on
.npy files, for one or more builds, alternated (docs/benchmarks.md, "Under mpirun, each rank
reads its rows").

Makes (once, in FOLDER) a 4096^2 pair of smooth random float32 planes (FFT-filtered noise,
spectrum k^(-11/6)) as raw files, as .npy files and as a deflated, chunked netCDF-4 file
(xarray + h5netcdf: gzip 4, chunks of 256 x 256), and a decompressed netCDF file to verify
against. Each rank runs under /usr/bin/time (its own output file): the largest rank's peak RSS and the
whole process's seconds; medians over ROUNDS. input_values_max is compress's own count.

    python3 bench/mpi/row_reads.py FOLDER ROUNDS OLD/factz NEW/factz
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys

import numpy as np


def make(folder):
    n = 4096
    if (folder / "big.nc").exists():
        return
    import xarray as xr
    rng = np.random.default_rng(7)

    def smooth():
        f = np.fft.rfft2(rng.standard_normal((n, n)).astype(np.float32))
        k = np.sqrt(np.fft.rfftfreq(n)[None, :] ** 2 + np.fft.fftfreq(n)[:, None] ** 2) + 1e-3
        a = np.fft.irfft2(f * (k ** (-11 / 6)).astype(np.float32), s=(n, n)).astype(np.float32)
        return a / np.abs(a).max()

    u, v = smooth(), smooth()
    np.save(folder / "u.npy", u)
    np.save(folder / "v.npy", v)
    ds = xr.Dataset({"u": (("y", "x"), u), "v": (("y", "x"), v)})
    enc = {k: {"compression": "gzip", "compression_opts": 4, "chunksizes": (256, 256)} for k in ("u", "v")}
    ds.to_netcdf(folder / "big.nc", engine="h5netcdf", encoding=enc)


def timed(cmd, ranks):
    mpirun = os.environ.get("FACTZ_MPIRUN", "mpirun")
    extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    # Each rank's /usr/bin/time writes its own file (mpirun may forward a rank's last lines late).
    rss_files = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"row_reads_rss.{os.getpid()}"
    wrap = f'exec /usr/bin/time -o {rss_files}.$OMPI_COMM_WORLD_RANK -f %M "$@"'
    full = [mpirun, *extra, "--oversubscribe", "-np", str(ranks), "sh", "-c", wrap, "sh"] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1")
    import time
    t0 = time.perf_counter()
    p = subprocess.run([str(c) for c in full], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{full} failed:\n{p.stderr}")
    rss = 0
    for r in range(ranks):
        path = pathlib.Path(f"{rss_files}.{r}")
        rss = max(rss, int(path.read_text().split()[-1]) / 1024)
        path.unlink()
    values = None
    if "--json" in cmd:
        values = json.loads(p.stdout[p.stdout.index("{"):]).get("input_values_max")  # None: a build before it
    return seconds, rss, values


def main():
    folder = pathlib.Path(sys.argv[1])
    rounds = int(sys.argv[2])
    builds = [os.path.abspath(b) for b in sys.argv[3:]]
    folder.mkdir(parents=True, exist_ok=True)
    make(folder)
    f = str(folder)
    dec = folder / "d.nc"
    if not dec.exists():
        subprocess.run([builds[-1], "compress", "-i", f"{f}/big.nc:u", "-i", f"{f}/big.nc:v", "-z", folder / "r.fzmb",
                        "--blocks", "4", "4", "-M", "REL", "1e-2"], check=True, capture_output=True)
        subprocess.run([builds[-1], "decompress", "-z", folder / "r.fzmb", "-o", f"{dec}:u", "-o", f"{dec}:v"],
                       check=True, capture_output=True)
    cases = {
        "compress netCDF, 8 x 8 blocks": ["compress", "-i", f"{f}/big.nc:u", "-i", f"{f}/big.nc:v", "-z",
                                          folder / "t.fzmb", "--blocks", "8", "8", "-M", "REL", "1e-2", "--json"],
        "compress .npy, 8 x 8 blocks": ["compress", "-i", folder / "u.npy", "-i", folder / "v.npy", "-z",
                                        folder / "t.fzmb", "--blocks", "8", "8", "-M", "REL", "1e-2", "--json"],
        "verify netCDF, 8 x 8 blocks": ["verify", "-i", f"{f}/big.nc:u", "-i", f"{f}/big.nc:v", "-d", f"{dec}:u",
                                        "-d", f"{dec}:v", "--blocks", "8", "8"],
    }
    for ranks in (2,):
        for name, args in cases.items():
            got = {b: [] for b in builds}
            for _ in range(rounds):
                for b in builds:
                    got[b].append(timed([b] + args, ranks))
            for b in builds:
                s = statistics.median(r[0] for r in got[b])
                m = statistics.median(r[1] for r in got[b])
                values = got[b][0][2]
                print(f"{ranks} ranks | {name} | {b} | {s:.2f} s | peak RSS of a rank {m:.0f} MiB | "
                      f"input_values_max {values}")


if __name__ == "__main__":
    main()
