#!/usr/bin/env python3
"""A / B of factz binaries as whole processes: compress, then decompress the stream just
written, binary after binary in every round (interleaved, so that each sees what the others
left), on 2D or 3D fields. Prints per case and binary the medians of the wall time of the
process, the in-process seconds (`--json`'s compress_seconds / decompress_seconds) and the
page faults the process took (minor faults, from wait4's resource usage), the ratios
first / last, and whether every binary wrote the same stream.

    python3 bench/ab_process.py --bins A,B [--rounds 21] [--rel 1e-2 ...] [--mode speculative]
        [--threads 1] [--dthreads 2] [--stages] --field NAME:NX:NY:U:V | NAME:NX:NY:NZ:U:V:W ...

--stages: also the medians of every compression stage the processes report (`--json`'s
stage_*_seconds), one line per case and binary.

Example (the 0.5 MB wind field of tests/data, one thread compressing, two decompressing):

    python3 bench/ab_process.py --bins build-a/factz,build-b/factz --rel 1e-2 \\
        --field wind:360:181:tests/data/gfs10m_wind_2014_u_360x181.f32:tests/data/gfs10m_wind_2014_v_360x181.f32
"""
import argparse
import filecmp
import json
import os
import statistics
import subprocess
import tempfile
import time


def timed(cmd, env):
    """(wall seconds, minor page faults, parsed --json stdout) of one process; its resource
    usage comes from wait4 (outputs go to files: communicate() would reap the child)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.read().decode()}")
        return wall, usage.ru_minflt, json.loads(out.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bins", required=True, help="comma-separated factz binaries")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--rel", nargs="+", default=["1e-2"])
    ap.add_argument("--mode", default="speculative")
    ap.add_argument("--threads", default="1", help="-x omp= for compress (default 1)")
    ap.add_argument("--dthreads", default="2", help="-x omp= for decompress (default 2)")
    ap.add_argument("--field", action="append", required=True)
    ap.add_argument("--stages", action="store_true", help="print the compression stages' medians too")
    a = ap.parse_args()
    bins = a.bins.split(",")
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    scratch = tempfile.mkdtemp(prefix="ab_process_")
    print(f"| field | REL | mode | step | " + " | ".join(f"bin {i} wall ms / in-process ms / faults" for i in range(len(bins)))
          + " | wall first / last | same stream |")
    print("|---|---|---|---|" + "---|" * len(bins) + "---|---|")
    for spec in a.field:
        parts = spec.split(":")
        name = parts[0]
        dims = parts[1:3] if len(parts) == 5 else parts[1:4]
        planes = parts[len(dims) + 1:]
        flag = "-2" if len(dims) == 2 else "-3"
        for rel in a.rel:
            res = {(i, s): [] for i in range(len(bins)) for s in ("compress", "decompress")}
            stages = {i: [] for i in range(len(bins))}
            streams = [f"{scratch}/s{i}.fz" for i in range(len(bins))]
            for _ in range(a.rounds):
                for i, b in enumerate(bins):
                    cmd = [b, "compress", flag, *dims] + sum([["-i", p] for p in planes], [])
                    cmd += ["-z", streams[i], "-M", "REL", rel, "--mode", a.mode, "-x", f"omp={a.threads}", "--json"]
                    wall, faults, d = timed(cmd, env)
                    res[(i, "compress")].append((wall, d["compress_seconds"], faults))
                    stages[i].append({k: v for k, v in d.items() if k.startswith("stage_")})
                    cmd = [b, "decompress", "-z", streams[i]] + sum(
                        [["-o", f"{scratch}/o{i}_{k}.f32"] for k in range(len(planes))], [])
                    cmd += ["-x", f"omp={a.dthreads}", "--json"]
                    wall, faults, d = timed(cmd, env)
                    res[(i, "decompress")].append((wall, d["decompress_seconds"], faults))
            same = all(filecmp.cmp(streams[0], s, shallow=False) for s in streams[1:])
            for step in ("compress", "decompress"):
                med = [[statistics.median(x[k] for x in res[(i, step)]) for k in range(3)] for i in range(len(bins))]
                cells = " | ".join(f"{m[0] * 1e3:.1f} / {m[1] * 1e3:.1f} / {m[2]:.0f}" for m in med)
                print(f"| {name} | {rel} | {a.mode} | {step} | {cells} | {med[0][0] / med[-1][0]:.3f} | {same} |",
                      flush=True)
            for i in range(len(bins)) if a.stages else ():
                keys = stages[i][0].keys()
                cells = ", ".join(f"{k[len('stage_'):-len('_seconds')].strip()} "
                                  f"{statistics.median(d[k] for d in stages[i]) * 1e3:.1f}" for k in keys)
                print(f"  stages (ms), {name} {rel} bin {i}: {cells}", flush=True)


if __name__ == "__main__":
    main()
