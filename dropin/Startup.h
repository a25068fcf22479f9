// dropin/Startup.h: the drop-in's start and end — reading the settings and
// the plan files (at MPI_Init, or at the first intercepted call after an
// MPI_Init it did not see), comparing them across MPI_COMM_WORLD, and the
// COLLC_STATS report at MPI_Finalize.
#ifndef COLLC_DROPIN_STARTUP_H
#define COLLC_DROPIN_STARTUP_H

#include "dropin/State.h"

namespace collc::dropin {

/// After a successful PMPI_Init / PMPI_Init_thread: sets collc up (once) and
/// compares the ranks' settings (collective over MPI_COMM_WORLD).
void startAtInit();

/// Marks this process as served through Open MPI's coll/collc component
/// (component/coll_collc.c) rather than the PMPI library: there is no MPI_*
/// of collc's for a PMPI tool to shadow, so the tool-order check is off.
void setComponentMode();

/// The process's state, set up on first use if MPI_Init was not intercepted;
/// null before MPI_Init and after MPI_Finalize.
Global *activeGlobal();

/// At MPI_Finalize (collective over MPI_COMM_WORLD): sums and prints the
/// counters (COLLC_STATS), frees collc's state of MPI_COMM_WORLD and
/// MPI_COMM_SELF, unregisters the progress hook.
void finish(Global &g);

} // namespace collc::dropin

#endif // COLLC_DROPIN_STARTUP_H
