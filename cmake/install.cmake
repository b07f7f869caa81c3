# Install rules (docs/usage.md, "Installing"): `cmake --install BUILD --prefix DIR` puts
#   bin/factz                                  the command-line tool
#   LIBDIR/libfactz.so.*, LIBDIR/libfactz.a    the library (core, C API, scalar, flow, and the
#                                              CUDA backend when it is built), shared and static
#   include/factz/                             the public headers (C: factz.h; C++20: *.hpp)
#   LIBDIR/cmake/factz/                        find_package(factz CONFIG): factz::factz (shared)
#                                              and factz::factz_static
#   LIBDIR/pkgconfig/factz.pc                  pkg-config (--static for the archive)
#   FACTZ_INSTALL_HDF5_PLUGIN_DIR              the HDF5 filter plugin (libh5zfactz.so)
#   LIBDIR/factz/libfactz-io.so, libfactz-mpi.so  the CLI's loadable modules (netCDF/HDF5, MPI;
#                                              docs/architecture.md, "Loadable modules"), where
#                                              bin/factz looks for them
# The build keeps its per-layer static libraries; the installed ones are made from them
# without compiling anything twice: the shared library links them whole, the archive is
# their members merged into one. The package files are relocatable (paths relative to
# where they lie), so a prefix given to `cmake --install` works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FACTZ_INSTALL_HDF5_PLUGIN_DIR "${CMAKE_INSTALL_LIBDIR}/hdf5/plugin" CACHE STRING
    "Where the HDF5 filter plugin is installed, relative to the prefix (set HDF5_PLUGIN_PATH to it)")

# The parts of the library, in link order (a part before the parts it uses).
set(_factz_parts factz_c)
foreach(t factz_scalar factz_flow)
  if(TARGET ${t})
    list(APPEND _factz_parts ${t})
  endif()
endforeach()
list(APPEND _factz_parts factz)
foreach(t factz_cuda factz_cuda_host)
  if(TARGET ${t})
    list(APPEND _factz_parts ${t})
  endif()
endforeach()
set(_factz_part_files "")
foreach(t ${_factz_parts})
  list(APPEND _factz_part_files "$<TARGET_FILE:${t}>")
  # Every part goes into the shared library.
  set_target_properties(${t} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()

# Shared: every member of every part, whatever the first user needs.
add_library(factz_shared SHARED ${PROJECT_SOURCE_DIR}/packaging/shared_library.cpp)
set(FACTZ_SO_VERSION "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
set_target_properties(factz_shared PROPERTIES OUTPUT_NAME factz VERSION ${PROJECT_VERSION}
                      SOVERSION ${FACTZ_SO_VERSION}
                      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/packaging)
target_link_options(factz_shared PRIVATE -Wl,--whole-archive ${_factz_part_files} -Wl,--no-whole-archive)
# The parts again as ordinary libraries: their own dependencies (zstd, zfp, OpenMP, cudart)
# follow, and the build orders them first. Nothing is pulled twice: the members are in.
target_link_libraries(factz_shared PRIVATE ${_factz_parts})
set(FACTZ_SHARED_FILE "${CMAKE_SHARED_LIBRARY_PREFIX}factz${CMAKE_SHARED_LIBRARY_SUFFIX}.${PROJECT_VERSION}")
set(FACTZ_SHARED_SONAME "${CMAKE_SHARED_LIBRARY_PREFIX}factz${CMAKE_SHARED_LIBRARY_SUFFIX}.${FACTZ_SO_VERSION}")

# Static: one archive holding the parts' members (an ar MRI script merges them).
set(_factz_mri "${PROJECT_BINARY_DIR}/packaging/libfactz.mri")
set(_factz_mri_text "create ${PROJECT_BINARY_DIR}/packaging/libfactz.a\n")
foreach(f ${_factz_part_files})
  string(APPEND _factz_mri_text "addlib ${f}\n")
endforeach()
string(APPEND _factz_mri_text "save\nend\n")
file(GENERATE OUTPUT ${_factz_mri} CONTENT "${_factz_mri_text}")
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/libfactz.a
                   COMMAND ${CMAKE_COMMAND} -E rm -f ${PROJECT_BINARY_DIR}/packaging/libfactz.a
                   COMMAND ${CMAKE_AR} -M < ${_factz_mri}
                   DEPENDS ${_factz_parts} ${_factz_mri}
                   COMMENT "Merging the static libraries into packaging/libfactz.a" VERBATIM)
add_custom_target(factz_static_archive ALL DEPENDS ${PROJECT_BINARY_DIR}/packaging/libfactz.a)

# Relocatable package files: paths from where each lies back to the prefix.
file(RELATIVE_PATH FACTZ_CONFIG_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/cmake/factz" "/prefix")
file(RELATIVE_PATH FACTZ_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
set(FACTZ_PC_CUDA_LIBS "")
if(FACTZ_CUDA_ENABLED)
  set(FACTZ_PC_CUDA_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lpthread")
endif()
configure_file(${PROJECT_SOURCE_DIR}/packaging/factz-config.cmake.in
               ${PROJECT_BINARY_DIR}/packaging/factz-config.cmake @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/packaging/factz.pc.in ${PROJECT_BINARY_DIR}/packaging/factz.pc @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/factz-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)

install(TARGETS factz_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(t factz_io_module factz_mpi_module)
  if(TARGET ${t})
    install(TARGETS ${t} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/factz)
  endif()
endforeach()
install(TARGETS factz_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_BINARY_DIR}/packaging/libfactz.a DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/factz DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/packaging/factz-config.cmake
              ${PROJECT_BINARY_DIR}/packaging/factz-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/factz)
install(FILES ${PROJECT_BINARY_DIR}/packaging/factz.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET h5zfactz)
  install(TARGETS h5zfactz LIBRARY DESTINATION ${FACTZ_INSTALL_HDF5_PLUGIN_DIR})
endif()
