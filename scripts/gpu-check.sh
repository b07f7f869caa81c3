#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (target: one H200, under 8 minutes):
# configure a CUDA build for sm_90, build the CUDA targets, run the `cuda` tests (float32 and
# float64 streams, 3D fields in modes none, block and speculative, device ANS blobs, device
# CRC-32C, decode both ways, G0/G1) and the CPU model of the kernels (2D and 3D), then the GPU
# benchmark (10000^2 and 20000^2 turbulence, with the device CRC; then a 256^3 ABC flow in 3D
# modes block and speculative, median of the repeats).
# Logs and the benchmark table go to $OUT when it is set (else to the build directory).
#
#   scripts/gpu-check.sh                 # configure + build (-j16) + tests + bench
#   FACTZ_GPU_PREBUILT=1 scripts/gpu-check.sh   # reuse an existing build directory as is
#
# A fresh GPU machine may lack the build's packages (pkg-config, libzstd-dev, libgtest-dev;
# scripts/deps.sh) and cannot fetch them. Then build on a CPU machine with nvcc and carry
# the binaries (about 16 MiB with their shared libraries and the real test fields):
#   scripts/gpu-check.sh --pack             # here: build for sm_$CUDA_ARCH, copy the three
#                                           # binaries and their libraries to build-gpu-pack/
#   FACTZ_GPU_PREBUILT=1 FACTZ_BUILD_DIR=build-gpu-pack scripts/gpu-check.sh   # on the GPU
# (the device tool: carry ["build-gpu-pack"]). Without FACTZ_GPU_PREBUILT, a failed
# configure falls back to build-gpu-pack/ when it holds the binaries.
# Environment: FACTZ_BUILD_DIR (default build-gpu), CUDA_ARCH (default 90), JOBS (16; --pack: nproc),
# BENCH_SIZES (10000,20000), BENCH_SIZES3D (256; 0: no 3D lines), BENCH_REPS (3), FACTZ_GPU_PACK
# (default build-gpu-pack).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FACTZ_BUILD_DIR:-$root/build-gpu}
arch=${CUDA_ARCH:-90}
jobs=${JOBS:-16}
[[ "${1:-}" == "--pack" && -z "${JOBS:-}" ]] && jobs=$(nproc)  # a shared CPU machine
pack=${FACTZ_GPU_PACK:-$root/build-gpu-pack}
binaries=(tests/cuda/factz_cuda_tests tests/cuda/factz_gpu_model_tests bench/gpu/factz_gpu_bench)

configure_and_build() {  # $1: log folder; returns non-zero (with a message) on failure
  local nvcc_bin
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [[ -x "$nvcc_bin" ]] || { echo "nvcc not found (install the CUDA toolkit)"; return 1; }
  if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFACTZ_CUDA=ON \
      -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DCMAKE_CUDA_ARCHITECTURES="$arch" > "$1/configure.log" 2>&1; then
    echo "configure failed (configure.log; a bare machine lacks scripts/deps.sh's packages: use --pack)"
    tail -20 "$1/configure.log"; return 1
  fi
  if ! cmake --build "$build" -j"$jobs" --target factz_cuda_tests factz_gpu_model_tests factz_gpu_bench \
      > "$1/build.log" 2>&1; then
    echo "build failed (build.log)"; grep -E "error" "$1/build.log" | head -20; return 1
  fi
}

