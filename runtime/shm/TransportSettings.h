// runtime/shm/TransportSettings.h: the transport settings of the environment
// (docs/shm-transport.md, "Choosing") — COLLC_TRANSPORT, COLLC_SHM_SEGMENT,
// COLLC_SHM_FAST, COLLC_SHM_AFTER and COLLC_NODE_MAP — parsed and checked in this one place.
//
// Two readers use it: the C API (runtime/api/CommState.cpp reads the
// environment at first use and prints each bad value as one warning per
// process) and the drop-in (dropin/Config.cpp reads it at MPI_Init, prints
// each bad value once, on rank 0, compares the settings that change what
// crosses between ranks across MPI_COMM_WORLD, and hands the result to the
// runtime with rt::setTransportSettings). A bad value is one warning and the
// setting's default, never an abort. MPI-free.
#ifndef COLLC_RUNTIME_SHM_TRANSPORTSETTINGS_H
#define COLLC_RUNTIME_SHM_TRANSPORTSETTINGS_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace collc::rt {

/// COLLC_TRANSPORT: shared memory between the ranks of a node (Auto, and Shm,
/// which also warns about every fallback to MPI) or MPI for every message.
enum class TransportKind : uint8_t { Auto, Shm, Mpi };

/// The default of COLLC_SHM_AFTER (TransportSettings::shmAfter).
inline constexpr uint32_t defaultShmAfter = 16;
/// The largest COLLC_SHM_AFTER.
inline constexpr uint32_t maxShmAfter = 1000000000;

/// The default bytes per shared-memory segment (ShmConfig::slotBytes).
inline constexpr uint32_t defaultShmSegmentBytes = 32 * 1024;

struct TransportSettings {
  TransportKind transport = TransportKind::Auto;
  /// COLLC_SHM_SEGMENT: 4K .. 16M, a multiple of 64.
  uint32_t shmSegmentBytes = defaultShmSegmentBytes;
  /// COLLC_SHM_FAST: blocking calls may take the shared-memory direct path.
  bool shmFast = true;
  /// COLLC_SHM_AFTER: a communicator's first shmAfter executions run over MPI
  /// point-to-point; the ranks set up shared memory in the first blocking
  /// call after them (0: when collc first uses the communicator). Setting up
  /// takes 0.5-2 ms, so a communicator made for a few calls never pays it.
  uint32_t shmAfter = defaultShmAfter;
  /// COLLC_NODE_MAP: rank r of a communicator of nodeMap.size() ranks is on
  /// node nodeMap[r]; empty: the nodes MPI_Comm_split_type finds.
  std::vector<int> nodeMap;
};

using TransportGetEnv = std::function<const char *(const char *)>;

/// Reads the five variables through `env`. Each bad value adds one line to
/// `warnings` ("COLLC_SHM_FAST='maybe' is not ...; using 1", without the
/// "collc: warning: " prefix) and leaves that setting at its default.
TransportSettings readTransportSettings(const TransportGetEnv &env,
                                        std::vector<std::string> &warnings);

/// Parses COLLC_NODE_MAP ("0,0,1,1": rank r is on node map[r]); empty when
/// `text` is null or empty. A map of N ranks numbers its nodes 0 .. N-1 (so
/// a missing comma, "0,0,11", is caught). False, with `why` (the whole
/// warning but its consequence), when malformed.
bool parseNodeMap(const char *text, std::vector<int> &map, std::string &why);

} // namespace collc::rt

#endif // COLLC_RUNTIME_SHM_TRANSPORTSETTINGS_H
