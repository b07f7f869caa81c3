#!/usr/bin/env python3
"""Ends `mpirun -np 2 factz decompress` of a multi-block 2048^2 field while the ranks write its
planes, over and over, and counts what is left (docs/benchmarks.md, "Users' files: packed bounds
with a negative scale, HDF5 fill values, collective writes").

Each run: a.f32 holds "old bytes", b.f32 is absent; the loop polls the folder until a hidden
temporary (.NAME.factz-PID-N.tmp) or an OpenMPI lock-test file (NAME.locktest.RANK) appears,
stops the ranks (SIGSTOP), sends SIGTERM and SIGCONT. It reports the runs caught, those that
left a temporary or a lock-test file, and outputs that are neither the old bytes nor a whole
plane (by size: a plane written in place is sized whole before it is filled, so only the
temporaries can show a partial write).

    python3 bench/mpi/interrupted_writes.py build/factz 20
"""
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import numpy as np


def main():
    factz = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    mpirun = os.environ.get("FACTZ_MPIRUN", "mpirun")
    extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="factz-interrupted-"))
    n = 2048
    y, x = np.mgrid[0:n, 0:n]
    (np.sin(0.01 * x) * np.cos(0.013 * y)).astype("<f4").tofile(tmp / "u.f32")
    (np.cos(0.011 * x) * np.sin(0.007 * y)).astype("<f4").tofile(tmp / "v.f32")
    subprocess.run([factz, "compress", "-2", str(n), str(n), "-i", tmp / "u.f32", "-i", tmp / "v.f32", "-z",
                    tmp / "z.fzmb", "--blocks", "2", "2", "--mode", "none"], check=True, capture_output=True)
    a, b = tmp / "a.f32", tmp / "b.f32"

    def names():
        return [p.name for p in tmp.iterdir()]

    def ranks():  # the factz processes of this run: their command lines name a.f32
        pids = []
        for d in pathlib.Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    argv = (d / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv and argv[0] == factz.encode() and str(a).encode() in argv:
                    pids.append(int(d.name))
        return pids

    caught = lock = left_tmp = partial = 0
    for _ in range(runs):
        a.write_bytes(b"old bytes")
        b.unlink(missing_ok=True)
        p = subprocess.Popen([mpirun, *extra, "--oversubscribe", "-np", "2", factz, "decompress", "-z",
                              str(tmp / "z.fzmb"), "-o", str(a), "-o", str(b)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while p.poll() is None:
            if any(".factz-" in s or ".locktest." in s for s in names()):
                pids = ranks()
                for q in pids:
                    os.kill(q, signal.SIGSTOP)
                caught += bool(pids)
                for q in pids:
                    os.kill(q, signal.SIGTERM)
                for q in pids:
                    os.kill(q, signal.SIGCONT)
                break
        p.wait()
        left = names()
        lock += any(".locktest." in s for s in left)
        left_tmp += any(s.endswith(".tmp") for s in left)
        plane = n * n * 4
        partial += not (a.read_bytes() == b"old bytes" or a.stat().st_size == plane) or (
            b.exists() and b.stat().st_size != plane)
        for s in left:
            if ".locktest." in s or s.endswith(".tmp"):
                (tmp / s).unlink()
    print(f"runs {runs} caught {caught} locktest-left {lock} tmp-left {left_tmp} partial-outputs {partial}")
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
