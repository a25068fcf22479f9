// model/Emulation.cpp: a topology truncated to the emulated cluster
// and the links the switch paces (Emulation.h states the rules).
#include "model/Emulation.h"

#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cmath>

namespace collc::model {

namespace {
llvm::Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}
} // namespace

uint32_t EmulatedNetwork::nodesPerGroup(uint32_t level) const {
  assert(level >= 1 && level <= levels.size());
  uint32_t n = 1;
  for (uint32_t j = 1; j < level; ++j)
    n *= topology.levels[j].size;
  return n;
}

uint32_t EmulatedNetwork::linkOf(uint32_t node, uint32_t level) const {
  return node / nodesPerGroup(level);
}

uint32_t EmulatedNetwork::levelOf(uint32_t a, uint32_t b) const {
  assert(a != b && a < nodes && b < nodes);
  for (uint32_t j = static_cast<uint32_t>(levels.size()); j >= 1; --j)
    if (linkOf(a, j) != linkOf(b, j))
      return j;
  llvm_unreachable("two different nodes differ at level 1");
}

llvm::Expected<EmulatedNetwork> emulate(const Topology &topo, uint32_t nodes, uint32_t ppn) {
  if (auto why = checkTopology(topo))
    return fail(*why);
  if (topo.levels.size() < 2)
    return fail(llvm::formatv("topology '{0}' has one level: an emulated cluster needs a "
                              "level above the node (docs/cluster.md)",
                              topo.name));
  if (nodes < 1 || ppn < 1)
    return fail("an emulated cluster needs at least one node of at least one rank");

  EmulatedNetwork net;
  net.nodes = nodes;
  net.ppn = ppn;
  net.topology = topo;
  Topology &t = net.topology;
  t.mapping = Mapping::Block;
  t.mapBy = 0;
  t.map.clear();
  t.levels[0].size = ppn;
  t.levels[0].share = 1;

  // Truncate the levels above the node from the inside out: each holds as
  // many groups as the nodes fill, and the nodes must fill each exactly.
  uint32_t remaining = nodes;
  uint64_t ranksBelow = ppn; // ranks per level-(j-1) group
  for (uint32_t j = 1; j < t.levels.size(); ++j) {
    Level &l = t.levels[j];
    const Level &orig = topo.levels[j];
    const uint32_t size = std::min(orig.size, remaining);
    if (remaining % size != 0)
      return fail(llvm::formatv("{0} nodes do not fill level '{1}' ({2} of its groups each): "
                                "use a multiple of {2}, or at most {2}",
                                nodes, orig.name, orig.size));
    if (orig.beta <= 0)
      return fail(llvm::formatv("level '{0}' has bandwidth inf, which a link cannot be paced "
                                "to: give it a finite bandwidth",
                                orig.name));
    const uint64_t linksPerGroup = (ranksBelow + orig.share - 1) / orig.share;
    EmulatedLevel e;
    e.name = orig.name;
    e.latency = orig.alpha;
    e.linksSummed = static_cast<uint32_t>(linksPerGroup);
    e.bytesPerSecond = static_cast<double>(linksPerGroup) / orig.beta;
    e.groups = remaining; // level-(j-1) groups on the machine: one link each
    net.levels.push_back(e);
    // As emulated: one link per group, of the summed bandwidth.
    l.size = size;
    l.share = static_cast<uint32_t>(ranksBelow);
    l.beta = orig.beta / static_cast<double>(linksPerGroup);
    remaining /= size;
    ranksBelow *= size;
  }
  if (remaining != 1)
    return fail(llvm::formatv("{0} nodes are more than topology '{1}' has ({2})", nodes,
                              topo.name, nodes / remaining));
  if (auto why = checkTopology(t))
    return fail(*why);
  return net;
}

std::string describe(const EmulatedNetwork &net) {
  std::string s;
  for (const EmulatedLevel &l : net.levels) {
    s += llvm::formatv("{0}: {1} link{2}, latency {3}, {4} each way", l.name, l.groups,
                       l.groups == 1 ? "" : "s", formatTime(l.latency),
                       formatBandwidth(1.0 / l.bytesPerSecond))
             .str();
    if (l.linksSummed > 1)
      s += llvm::formatv(" (the file's {0} links per group, summed)", l.linksSummed).str();
    s += "\n";
  }
  return s;
}

} // namespace collc::model
