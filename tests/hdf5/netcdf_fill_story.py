"""Issue 17's story end to end: an ocean current with `_FillValue = 1e20` on land, in a
netCDF-4 file, compressed through the HDF5 filter by `nccopy -F` and by `h5repack -f UD=`,
read back with ncdump and h5py. The land reads back as exactly 1e20, the ocean is within
REL 1e-2 of the ocean's range, and factz verify --fill finds every critical point.

Before the filter knew fill values, REL 1e-2 became an absolute bound of 1e18 (1e-2 times a
range reaching 1e20) and the ocean's currents were lost.

  netcdf_fill_story.py   (environment: HDF5_PLUGIN_PATH, FACTZ_CLI, FACTZ_DATA_DIR)

Exits 77 (ctest: skipped) with a message when nccopy, ncgen or ncdump (Debian netcdf-bin),
h5py or the bundled field is missing; the h5repack part is skipped, with a message, when
h5repack (hdf5-tools) is."""

import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SKIP = 77
FILL = 1e20
FILTER_ID = 40410
LAND_VERTICES = 465


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def check(ok, what):
    if not ok:
        raise AssertionError(what)
    print(f"ok: {what}")


def run(*cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def write_cdl(path, u, v):
    """The field as CDL: uv(comp, y, x), land at the fill value, one (2, ny, nx) chunk (the
    filter takes a vector field as a chunk holding the whole component axis)."""
    ny, nx = u.shape
    rows = ",\n".join(", ".join(f"{x:.9g}" for x in row) for row in np.concatenate([u, v]))
    path.write_text(f"""netcdf ocean_current {{
dimensions:
  comp = 2 ;
  y = {ny} ;
  x = {nx} ;
variables:
  float uv(comp, y, x) ;
    uv:long_name = "surface current (u, v)" ;
    uv:units = "m s-1" ;
    uv:_FillValue = {FILL:g}f ;
    uv:_Storage = "chunked" ;
    uv:_ChunkSizes = 2, {ny}, {nx} ;
data:
  uv =
{rows} ;
}}
""")


def read_ncdump(path, shape):
    """uv through netCDF (ncdump -p 9: float32 exact): values, and where ncdump prints '_'
    (a value equal to _FillValue)."""
    text = run("ncdump", "-v", "uv", "-p", "9", path)
    body = text[text.index("uv =", text.index("data:")) + 4:text.rindex(";")]
    tokens = [t for t in re.split(r"[\s,]+", body) if t]
    missing = np.array([t == "_" for t in tokens]).reshape(shape)
    values = np.array([np.nan if t == "_" else float(t) for t in tokens], dtype=np.float32).reshape(shape)
    return values, missing


def verify(cli, tmp, original, decoded):
    ny, nx = original.shape[1:]
    files = []
    for k, a in enumerate((original[0], original[1], decoded[0], decoded[1])):
        files.append(tmp / f"dump{k}.f32")
        np.ascontiguousarray(a, dtype="<f4").tofile(files[-1])
    out = run(cli, "verify", "-2", nx, ny, "-i", files[0], "-i", files[1], "-d", files[2], "-d", files[3],
              "--fill", f"{FILL:g}", "--json")
    return json.loads(out)


def check_copy(name, path, original, land, cli, tmp, stored_values):
    """The compressed copy at PATH, read by h5py and by ncdump."""
    with h5py.File(path, "r") as f:
        d = f["uv"]
        cd = tuple(d.id.get_create_plist().get_filter_by_id(FILTER_ID)[1])
        r = d[...]
        stored = d.id.get_storage_size()
    lands = np.broadcast_to(land, original.shape)
    check(np.array_equal(r[lands].view("<u4"), original[lands].view("<u4")),
          f"{name}: h5py reads all {2 * LAND_VERTICES} land values back as exactly {FILL:g}")
    sea = original[~lands].astype(np.float64)
    eb = 1e-2 * (sea.max() - sea.min())
    err = np.abs(r[~lands].astype(np.float64) - sea).max()
    check(err <= eb, f"{name}: ocean error {err:.6g} <= REL 1e-2 of the ocean's range ({eb:.6g})")
    values, missing = read_ncdump(path, original.shape)
    check(np.array_equal(missing, lands), f"{name}: ncdump shows '_' (the _FillValue) exactly on land")
    check(np.array_equal(values[~lands], r[~lands]), f"{name}: ncdump reads the ocean values h5py reads")
    rep = verify(cli, tmp, original, r)
    print(f"   verify: {json.dumps(rep)}")
    check(rep["masked_vertices"] == LAND_VERTICES and rep["mask_mismatch"] == 0,
          f"{name}: verify --fill {FILL:g} masks the {LAND_VERTICES} land vertices in both fields")
    check(rep["cp_original"] > 0 and rep["violations"] == 0,
          f"{name}: all {rep['cp_original']} critical points kept (no loss, spurious or type change)")
    check(max(rep["max_abs_error"]) <= 1e-2 * rep["value_range"], f"{name}: verify's error within the bound")
    check(cd[-1] == struct.unpack("<I", struct.pack("<f", FILL))[0] and len(cd) == stored_values,
          f"{name}: the filter's {len(cd)} cd_values {cd} end with the fill value's bits")
    check(stored * 4 < original.nbytes, f"{name}: {stored} bytes stored for {original.nbytes}")


def main():
    for tool in ("nccopy", "ncgen", "ncdump"):
        if not shutil.which(tool):
            skip(f"{tool} not found (Debian package netcdf-bin); the netCDF fill value story needs it")
    plugin = os.environ.get("HDF5_PLUGIN_PATH", "")
    if not os.path.exists(os.path.join(plugin, "libh5zfactz.so")):
        skip("HDF5_PLUGIN_PATH does not hold libh5zfactz.so")
    cli = os.environ.get("FACTZ_CLI", "")
    if not os.path.exists(cli):
        skip("FACTZ_CLI (the factz binary) not given")
    data = pathlib.Path(os.environ.get("FACTZ_DATA_DIR", pathlib.Path(__file__).resolve().parents[1] / "data"))
    paths = [data / f"metno_arctic20_cur_{c}_41x41.f32" for c in "uv"]
    if not all(p.exists() for p in paths):
        skip(f"metno_arctic20_cur (41x41) not in {data}")
    u, v = (np.fromfile(p, dtype="<f4").reshape(41, 41) for p in paths)
    land = (u == 0) & (v == 0)  # the source's land, stored as zero vectors in tests/data
    check(land.sum() == LAND_VERTICES, f"{LAND_VERTICES} land vertices in the Arctic current")
    u[land] = FILL
    v[land] = FILL

    with tempfile.TemporaryDirectory(prefix="factz_nc_") as t:
        tmp = pathlib.Path(t)
        write_cdl(tmp / "plain.cdl", u, v)
        run("ncgen", "-k", "nc4", "-o", tmp / "plain.nc", tmp / "plain.cdl")
        with h5py.File(tmp / "plain.nc", "r") as f:
            original = f["uv"][...]  # the values as netCDF stored them (the reference)
            fill_status = f["uv"].id.get_create_plist().fill_value_defined()
        check(fill_status == h5py.h5d.FILL_VALUE_USER_DEFINED,
              "netCDF-4 in fill mode sets the dataset's fill value from _FillValue")

        failed = []

        def part(name, body):
            try:
                body()
            except AssertionError as e:
                print(f"FAILED ({name}): {e}")
                failed.append(name)

        def nccopy():
            # nccopy writes in no-fill mode: the HDF5 fill value is unset and only the
            # _FillValue attribute holds 1e20, so the filter spec declares it (cd_values[6]).
            # netCDF's typed parameters: 0.01d is the bound's two words, 1e20f the float's bits.
            spec = f"uv,{FILTER_ID},1,1,0.01d,1,0,1e20f"
            print(f"nccopy -F {spec} (block, REL 1e-2, ANS, fill value 1e20 declared)")
            run("nccopy", "-F", spec, tmp / "plain.nc", tmp / "nccopy.nc")
            check_copy("nccopy", tmp / "nccopy.nc", original, land, cli, tmp, 11)

        def h5repack():
            # h5repack keeps the dataset's fill value (1e20, from ncgen's fill mode): nothing
            # to declare. Speculative mode, REL 1e-2, ANS.
            ud = f"UD={FILTER_ID},0,5,2,1,1202590843,1065646817,1"
            print(f"h5repack -f {ud} (speculative, REL 1e-2, ANS; the dataset's fill value)")
            run("h5repack", "-f", ud, tmp / "plain.nc", tmp / "h5repack.nc")
            check_copy("h5repack", tmp / "h5repack.nc", original, land, cli, tmp, 10)

        part("nccopy", nccopy)
        if shutil.which("h5repack"):
            part("h5repack", h5repack)
        else:
            print("SKIP (part): h5repack not found (Debian package hdf5-tools); the h5repack copy is not checked")
        if failed:
            raise AssertionError("the story fails through " + " and ".join(failed))
    return 0


if __name__ == "__main__":
    try:
        import numpy as np
        import h5py
    except ImportError as e:
        skip(f"{e.name} is not installed (python3-numpy, python3-h5py)")
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAILED: {e}")
        sys.exit(1)
