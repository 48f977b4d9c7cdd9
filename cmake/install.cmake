# `cmake --install`: the layers as static libraries, the public headers (include/halo3d/) and
# a CMake package, so that an embedding code does
#   find_package(halo3d CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE halo3d::halo3d)
# (docs/LIBRARY.md). halo3d::halo3d is the api layer; the layers below it come along as its
# link dependencies (halo3d::session, ... halo3d::base), and halo3dConfig.cmake finds the
# packages they name. The program is installed too (bin/halo3d); the app layer is not
# exported (the command line is not a library interface).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_h3d_layers base kernels core comm io solver problem session api)
set(_h3d_targets)
foreach(l ${_h3d_layers})
  set_target_properties(halo3d_${l} PROPERTIES EXPORT_NAME ${l})
  list(APPEND _h3d_targets halo3d_${l})
endforeach()
set_target_properties(halo3d_api PROPERTIES EXPORT_NAME halo3d)

install(TARGETS ${_h3d_targets} EXPORT halo3dTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS halo3d RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# error.hpp is the layers' exception type (src/base), public as the API's.
install(FILES ${PROJECT_SOURCE_DIR}/include/halo3d/halo3d.hpp
              ${PROJECT_BINARY_DIR}/include/halo3d/version.hpp
              ${PROJECT_SOURCE_DIR}/src/base/error.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/halo3d)

set(_h3d_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/halo3d)
install(EXPORT halo3dTargets NAMESPACE halo3d:: DESTINATION ${_h3d_cmake_dir})
# What the config file must find again: the options this build was made with.
set(HALO3D_PACKAGE_OPENMP ${OpenMP_CXX_FOUND})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/halo3dConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/halo3dConfig.cmake
                              INSTALL_DESTINATION ${_h3d_cmake_dir})
# 0.x: a minor version may change the API, so only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/halo3dConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/halo3dConfig.cmake
              ${PROJECT_BINARY_DIR}/halo3dConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FindNCCL.cmake
        DESTINATION ${_h3d_cmake_dir})
