# `cmake --install`: the lstmcheck program, the public runner ABI header
# (include/lstmcheck/runner.h) and the files that find it from outside: a
# CMake package (find_package(lstmcheck) gives lstmcheck::runner, the
# header, and lstmcheck::lstmcheck, the program) and a pkg-config file
# (pkg-config --cflags lstmcheck). Plugins need nothing else: they link
# against no library of lstmcheck's.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# the ABI version, read from the header (its one definition)
file(STRINGS ${CMAKE_SOURCE_DIR}/include/lstmcheck/runner.h abi_line
     REGEX "^#define LSTMCHECK_RUNNER_ABI_VERSION [0-9]+")
string(REGEX REPLACE ".* ([0-9]+)$" "\\1" LSTMCHECK_RUNNER_ABI_VERSION "${abi_line}")

add_library(lstmcheck_runner_abi INTERFACE)
set_target_properties(lstmcheck_runner_abi PROPERTIES EXPORT_NAME runner)
target_include_directories(lstmcheck_runner_abi INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# the CUDA libraries where the build found them, also after installing
set_target_properties(lstmcheck PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS lstmcheck lstmcheck_runner_abi EXPORT lstmcheckTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/lstmcheck/runner.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lstmcheck)

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/lstmcheck)
install(EXPORT lstmcheckTargets NAMESPACE lstmcheck:: DESTINATION ${package_dir})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/lstmcheckConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/lstmcheckConfig.cmake INSTALL_DESTINATION ${package_dir})
# 0.x: a minor version may change the command line; the runner ABI has its own version
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/lstmcheckConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/lstmcheckConfig.cmake
              ${CMAKE_BINARY_DIR}/package/lstmcheckConfigVersion.cmake DESTINATION ${package_dir})

# relative to the .pc file, so that `cmake --install --prefix P` works for any P
file(RELATIVE_PATH LSTMCHECK_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${CMAKE_SOURCE_DIR}/cmake/lstmcheck.pc.in ${CMAKE_BINARY_DIR}/package/lstmcheck.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/lstmcheck.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
