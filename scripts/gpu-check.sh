#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (target: one H200, under 8 minutes):
# configure a CUDA build for sm_90, build the CUDA targets, run the `cuda` tests (streams,
# device ANS blobs, device CRC-32C, decode both ways, G0/G1) and the CPU model of the
# kernels, then the GPU benchmark (10000^2 and 20000^2 turbulence, with the device CRC).
# Logs and the benchmark table go to $OUT when it is set (else to the build directory).
#
#   scripts/gpu-check.sh                 # configure + build (-j16) + tests + bench
#   FACTZ_GPU_PREBUILT=1 scripts/gpu-check.sh   # reuse an existing build directory as is
# Environment: FACTZ_BUILD_DIR (default build-gpu), CUDA_ARCH (default 90), JOBS (16),
# BENCH_SIZES (10000,20000), BENCH_REPS (3).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FACTZ_BUILD_DIR:-$root/build-gpu}
arch=${CUDA_ARCH:-90}
jobs=${JOBS:-16}
logs=${OUT:-$build/gpu-check}
mkdir -p "$logs"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
start=$(date +%s)
stamp() { echo "[gpu-check $(( $(date +%s) - start ))s] $*" | tee -a "$logs/summary.txt"; }
status=0

stamp "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
nvidia-smi > "$logs/nvidia-smi.txt" 2>&1 || stamp "nvidia-smi failed (no driver?)"

if [[ -z "${FACTZ_GPU_PREBUILT:-}" ]]; then
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [[ -x "$nvcc_bin" ]] || { stamp "FAIL: nvcc not found (install the CUDA toolkit)"; exit 1; }
  stamp "configure ($build, sm_$arch)"
  if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFACTZ_CUDA=ON \
      -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DCMAKE_CUDA_ARCHITECTURES="$arch" > "$logs/configure.log" 2>&1; then
    stamp "FAIL: configure (see configure.log; scripts/deps.sh lists the packages)"; tail -20 "$logs/configure.log"; exit 1
  fi
  stamp "build -j$jobs"
  if ! cmake --build "$build" -j"$jobs" --target factz_cuda_tests factz_gpu_model_tests factz_gpu_bench \
      > "$logs/build.log" 2>&1; then
    stamp "FAIL: build (see build.log)"; grep -E "error" "$logs/build.log" | head -20; exit 1
  fi
fi

stamp "ctest -L '^cuda\$' (GPU vs CPU streams, ANS blobs, CRC-32C, decode both ways, G0/G1, >2 GiB output)"
if [[ -f "$build/CTestTestfile.cmake" ]]; then
  run_cuda_tests() { (cd "$build" && ctest -L '^cuda$' --output-on-failure --timeout 420); }
else  # binaries carried without their build tree
  run_cuda_tests() { "$build/tests/cuda/factz_cuda_tests" && echo "100% tests passed (gtest binary)"; }
fi
if run_cuda_tests > "$logs/ctest-cuda.log" 2>&1; then
  stamp "cuda tests: PASS ($(grep -E 'tests passed' "$logs/ctest-cuda.log"))"
else
  status=1; stamp "cuda tests: FAIL"; grep -E "Failed|FAILED|Skipped|\*\*\*" "$logs/ctest-cuda.log" | head -20
fi
grep -qiE "Skipped" "$logs/ctest-cuda.log" && stamp "note: some cuda tests were skipped (see ctest-cuda.log)"

stamp "CPU model of the kernels"
if "$build/tests/cuda/factz_gpu_model_tests" > "$logs/gpu-model.log" 2>&1; then stamp "model: PASS"
else status=1; stamp "model: FAIL"; tail -20 "$logs/gpu-model.log"; fi

stamp "GPU benchmark"
if timeout 330 "$build/bench/gpu/factz_gpu_bench" --sizes "${BENCH_SIZES:-10000,20000}" --reps "${BENCH_REPS:-3}" \
    > "$logs/bench.md" 2> "$logs/bench.err"; then
  cat "$logs/bench.md"
else
  status=1; stamp "bench: FAIL or timeout (partial table below)"; cat "$logs/bench.md" "$logs/bench.err"
fi
stamp "done (status $status); logs in $logs"
exit $status
