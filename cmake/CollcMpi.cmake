# cmake/CollcMpi.cmake: the MPI libraries collc is built against (docs/mpi.md).
#
# collc's MPI-facing parts (the runtime libcollc.so, the drop-in libcollc_mpi.so,
# collc-bench and the MPI test programs) are built once per MPI "flavour";
# everything MPI-free (the compiler, the interpreter, the kernels' loops) is
# built once and shared by both.
#
#   openmpi  Open MPI, through mpicc.openmpi (or the MPI find_package(MPI)
#            finds). Outputs in bin/ and lib/; target names without a suffix.
#   mpich    MPICH (and its ABI: Intel MPI, MVAPICH, Cray MPICH), through
#            mpicc.mpich's header folder and libmpich. Outputs in bin/mpich/
#            and lib/mpich/; target names end in _mpich.
#
# COLLC_MPICH: ON (MPICH required), OFF, or AUTO (built when found; default).
#
# After this file, COLLC_MPI_FLAVOURS lists the flavours built, and
# collc_flavour(F) sets, in the caller's scope:
#   sfx      the suffix of F's target names ("" or "_mpich")
#   mpi      F's MPI link target (MPI::MPI_C or collc::mpich)
#   mpiexec  F's launcher (mpirun.openmpi, mpirun.mpich)
#   subdir   F's folder under bin/ and lib/ ("" or "mpich/")

# Open MPI: prefer its own compiler wrapper, so that a machine whose default
# mpicc is another MPI still finds Open MPI here.
find_program(COLLC_OMPI_MPICC NAMES mpicc.openmpi)
find_program(COLLC_OMPI_MPICXX NAMES mpicxx.openmpi mpic++.openmpi)
find_program(COLLC_OMPI_MPIEXEC NAMES mpirun.openmpi mpiexec.openmpi)
if(COLLC_OMPI_MPICC AND NOT MPI_C_COMPILER)
  set(MPI_C_COMPILER ${COLLC_OMPI_MPICC})
endif()
if(COLLC_OMPI_MPICXX AND NOT MPI_CXX_COMPILER)
  set(MPI_CXX_COMPILER ${COLLC_OMPI_MPICXX})
endif()
if(COLLC_OMPI_MPIEXEC AND NOT MPIEXEC_EXECUTABLE)
  set(MPIEXEC_EXECUTABLE ${COLLC_OMPI_MPIEXEC} CACHE FILEPATH "Open MPI's launcher")
endif()
find_package(MPI REQUIRED COMPONENTS C CXX)
set(COLLC_MPI_FLAVOURS openmpi)
set(COLLC_MPI_openmpi_TARGET MPI::MPI_C)
set(COLLC_MPI_openmpi_MPIEXEC ${MPIEXEC_EXECUTABLE})

set(COLLC_MPICH AUTO CACHE STRING "Also build the MPICH flavour: ON, OFF or AUTO")
set_property(CACHE COLLC_MPICH PROPERTY STRINGS ON OFF AUTO)
if(NOT COLLC_MPICH STREQUAL "OFF")
  find_path(COLLC_MPICH_INCLUDE_DIR mpi.h
    PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/mpich /usr/include/mpich
    NO_DEFAULT_PATH)
  find_library(COLLC_MPICH_LIBRARY NAMES mpich)
  find_program(COLLC_MPICH_MPIEXEC NAMES mpirun.mpich mpiexec.mpich mpiexec.hydra)
  if(COLLC_MPICH_INCLUDE_DIR AND COLLC_MPICH_LIBRARY AND COLLC_MPICH_MPIEXEC)
    add_library(collc_mpich_mpi INTERFACE)
    add_library(collc::mpich ALIAS collc_mpich_mpi)
    target_include_directories(collc_mpich_mpi SYSTEM INTERFACE ${COLLC_MPICH_INCLUDE_DIR})
    target_link_libraries(collc_mpich_mpi INTERFACE ${COLLC_MPICH_LIBRARY} Threads::Threads)
    list(APPEND COLLC_MPI_FLAVOURS mpich)
    set(COLLC_MPI_mpich_TARGET collc::mpich)
    set(COLLC_MPI_mpich_MPIEXEC ${COLLC_MPICH_MPIEXEC})
    message(STATUS "collc: MPICH flavour: ${COLLC_MPICH_LIBRARY} (bin/mpich, lib/mpich)")
  elseif(COLLC_MPICH STREQUAL "ON")
    message(FATAL_ERROR "COLLC_MPICH=ON but MPICH was not found (Debian: apt-get install mpich libmpich-dev)")
  else()
    message(STATUS "collc: MPICH not found; building for Open MPI only")
  endif()
endif()

macro(collc_flavour flavour)
  if("${flavour}" STREQUAL "openmpi")
    set(sfx "")
    set(subdir "")
  else()
    set(sfx "_${flavour}")
    set(subdir "${flavour}/")
  endif()
  set(mpi ${COLLC_MPI_${flavour}_TARGET})
  set(mpiexec ${COLLC_MPI_${flavour}_MPIEXEC})
endmacro()

# Puts a flavour's shared library or executable in its own folder under the
# name it has in every flavour (OUTPUT_NAME: the target's name without the
# flavour's suffix, unless the target sets its own).
function(collc_flavour_output target flavour)
  if(NOT "${flavour}" STREQUAL "openmpi")
    get_target_property(name ${target} OUTPUT_NAME)
    if(NOT name)
      string(REGEX REPLACE "_${flavour}$" "" name ${target})
    endif()
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name}
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${flavour}
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/${flavour})
  endif()
endfunction()
