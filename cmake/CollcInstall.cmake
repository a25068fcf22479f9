# cmake/CollcInstall.cmake: what `cmake --install build --prefix P` installs, and
# the package files that let an application find collc like any HPC library.
#
#   P/bin                  collc, collc-bench
#   P/lib                  libcollc.so (the C/C++ API), libcollc_mpi.so (the drop-in)
#   P/bin/mpich, P/lib/mpich  the same built for MPICH, when it is built (docs/mpi.md)
#   P/lib/openmpi          mca_coll_collc.so, the Open MPI component (docs/dropin.md)
#   P/include/collc        collc.h, collc.hpp
#   P/lib/cmake/collc      find_package(collc) -> the imported target collc::runtime
#   P/lib/pkgconfig        collc.pc (pkg-config --cflags --libs collc)
#   P/share/collc          the algorithm library (schedules/CMakeLists.txt installs it)
#   P/share/collc/topologies  the machine descriptions of topologies/ (docs/topology.md)
#   P/share/doc/collc      docs/ and the examples
#   P/share/man/man1       one page per command (docs/man)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS collc collc-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS collc_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET mca_coll_collc)
  install(TARGETS mca_coll_collc LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/openmpi)
endif()
if(mpich IN_LIST COLLC_MPI_FLAVOURS)
  install(TARGETS collc_mpich collc-bench_mpich RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}/mpich)
  install(TARGETS collc_mpi_mpich collc_runtime_shared_mpich
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mpich)
endif()

# libcollc.so is exported as collc::runtime (inside the build, collc::runtime
# is the static archive the tools link; outside, it is this shared library).
set_target_properties(collc_runtime_shared PROPERTIES EXPORT_NAME runtime
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS collc_runtime_shared EXPORT collcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/api/include/collc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(COLLC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collc)
install(EXPORT collcTargets NAMESPACE collc:: DESTINATION ${COLLC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/collcConfig.cmake INSTALL_DESTINATION ${COLLC_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collcConfig.cmake
              ${PROJECT_BINARY_DIR}/collcConfigVersion.cmake
        DESTINATION ${COLLC_CMAKE_DIR})

# The prefix as seen from P/lib/pkgconfig, so the file works wherever P is.
file(RELATIVE_PATH COLLC_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/collc.pc.in ${PROJECT_BINARY_DIR}/collc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/collc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PATTERN man EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/examples/allreduce.c
              ${PROJECT_SOURCE_DIR}/examples/app.c
              ${PROJECT_SOURCE_DIR}/examples/butterfly.calgo
              ${PROJECT_SOURCE_DIR}/examples/pair-exchange.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
file(GLOB COLLC_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/topologies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/collc/topologies
        FILES_MATCHING PATTERN "*.yaml")
install(FILES ${COLLC_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
