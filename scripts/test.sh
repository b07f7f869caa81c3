#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh"
build=${FACTZ_BUILD_DIR:-$root/build}
cd "$build"
# Tests run two at a time on two cores: idle OpenMP threads must sleep, not spin.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest -j"$(nproc)" --output-on-failure --timeout 900
