#!/usr/bin/env python3
"""ANS against Huffman at the command line (issue 20): whole `factz decompress` processes.

For each field and mode, compresses with --coder ans and --coder huffman (REL 1e-2, default
options otherwise), then times REPEAT runs of
`factz decompress -z S.fz -o u.f32 -o v.f32 -x omp=THREADS` per stream from Python
(subprocess.run, wall time), the streams of a field interleaved run by run, and prints the
medians and the ANS / Huffman ratio as a Markdown table.

    bench/cli_decode_coders.py [--build BUILD] [--repeat 21] [--threads 2] [U.f32 ...]

Fields default to the ocean-current and wind fields of ../shared/data; any NAME_u_NXxNY.f32
(with its _v_ twin) may be given.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def field_of(u):
    name = os.path.basename(u)[: -len(".f32")]
    dims = name.rsplit("_", 1)[1]
    nx, ny = dims.split("x")
    return name.split("_u_")[0], u, u.replace("_u_", "_v_"), nx, ny


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("fields", nargs="*")
    a = ap.parse_args()
    data = os.path.join(ROOT, "..", "shared", "data")
    fields = a.fields or [os.path.join(data, f) for f in
                          ("cmems_glob1deg_cur_u_360x171.f32", "gfs10m_wind_2014_u_360x181.f32")]
    factz = os.path.join(a.build, "factz")
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    print("| field | mode | ANS s | Huffman s | ANS / Huffman |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in fields:
            if not os.path.exists(path):
                print(f"skipping {path}: not found", file=sys.stderr)
                continue
            name, u, v, nx, ny = field_of(path)
            streams = {}
            for mode in ("speculative", "block"):
                for coder in ("ans", "huffman"):
                    z = os.path.join(tmp, f"{name}_{mode}_{coder}.fz")
                    subprocess.run([factz, "compress", "-2", nx, ny, "-i", u, "-i", v, "-z", z, "--mode", mode,
                                    "--coder", coder, "-M", "REL", "1e-2"], check=True, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    streams[(mode, coder)] = z
            times = {k: [] for k in streams}
            for _ in range(a.repeat):
                for k, z in streams.items():
                    cmd = [factz, "decompress", "-z", z, "-o", os.path.join(tmp, "u.f32"), "-o",
                           os.path.join(tmp, "v.f32"), "-x", f"omp={a.threads}"]
                    t0 = time.perf_counter()
                    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[k].append(time.perf_counter() - t0)
            for mode in ("speculative", "block"):
                ans = statistics.median(times[(mode, "ans")])
                huf = statistics.median(times[(mode, "huffman")])
                print(f"| {name} | {mode} | {ans:.5f} | {huf:.5f} | {ans / huf:.3f} |")


if __name__ == "__main__":
    main()
