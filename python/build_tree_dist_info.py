"""Writes DIR/factz-VERSION.dist-info (METADATA, entry_points.txt) from pyproject.toml, so that
the package in the CMake build tree (PYTHONPATH=<build>/python) announces the same entry
points as an installed wheel: numcodecs then finds FactzCodec in a process that never
imported factz. Run by python/CMakeLists.txt at configure time: build_tree_dist_info.py
PYPROJECT DIR."""

import pathlib
import shutil
import sys
import tomllib


def main(pyproject, directory):
    project = tomllib.loads(pathlib.Path(pyproject).read_text())["project"]
    out = pathlib.Path(directory)
    for old in out.glob("factz-*.dist-info"):
        shutil.rmtree(old)
    info = out / f"factz-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: factz\nVersion: {project['version']}\n")
    groups = dict(project.get("entry-points", {}))
    if "scripts" in project:
        groups["console_scripts"] = project["scripts"]
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))


if __name__ == "__main__":
    main(*sys.argv[1:])
