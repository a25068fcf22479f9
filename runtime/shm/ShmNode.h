// runtime/shm/ShmNode.h: setting up the shared-memory channels of a
// communicator's ranks that share a node, through MPI.
//
// Collective over the communicator (it runs where blocking is safe: when the
// runtime makes its per-communicator state). The ranks of one node are found
// with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or with a rank -> node map
// given by COLLC_NODE_MAP (docs/shm-transport.md; for tests of mixed plans on
// one machine). The node's first rank creates a POSIX shared-memory object
// (posix_fallocate reserves its pages, so a full /dev/shm is an error here,
// not a SIGBUS later), lays the channels out and broadcasts the name; the
// others map it; all agree (MPI_Allreduce) that every rank mapped it before
// the name is unlinked. Nothing named outlives the set-up; the mapping goes
// with the ShmNode. If any step fails on any rank of a node, that node's
// ranks all use MPI point-to-point with each other (and say why).
#ifndef COLLC_RUNTIME_SHM_SHMNODE_H
#define COLLC_RUNTIME_SHM_SHMNODE_H

#include "runtime/shm/ShmChannels.h"
#include "runtime/shm/TransportSettings.h"

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace collc::rt {

/// One rank's mapping of its node's region, and who is on the node.
struct ShmNode {
  ShmNode() = default;
  ShmNode(const ShmNode &) = delete;
  ShmNode &operator=(const ShmNode &) = delete;
  ~ShmNode();

  void *map = nullptr;
  size_t bytes = 0;
  std::unique_ptr<ShmEndpoint> endpoint;
  /// Per rank of the communicator: its index in the region, or -1 when it
  /// is on another node (reached through MPI).
  std::vector<int32_t> localOf;
  /// Ranks of the communicator other than this one reached through the region.
  uint32_t localPeers = 0;
  /// Ranks of the communicator on other nodes.
  uint32_t remotePeers = 0;
};

/// What setupShmNode decided.
struct ShmSetup {
  std::unique_ptr<ShmNode> node; ///< null: every peer goes through MPI
  /// Why `node` is null: nothing to share (one rank on this node), or the
  /// set-up failed (`failed`: a fallback the runtime counts and reports).
  std::string why;
  bool failed = false;
};

/// Sets up the channels among the ranks of `comm` on this node. Collective
/// over `comm` (which must have MPI_ERRORS_RETURN). `nodeMap`, when it has
/// one entry per rank of `comm`, says which ranks share a node (COLLC_NODE_MAP,
/// TransportSettings.h); otherwise MPI_Comm_split_type finds them. Every rank
/// of `comm` must pass the same map. An error Status only for a failed MPI
/// call; shared memory that cannot be set up is not an error (setup.failed).
Status setupShmNode(MPI_Comm comm, const ShmConfig &config, const std::vector<int> &nodeMap,
                    ShmSetup &setup);

} // namespace collc::rt

#endif // COLLC_RUNTIME_SHM_SHMNODE_H
