#!/usr/bin/env python3
"""Whole-process times of SZ3, FaCTz-B and FaCTz-S, interleaved: compression on one thread,
then decompression (SZ3 serial, FaCTz-S with -x omp=2, as issue 20's acceptance states).

bench/sz3_compare.sh times REPEAT consecutive runs of each command; on a virtual machine
the first touches of fresh memory are slow, and a command run right after itself finds its
pages warmer than one run after another program. Here every round runs SZ3 (u then v, ABS
eb each, as a user of SZ3 would), then FaCTz-B, then FaCTz-S (factz compress -x omp=1), so
each sees what the others left, then SZ3's two decompressions and FaCTz-S's one; the medians
over the rounds and the same-run speed ratios are printed. Processes are timed directly (no
shell around them: a shell, an `rm` or a `date` per command costs milliseconds here, which
on the 0.5 MB fields is a large part of a run). eb = REL x (max over u and v - min over u and v), factz's REL; factz gets it as
ABS eb. Files should be in the page cache (the first round warms them).

  python3 bench/interleaved_sz3.py --sz3 SZ3 [--build DIR] [--rounds N] [--rel R ...]
      [--field NAME:NX:NY:U:V ...] [--also DIR]

--decompress-only: the streams are written once, untimed (the compression columns read nan),
and the rounds time the decompressions only.

--also DIR: a second factz build decompresses the same FaCTz-S stream in every round, after
an SZ3 decompression of its own, the two (SZ3, factz) pairs in alternating order from round
to round; a second table gives both builds' decompression medians against the SZ3 runs'.

Default field: the 4096^2 turbulence /tmp/factz_fields/dt4096_{u,v}_4096x4096.f32
(bench/evaluate's dt_synth 4096 4096 7 makes it). SZ3 is built from its public source
outside the repository (docs/benchmarks.md says how).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sz3", required=True, help="sz3 binary")
    ap.add_argument("--build", default="build", help="factz build directory (default build)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    ap.add_argument("--rel", type=float, nargs="+", default=[1e-2, 1e-3, 1e-4])
    ap.add_argument("--field", action="append", default=[], help="NAME:NX:NY:U:V (repeatable)")
    ap.add_argument("--also", help="a second factz build directory whose decompression is timed beside")
    ap.add_argument("--decompress-only", action="store_true",
                    help="compress once (untimed), then time only the decompressions round by round")
    a = ap.parse_args()
    rows_also = []
    factz = os.path.join(a.build, "factz")
    fields = a.field or [
        "dt4096:4096:4096:/tmp/factz_fields/dt4096_u_4096x4096.f32:/tmp/factz_fields/dt4096_v_4096x4096.f32"
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    print("| field | REL | SZ3 s | FaCTz-B s | FaCTz-S s | SZ3 MB/s | B MB/s | S MB/s | B / SZ3 speed | S / SZ3 speed "
          "| SZ3 decompress s | S decompress s (2 threads) | S / SZ3 decompress speed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in fields:
        name, nx, ny, u, v = spec.split(":")
        cu, cv = np.fromfile(u, "<f4"), np.fromfile(v, "<f4")
        if cu.size != int(nx) * int(ny) or cv.size != cu.size:
            sys.exit(f"{name}: the files do not hold {nx} x {ny} floats")
        lo, hi = min(cu.min(), cv.min()), max(cu.max(), cv.max())
        raw = cu.nbytes + cv.nbytes
        tmp = f"/tmp/interleaved_sz3_{os.getpid()}"
        for rel in a.rel:
            eb = repr(float(rel * (float(hi) - float(lo))))
            grid = ["-2", nx, ny]
            cmds = {
                "sz3": [[a.sz3, "-f", "-i", u, "-z", tmp + "_u.sz", *grid, "-M", "ABS", eb],
                        [a.sz3, "-f", "-i", v, "-z", tmp + "_v.sz", *grid, "-M", "ABS", eb]],
                "B": [[factz, "compress", *grid, "-i", u, "-i", v, "-z", tmp + "_b.fz", "-M", "ABS", eb,
                       "--mode", "block", "-x", "omp=1"]],
                "S": [[factz, "compress", *grid, "-i", u, "-i", v, "-z", tmp + "_s.fz", "-M", "ABS", eb,
                       "--mode", "speculative", "-x", "omp=1"]],
                "sz3-d": [[a.sz3, "-f", "-z", tmp + "_u.sz", "-o", tmp + "_u.out", *grid, "-M", "ABS", eb],
                          [a.sz3, "-f", "-z", tmp + "_v.sz", "-o", tmp + "_v.out", *grid, "-M", "ABS", eb]],
                "S-d": [[factz, "decompress", "-z", tmp + "_s.fz", "-o", tmp + "_su.out", "-o", tmp + "_sv.out",
                         "-x", "omp=2"]],
            }
            order = list(cmds)
            if a.also:
                cmds["sz3-d2"] = cmds["sz3-d"]
                cmds["S2-d"] = [[os.path.join(a.also, "factz"), *cmds["S-d"][0][1:]]]
            times = {k: [] for k in cmds}
            if a.decompress_only:
                for k in ("sz3", "S"):
                    for c in cmds[k]:
                        subprocess.run(c, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[k].append(float("nan"))
                times["B"].append(float("nan"))
            for r in range(a.rounds):
                keys = order + (["sz3-d2", "S2-d"] if a.also else [])
                if a.also and r % 2:  # the second build's pair first in odd rounds
                    keys = order[:-2] + ["sz3-d2", "S2-d"] + order[-2:]
                if a.decompress_only:
                    keys = [k for k in keys if k.endswith("-d") or k.endswith("-d2")]
                for k in keys:
                    cs = cmds[k]
                    t0 = time.perf_counter()
                    for c in cs:
                        subprocess.run(c, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[k].append(time.perf_counter() - t0)
            m = {k: statistics.median(t) for k, t in times.items()}
            print(f"| {name} | {rel:g} | {m['sz3']:.3f} | {m['B']:.3f} | {m['S']:.3f} | {raw / 1e6 / m['sz3']:.1f} "
                  f"| {raw / 1e6 / m['B']:.1f} | {raw / 1e6 / m['S']:.1f} | {m['sz3'] / m['B']:.2f} "
                  f"| {m['sz3'] / m['S']:.2f} | {m['sz3-d']:.4f} | {m['S-d']:.4f} | {m['sz3-d'] / m['S-d']:.2f} |",
                  flush=True)
            if a.also:
                d = statistics.median(times["sz3-d"] + times["sz3-d2"])
                rows_also.append(f"| {name} | {rel:g} | {d:.4f} | {m['S-d']:.4f} | {m['S2-d']:.4f} "
                                 f"| {d / m['S-d']:.2f} | {d / m['S2-d']:.2f} | {m['S-d'] / m['S2-d']:.3f} |")
            for suffix in ("_u.sz", "_v.sz", "_b.fz", "_s.fz", "_u.out", "_v.out", "_su.out", "_sv.out"):
                if os.path.exists(tmp + suffix):
                    os.remove(tmp + suffix)

    if rows_also:
        print(f"\nDecompression, {a.build} (A) and {a.also} (B), two threads, medians; SZ3: both pairs' runs")
        print("| field | REL | SZ3 s | A s | B s | SZ3 / A | SZ3 / B | A / B |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows_also:
            print(row)


if __name__ == "__main__":
    main()
