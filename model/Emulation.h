// model/Emulation.h: how a topology becomes the emulated cluster's
// network (scripts/cluster, docs/cluster.md).
//
// The emulated cluster runs N nodes of K ranks on one machine: each node is a
// network namespace whose one interface is a port of a switch process
// (collc-netswitch) that delays and paces every frame as the topology's
// levels above the node say. Inside a node the ranks share memory for real;
// level 0's costs are this machine's own and are not emulated.
//
// From the topology file, N and K this header derives:
// - the topology *as emulated*: level 0 holds K ranks, each level above holds
//   only as many groups as N nodes fill (the sizes truncated from the inside
//   out, so N must fill every truncated level exactly), `share` capped at the
//   ranks below it, block mapping (the hostfile fills node 0 first, as
//   mpirun's default --map-by slot does). `collc simulate` on it predicts the
//   emulated machine.
// - the links: for every level j >= 1, one full-duplex link per level-(j-1)
//   group (a node's NIC at level 1, a rack's uplink at level 2). A level
//   whose `share` gives a group several links is emulated as one link of
//   their summed bandwidth (messages of the group still share it; one
//   message alone is faster than on one real link of several).
// - per level j, the latency a frame crossing it gets: α_j of the file, once,
//   whatever links it passes.
//
// Invariants of an EmulatedNetwork (emulate checks them): nodes >= 1, ppn >=
// 1, every node's group index at each level below the level's group count,
// bandwidths > 0 (a level with bandwidth `inf` is refused: nothing can pace it).
#ifndef COLLC_MODEL_EMULATION_H
#define COLLC_MODEL_EMULATION_H

#include "model/Topology.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::model {

/// One level above the node, as the switch emulates it.
struct EmulatedLevel {
  std::string name;
  double latency = 0;         ///< seconds added once to a frame that crosses this level
  double bytesPerSecond = 0;  ///< rate of one group's link (each direction)
  uint32_t linksSummed = 1;   ///< the topology's links per group folded into it
  uint32_t groups = 0;        ///< level-(j-1) groups on the emulated machine: links of this level
};

/// The emulated cluster's network.
struct EmulatedNetwork {
  uint32_t nodes = 0;
  uint32_t ppn = 0;
  Topology topology;                  ///< the machine as emulated (see the banner)
  std::vector<EmulatedLevel> levels;  ///< levels 1.. of the topology; index j-1
  /// The link of level j (1-based) that node n uses: n / (nodes per level-(j-1) group).
  uint32_t linkOf(uint32_t node, uint32_t level) const;
  /// The level a frame from node a to node b crosses (>= 1; a != b).
  uint32_t levelOf(uint32_t a, uint32_t b) const;
  /// Nodes per level-(j-1) group, j >= 1 (1 at j = 1).
  uint32_t nodesPerGroup(uint32_t level) const;
};

/// Derives the emulated network of `nodes` nodes of `ppn` ranks from a
/// topology with at least two levels; an error naming the reason otherwise.
llvm::Expected<EmulatedNetwork> emulate(const Topology &topo, uint32_t nodes, uint32_t ppn);

/// The network as one line per level: "network: 2 links, 50us, 1Gb/s each".
std::string describe(const EmulatedNetwork &net);

} // namespace collc::model

#endif // COLLC_MODEL_EMULATION_H
