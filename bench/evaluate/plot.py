#!/usr/bin/python3
"""Figures of the FaCTz evaluation (docs/evaluation.md) from the harness's results.csv.

usage: /usr/bin/python3 plot.py RESULTS.csv OUTDIR [--fields NAME,NAME,...]

Writes, as PNG:
  fig6_<field>.png  PSNR (top) and critical-point violations P1+P2+P3 (bottom) versus bit
                    rate (bits per value = 32 / ratio), one line per compressor (paper Fig. 6)
  fig6.png          the same for the (up to four) largest fields side by side, or --fields
  fig10.png         compression and decompression throughput of FaCTz per mode and coder at
                    the throughput sweep's bound, per field (paper Fig. 10)
  fig_ratio.png     compression ratio versus REL bound per compressor, largest fields
Needs numpy-free matplotlib only (Debian python3-matplotlib); run with /usr/bin/python3.
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {  # compressor -> (label, colour, marker)
    "zstd-3": ("zstd -3 (lossless)", "#7f7f7f", "s"),
    "zstd-19": ("zstd -19 (lossless)", "#404040", "D"),
    "zfp": ("ZFP fixed-accuracy", "#d62728", "^"),
    "factz-none": ("FaCTz mode none (SZ-style)", "#ff7f0e", "v"),
    "factz-B": ("FaCTz-B", "#1f77b4", "o"),
    "factz-S": ("FaCTz-S", "#2ca02c", "P"),
}


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("nx", "ny", "violations", "lost", "spurious", "type_changed", "compressed_bytes"):
            r[k] = int(r[k])
        for k in ("bound", "ratio", "bit_rate", "psnr", "compress_mbps", "decompress_mbps", "max_error"):
            r[k] = float(r[k])
    return rows


def fields_by_size(rows):
    sizes = {}
    for r in rows:
        sizes[r["field"]] = r["nx"] * r["ny"]
    return sorted(sizes, key=lambda f: -sizes[f])


def title(rows, field):
    r = next(r for r in rows if r["field"] == field)
    cps = r["cp_original"]
    return f"{field}\n{r['nx']}x{r['ny']}, {cps} critical points"


def fig6_axes(rows, field, ax_psnr, ax_viol):
    sweep = [r for r in rows if r["field"] == field and r["sweep"] == "bounds"]
    for comp, (label, colour, marker) in STYLE.items():
        pts = sorted((r for r in sweep if r["compressor"] == comp), key=lambda r: r["bit_rate"])
        if not pts:
            continue
        finite = [r for r in pts if math.isfinite(r["psnr"])]
        style = dict(color=colour, marker=marker, markersize=5, linewidth=1.3, label=label)
        if finite:
            ax_psnr.plot([r["bit_rate"] for r in finite], [r["psnr"] for r in finite], **style)
        ax_viol.plot([r["bit_rate"] for r in pts], [r["violations"] for r in pts], **style)
    ax_psnr.set_ylabel("PSNR (dB)")
    ax_viol.set_ylabel("violations (P1+P2+P3)")
    ax_viol.set_xlabel("bit rate (bits/value)")
    ax_viol.set_yscale("symlog", linthresh=1)
    ax_viol.set_ylim(bottom=-0.5)
    for ax in (ax_psnr, ax_viol):
        ax.set_xscale("log", base=2)
        ax.grid(True, which="both", alpha=0.3)


def plot_fig6(rows, fields, path):
    n = len(fields)
    fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 6.5), squeeze=False, sharex="col")
    for k, field in enumerate(fields):
        fig6_axes(rows, field, axes[0][k], axes[1][k])
        axes[0][k].set_title(title(rows, field), fontsize=9)
    handles, labels = axes[1][0].get_legend_handles_labels()
    ncol = min(len(labels), 2 * n if n < 3 else 6)
    rows_needed = math.ceil(len(labels) / max(1, ncol))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.035 * rows_needed + 0.01, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_fig10(rows, fields, path):
    tput = [r for r in rows if r["sweep"] == "throughput"]
    if not tput:
        return False
    configs = []
    for r in tput:
        key = (r["compressor"], r["coder"])
        if key not in configs:
            configs.append(key)
    fields = [f for f in fields if any(r["field"] == f for r in tput)]
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.6 * len(fields) + 4), 4.2))
    width = 0.8 / max(1, len(configs))
    colours = {"factz-none": "#ff7f0e", "factz-B": "#1f77b4", "factz-S": "#2ca02c"}
    for ax, col, name in ((axes[0], "compress_mbps", "compression"), (axes[1], "decompress_mbps", "decompression")):
        for c, (comp, coder) in enumerate(configs):
            ys = []
            for f in fields:
                r = [x for x in tput if x["field"] == f and x["compressor"] == comp and x["coder"] == coder]
                ys.append(r[0][col] if r else 0)
            xs = [k + (c - (len(configs) - 1) / 2) * width for k in range(len(fields))]
            ax.bar(xs, ys, width, color=colours.get(comp, "#999999"), alpha=1.0 if coder == "huffman" else 0.55,
                   hatch="" if coder == "huffman" else "//", edgecolor="black", linewidth=0.4,
                   label=f"{comp.replace('factz-', 'FaCTz-')} {coder}")
        ax.set_xticks(range(len(fields)))
        ax.set_xticklabels(fields, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("MB/s (raw float32 input)")
        ax.set_title(f"{name}, REL {tput[0]['bound']:g}", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_ratio(rows, fields, path):
    n = len(fields)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), squeeze=False)
    for k, field in enumerate(fields):
        ax = axes[0][k]
        sweep = [r for r in rows if r["field"] == field and r["sweep"] == "bounds" and r["bound"] > 0]
        for comp, (label, colour, marker) in STYLE.items():
            pts = sorted((r for r in sweep if r["compressor"] == comp), key=lambda r: r["bound"])
            if pts:
                ax.plot([r["bound"] for r in pts], [r["ratio"] for r in pts], color=colour, marker=marker,
                        markersize=4, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("REL error bound")
        ax.set_ylabel("compression ratio")
        ax.set_title(title(rows, field), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    rows = load(argv[1])
    out = argv[2]
    os.makedirs(out, exist_ok=True)
    if not rows:
        sys.stderr.write("plot.py: no rows in %s\n" % argv[1])
        return 1
    ordered = fields_by_size(rows)
    chosen = ordered[:4]
    if "--fields" in argv:
        chosen = argv[argv.index("--fields") + 1].split(",")
    written = []
    for field in ordered:
        p = os.path.join(out, f"fig6_{field}.png")
        plot_fig6(rows, [field], p)
        written.append(p)
    plot_fig6(rows, chosen, os.path.join(out, "fig6.png"))
    written.append(os.path.join(out, "fig6.png"))
    if plot_fig10(rows, ordered, os.path.join(out, "fig10.png")):
        written.append(os.path.join(out, "fig10.png"))
    plot_ratio(rows, chosen, os.path.join(out, "fig_ratio.png"))
    written.append(os.path.join(out, "fig_ratio.png"))
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
