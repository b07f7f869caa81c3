# CUDA backend set-up (src/backend/cuda, tests/cuda, bench/gpu).
#
# FACTZ_CUDA = AUTO (default): on when check_language(CUDA) finds nvcc; ON: required;
# OFF: never. No GPU is needed to build: the code is compiled for sm_80 and sm_90 with the
# floating-point pinning of the CPU build (no FMA contraction, IEEE division and square
# root), so the GPU makes exactly the CPU's decisions.
set(FACTZ_CUDA AUTO CACHE STRING "Build the CUDA backend (AUTO, ON, OFF)")
set_property(CACHE FACTZ_CUDA PROPERTY STRINGS AUTO ON OFF)

set(FACTZ_CUDA_ENABLED OFF)
if(NOT FACTZ_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    # check_language looks on PATH only; the toolkit's default location is common enough.
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(FACTZ_CUDA_ENABLED ON)
  elseif(FACTZ_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FACTZ_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    message(STATUS "FaCTz: nvcc not found, the CUDA backend is not built")
  endif()
endif()

if(FACTZ_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # CMake 3.25 does not know nvcc 13's C++20 dialect (targets linking the C++20 core ask
  # for it): teach it the flag.
  if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # Pinned floating point on the device (docs/architecture.md, "Determinism").
  set(FACTZ_CUDA_FLAGS --fmad=false -prec-div=true -prec-sqrt=true -ftz=false
      --expt-relaxed-constexpr --extended-lambda -Xcompiler=-ffp-contract=off,-fno-fast-math,-Wall,-Wextra)
  message(STATUS "FaCTz: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES})")
endif()
