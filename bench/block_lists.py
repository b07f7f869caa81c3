#!/usr/bin/env python3
"""Where FaCTz-B's bytes go beyond mode none's, and what its exact lists would cost coded
against the lattice (issue 20's block-mode ratio row; docs/benchmarks.md).

For every field and REL bound: the sizes of `factz compress --mode none` and `--mode block`
and of the block stream's sections (tile ids, codes, exact index, exact values), read from the
stream's section table (docs/format.md). Block mode's codes are mode none's wherever the tile
keeps the full bound; the lists carry the vertices that miss their tile's bound.

The last columns estimate one alternative layout, not implemented: each listed value as the
vertex's own lattice value r = round(x / s) s (s its tile's step, known to the decoder from
the codes) plus k g, with g = s / 2^d the listed value's grid (a power of two below s) and the
pair (d, k) entropy-coded. The estimate is the order-0 entropy of the (d, k) pairs over the
stream's listed values (no table, no adaptation cost: a lower bound for an entropy coder on
these values), g taken from the lowest set bit of the listed value; the index section is
left as it is.

  python3 bench/block_lists.py FACTZ DATA_DIR [REL ...]

DATA_DIR holds ../shared/data's 2D vector fields (NAME_u_NXxNY.f32, NAME_v_NXxNY.f32). Needs
the zstd command (the zstd stage's frames are read back with `zstd -dc`).
"""
import collections
import math
import os
import re
import struct
import subprocess
import sys
import tempfile


def table(stream):
    """[(id, flags, offset, stored size)] of a FaCTz stream's sections, in either container
    (docs/format.md: the classic one of versions 1 to 17, the compact one of version 18)."""
    if struct.unpack_from("<H", stream, 4)[0] != 18:
        count = struct.unpack_from("<I", stream, 56)[0]
        return [struct.unpack_from("<IIQQ", stream, 64 + 40 * i) for i in range(count)]
    pos = 26
    fields = []
    for _ in range(6):  # nx, ny, nz, tile, anchor stride, section count
        v, pos = varint(stream, pos)
        fields.append(v)
    entries = []
    for _ in range(fields[5]):
        sid, flags = stream[pos], stream[pos + 1]
        stored, pos = varint(stream, pos + 2)
        if flags & 1:
            _raw, pos = varint(stream, pos)
        entries.append((sid, flags, stored))
        pos += 4  # the section CRC
    off = pos + 4  # after the header CRC
    out = []
    for sid, flags, stored in entries:
        out.append((sid, flags, off, stored))
        off += stored
    return out


def sections(stream):
    """{section id: (raw bytes, stored size)} of a FaCTz stream."""
    out = {}
    for sid, flags, off, stored in table(stream):
        data = stream[off:off + stored]
        if flags & 1:
            data = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout
        out[sid] = (data, stored)
    return out


def varint(b, pos):
    value, shift = 0, 0
    while True:
        c = b[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, pos


def entropy_bits(symbols):
    n = len(symbols)
    return -sum(c * math.log2(c / n) for c in collections.Counter(symbols).values()) if n else 0.0


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def lattice_pairs(s, nx, ny, eb):
    """The (d, k) pair of every listed value of a 2D block stream's sections s."""
    tiles = ((nx + 31) // 32) * ((ny + 31) // 32)
    ids = s[2][0]
    idx_raw, val_raw = s[5][0], s[6][0]
    size_u, pi = varint(idx_raw, 0)
    size_v, pv = varint(val_raw, 0)
    idx_parts = [idx_raw[pi:pi + size_u], idx_raw[pi + size_u:]]
    val_parts = [val_raw[pv:pv + size_v], val_raw[pv + size_v:]]
    pairs = []
    for c in range(2):
        part = idx_parts[c]
        count, p = varint(part, 0)
        last = -1
        values = struct.unpack("<%df" % count, val_parts[c])
        for value in values:
            gap, p = varint(part, p)
            last += gap + 1
            y, x = divmod(last, nx)
            tid = ids[c * tiles + (y // 32) * ((nx + 31) // 32) + x // 32]
            step = 2.0 * math.ldexp(eb, tid - 30) if tid > 0 else 0.0
            if step == 0.0 or value == 0.0:
                pairs.append(("exact",))
                continue
            bits = f32_bits(value)
            mant = bits & 0x7FFFFF
            trailing = (mant & -mant).bit_length() - 1 if mant else 23
            grid = 2.0 ** (((bits >> 23) & 0xFF) - 127 - 23 + trailing)
            d = max(0, round(math.log2(step / grid)))
            pairs.append((d, round((value - round(value / step) * step) / grid)))
    return pairs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    factz, data = sys.argv[1], sys.argv[2]
    rels = sys.argv[3:] or ["1e-2", "1e-3", "1e-4"]
    fields = sorted({(m.group(1), int(m.group(2)), int(m.group(3)))
                     for f in os.listdir(data)
                     for m in [re.match(r"(.*)_u_(\d+)x(\d+)\.f32$", f)] if m})
    tmp = tempfile.mkdtemp()
    print("| field | REL | none B | block B | tile ids | codes over none | exact index | exact values | "
          "listed values | values bits each | est. values B | block ratio | est. ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, nx, ny in fields:
        u, v = (os.path.join(data, f"{name}_{c}_{nx}x{ny}.f32") for c in "uv")
        for rel in rels:
            size = {}
            for mode in ("none", "block"):
                out = os.path.join(tmp, mode + ".fz")
                subprocess.run([factz, "compress", "-2", str(nx), str(ny), "-i", u, "-i", v, "-z", out, "-M", "REL",
                                rel, "--mode", mode], check=True, capture_output=True)
                size[mode] = open(out, "rb").read()
            s_none, s = sections(size["none"]), sections(size["block"])
            eb = struct.unpack_from("<f", size["block"], 48)[0]
            codes_over = s[3][1] + s[4][1] - s_none[3][1] - s_none[4][1]
            pairs = lattice_pairs(s, nx, ny, eb)
            est = abs(entropy_bits(pairs)) / 8  # abs: -0.0 when one pair repeats
            raw = nx * ny * 8
            block = len(size["block"])
            listed = len(pairs)
            print(f"| {name} | {rel} | {len(size['none'])} | {block} | {s[2][1]} | {codes_over} | {s[5][1]} | "
                  f"{s[6][1]} | {listed} | {8 * s[6][1] / max(listed, 1):.1f} | {est:.0f} | {raw / block:.2f} | "
                  f"{raw / (block - s[6][1] + est):.2f} |")


if __name__ == "__main__":
    main()
