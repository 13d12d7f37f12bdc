# What an install holds besides the libraries (emu/CMakeLists.txt) and the tools (tools/):
# headers, the CMake package cuda_shim, the FindCUDAToolkit drop-in, pkg-config files, docs.
# Components: runtime (libcuda.so.1, libcudart.so.13), headers, development (dev symlinks,
# CMake and pkg-config files), tools (launcher, cuda-shim-*), docs. Nothing here needs tests.
# Every consumer file finds the prefix relative to itself, so a moved prefix still works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The CUDA version our headers declare (CUDA_VERSION 13000 -> 13.0) names cuda-13.0.pc and is
# the drop-in's CUDAToolkit_VERSION.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/cuda_shim/cuda.h _cs_v REGEX "^#define CUDA_VERSION [0-9]+$")
string(REGEX REPLACE "^.* " "" _cs_v "${_cs_v}")
math(EXPR CUDA_SHIM_CUDA_MAJOR "${_cs_v} / 1000")
math(EXPR CUDA_SHIM_CUDA_MINOR "${_cs_v} % 1000 / 10")
set(CUDA_SHIM_CUDA_VERSION ${CUDA_SHIM_CUDA_MAJOR}.${CUDA_SHIM_CUDA_MINOR})

# Headers in include/cuda_shim/, not include/: NVIDIA's toolkit and distribution packages put
# their cuda.h in /usr/local/include or /usr/include, which ours would overwrite (or shadow for
# every compile). The package, the drop-in and pkg-config add -I <prefix>/include/cuda_shim,
# so sources keep writing #include <cuda.h>, <cuda_runtime.h>, <cuda_shim_ext.h>.
set(CUDA_SHIM_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/cuda_shim)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cuda_shim/ DESTINATION ${CUDA_SHIM_INSTALL_INCLUDEDIR}
  COMPONENT headers FILES_MATCHING PATTERN "*.h")

# find_package(cuda_shim): cuda_shim::cuda and cuda_shim::cudart (SameMinorVersion while 0.x).
set(_cs_cfgdir ${CMAKE_INSTALL_LIBDIR}/cmake/cuda_shim)
set(_cs_gen ${PROJECT_BINARY_DIR}/package)
install(EXPORT cuda_shim_targets NAMESPACE cuda_shim:: FILE cuda_shim-targets.cmake
  DESTINATION ${_cs_cfgdir} COMPONENT development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cuda_shim-config.cmake.in
  ${_cs_gen}/cuda_shim-config.cmake INSTALL_DESTINATION ${_cs_cfgdir}
  PATH_VARS CUDA_SHIM_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_cs_compat SameMinorVersion)
else()
  set(_cs_compat SameMajorVersion)
endif()
write_basic_package_version_file(${_cs_gen}/cuda_shim-config-version.cmake
  COMPATIBILITY ${_cs_compat})
install(FILES ${_cs_gen}/cuda_shim-config.cmake ${_cs_gen}/cuda_shim-config-version.cmake
  DESTINATION ${_cs_cfgdir} COMPONENT development)

# The drop-in: -DCMAKE_MODULE_PATH=<prefix>/share/cuda_shim/dropin makes an unmodified
# find_package(CUDAToolkit) project use the emulator. It reaches the package relatively.
set(_cs_dropin ${CMAKE_INSTALL_DATADIR}/cuda_shim/dropin)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_DATADIR}")
  set(CUDA_SHIM_DROPIN_CONFIG_DIR "${CMAKE_INSTALL_FULL_LIBDIR}/cmake/cuda_shim")
else()
  file(RELATIVE_PATH _cs_rel /p/${_cs_dropin} /p/${_cs_cfgdir})
  set(CUDA_SHIM_DROPIN_CONFIG_DIR "\${CMAKE_CURRENT_LIST_DIR}/${_cs_rel}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/FindCUDAToolkit.cmake.in ${_cs_gen}/FindCUDAToolkit.cmake @ONLY)
install(FILES ${_cs_gen}/FindCUDAToolkit.cmake DESTINATION ${_cs_dropin} COMPONENT development)

# pkg-config: cuda-13.0.pc / cudart-13.0.pc under NVIDIA's module names, and cuda-shim.pc.
# Paths relative to ${pcfiledir} (an absolute LIBDIR/INCLUDEDIR is used as is).
set(_cs_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(CUDA_SHIM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _cs_rel /p/${_cs_pcdir} /p)
  string(REGEX REPLACE "/$" "" CUDA_SHIM_PC_PREFIX "\${pcfiledir}/${_cs_rel}")
endif()
foreach(_cs_d LIBDIR INCLUDEDIR)
  set(_cs_path ${CMAKE_INSTALL_${_cs_d}})
  if(_cs_d STREQUAL "INCLUDEDIR")
    set(_cs_path ${CUDA_SHIM_INSTALL_INCLUDEDIR})
  endif()
  if(IS_ABSOLUTE "${_cs_path}")
    set(CUDA_SHIM_PC_${_cs_d} "${_cs_path}")
  else()
    set(CUDA_SHIM_PC_${_cs_d} "\${prefix}/${_cs_path}")
  endif()
endforeach()
foreach(_cs_pc cuda cudart)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/pkgconfig/${_cs_pc}.pc.in
    ${_cs_gen}/${_cs_pc}-${CUDA_SHIM_CUDA_VERSION}.pc @ONLY)
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/pkgconfig/cuda-shim.pc.in ${_cs_gen}/cuda-shim.pc @ONLY)
install(FILES ${_cs_gen}/cuda-${CUDA_SHIM_CUDA_VERSION}.pc ${_cs_gen}/cudart-${CUDA_SHIM_CUDA_VERSION}.pc
  ${_cs_gen}/cuda-shim.pc DESTINATION ${_cs_pcdir} COMPONENT development)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT docs
  FILES_MATCHING PATTERN "*.md")
