"""The ``factz`` console script of the wheel (and ``python -m factz``): runs the command line
tool that the package carries (``factz/bin/factz``, the CMake target ``factz_cli``) with the
same arguments, in place of this process, so its exit code, stdout and stderr are the tool's."""

import os
import sys


def cli_path():
    """The bundled ``factz`` executable, or None when this package has none (a build without
    the CLI target)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "factz")
    return exe if os.access(exe, os.X_OK) else None


def main():
    exe = cli_path()
    if exe is None:
        sys.stderr.write("factz: this installation of the Python package carries no command line tool "
                         "(factz/bin/factz); reinstall it with `pip install --no-build-isolation ./python`\n")
        return 1
    sys.stdout.flush()
    os.execv(exe, ["factz"] + sys.argv[1:])
    return 1  # not reached
