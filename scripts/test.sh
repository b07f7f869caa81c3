#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh"
build=${FACTZ_BUILD_DIR:-$root/build}
cd "$build"
ctest -j"$(nproc)" --output-on-failure --timeout 900