if [[ "${1:-}" == "--pack" ]]; then
  # On a CPU machine with nvcc: build, then copy the binaries and the non-system shared
  # libraries they load (the GPU machine's may be missing or older) into $pack.
  mkdir -p "$build/gpu-check"
  echo "[gpu-check --pack] build $build (sm_$arch, -j$jobs)"
  configure_and_build "$build/gpu-check" || exit 1
  rm -rf "$pack" && mkdir -p "$pack/lib" "$pack/tests/cuda" "$pack/bench/gpu" || exit 1
  for b in "${binaries[@]}"; do cp "$build/$b" "$pack/$b" || exit 1; done
  for b in "${binaries[@]}"; do ldd "$pack/$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -E '/lib(gomp|zstd|stdc\+\+|gcc_s)\.so' | while read -r lib; do cp -L "$lib" "$pack/lib/"; done
  # The real fields the cuda tests use: the bundled ones (tests/data) and, when it is there,
  # more of ../shared/data (which does not travel with the tree).
  for name in foam_shearlayer_t0.75_u_512x512 foam_shearlayer_t0.75_v_512x512 cmems_glob1deg_cur_u_360x171 \
      cmems_glob1deg_cur_v_360x171 eraint_uv200_u_480x241 eraint_uv200_v_480x241 cavity3d_crop_u_24x24x24 \
      cavity3d_crop_v_24x24x24 cavity3d_crop_w_24x24x24; do
    for data in "$root/tests/data" "$root/../shared/data"; do
      if [[ -f "$data/$name.f32" ]]; then mkdir -p "$pack/data" && cp "$data/$name.f32" "$pack/data/"; break; fi
    done
  done
  echo "[gpu-check --pack] $(du -sh "$pack" | cut -f1) in $pack:"; (cd "$pack" && find . -type f | sort)
  exit 0
fi

logs=${OUT:-$build/gpu-check}
mkdir -p "$logs"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
start=$(date +%s)
stamp() { echo "[gpu-check $(( $(date +%s) - start ))s] $*" | tee -a "$logs/summary.txt"; }
status=0

stamp "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
nvidia-smi > "$logs/nvidia-smi.txt" 2>&1 || stamp "nvidia-smi failed (no driver?)"

if [[ -z "${FACTZ_GPU_PREBUILT:-}" ]]; then
  stamp "configure and build ($build, sm_$arch, -j$jobs)"
  if ! configure_and_build "$logs"; then
    if [[ -x "$pack/${binaries[0]}" ]]; then
      stamp "configure/build failed here: using the carried binaries in $pack instead"; build=$pack
    else
      stamp "FAIL: configure/build (see above)"; exit 1
    fi
  fi
fi
for b in "${binaries[@]}"; do
  [[ -f "$build/$b" ]] || { stamp "FAIL: $build/$b is missing"; exit 1; }
  [[ -x "$build/$b" ]] || chmod u+x "$build/$b"
done
# Libraries and fields packed with the binaries (--pack) come first.
[[ -d "$build/lib" ]] && export LD_LIBRARY_PATH="$(cd "$build/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -d "$build/data" ]] && export FACTZ_SHARED_DATA_DIR="$(cd "$build/data" && pwd)"

stamp "ctest -L '^cuda\$' (GPU vs CPU streams float32, float64 and 3D, ANS blobs, CRC-32C, decode both ways, G0/G1, >2 GiB output)"
if [[ -f "$build/CTestTestfile.cmake" ]]; then
  run_cuda_tests() { (cd "$build" && ctest -L '^cuda$' --output-on-failure --timeout 420); }
else  # binaries carried without their build tree
  run_cuda_tests() { timeout 420 "$build/tests/cuda/factz_cuda_tests" && echo "100% tests passed (gtest binary)"; }
fi
if run_cuda_tests > "$logs/ctest-cuda.log" 2>&1; then
  stamp "cuda tests: PASS ($(grep -E 'tests passed' "$logs/ctest-cuda.log"))"
else
  status=1; stamp "cuda tests: FAIL"; grep -E "Failed|FAILED|Skipped|\*\*\*" "$logs/ctest-cuda.log" | head -20
fi
grep -qiE "Skipped" "$logs/ctest-cuda.log" && stamp "note: some cuda tests were skipped (see ctest-cuda.log)"

stamp "CPU model of the kernels"
if timeout 300 "$build/tests/cuda/factz_gpu_model_tests" > "$logs/gpu-model.log" 2>&1; then stamp "model: PASS"
else status=1; stamp "model: FAIL"; tail -20 "$logs/gpu-model.log"; fi

stamp "GPU benchmark"
if timeout 330 "$build/bench/gpu/factz_gpu_bench" --sizes "${BENCH_SIZES:-10000,20000}" --reps "${BENCH_REPS:-3}" \
    --sizes3d "${BENCH_SIZES3D:-256}" \
    > "$logs/bench.md" 2> "$logs/bench.err"; then
  cat "$logs/bench.md"
else
  status=1; stamp "bench: FAIL or timeout (partial table below)"; cat "$logs/bench.md" "$logs/bench.err"
fi
stamp "done (status $status); logs in $logs"
exit $status
