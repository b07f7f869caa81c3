# Include rules of docs/architecture.md ("Modules and layering"), checked by the ctest
# Layering.IncludeRules (cmake -DROOT=<source dir> -P check_layering.cmake). Each rule: the
# folder, then (comma-separated) the only prefixes its quoted includes may start with. A folder lower in the
# stack never includes one above it; public headers include nothing internal, and only
# factz/cuda.hpp includes a CUDA header.
set(rules
  "src/kernels|kernels/,factz/cp_type.hpp"
  "src/util|util/,kernels/"
  "src/format|format/,util/,kernels/,factz/"
  "src/codec|codec/,util/,kernels/,format/,factz/"
  "src/topology|topology/,kernels/,util/,factz/"
  "src/streams|streams/,codec/,format/,kernels/,util/,factz/"
  "src/backend/cpu|backend/cpu/,streams/,codec/,format/,kernels/,topology/,util/,factz/"
  "src/backend/cuda|backend/cuda/,streams/,codec/,format/,kernels/,util/,factz/,api/device_backend.hpp"
  "include/factz|factz/")
set(failures "")
foreach(rule ${rules})
  string(REPLACE "|" ";" parts "${rule}")
  list(GET parts 0 dir)
  list(GET parts 1 allowed)
  string(REPLACE "," ";" allowed "${allowed}")
  file(GLOB_RECURSE files "${ROOT}/${dir}/*.hpp" "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cuh")
  foreach(f ${files})
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line ${lines})
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(inc "${CMAKE_MATCH_1}")
        set(ok FALSE)
        foreach(prefix ${allowed})
          string(FIND "${inc}" "${prefix}" at)
          if(at EQUAL 0)
            set(ok TRUE)
          endif()
        endforeach()
        if(NOT ok)
          string(APPEND failures "  ${f}: includes \"${inc}\" (${dir} may include only: ${allowed})\n")
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<(cuda[^>]*|cub/[^>]*|thrust/[^>]*)>")
        if(NOT f MATCHES "include/factz/cuda.hpp$" AND NOT dir MATCHES "^src/backend/cuda")
          string(APPEND failures "  ${f}: includes the CUDA header <${CMAKE_MATCH_1}>\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "layering rules broken (docs/architecture.md, \"Modules and layering\"):\n${failures}")
endif()
message(STATUS "layering rules hold")
