// model/Topology.h: a machine as data — levels, costs, rank placement
// (docs/topology.md, format `collc-topology/1`).
//
// A topology is a hierarchy of levels, innermost first (for example node <
// network, or socket < node < rack). Level j groups `size` children: level 0
// groups ranks (slots), level j > 0 groups level-(j-1) groups, and the
// outermost level's one group is the whole machine. A rank's *location* is
// one coordinate per level (its child index in each group). A message between
// two ranks *crosses* the outermost level at which their locations differ and
// costs that level's α + bytes·β; `share` ranks of a level-(j-1) group use one
// link of level j (a node's NIC), so their messages across level j contend.
// Reductions cost γ per byte (per datatype), local copies one per copy
// bandwidth.
//
// Invariants of a Topology the reader returns (checkTopology; past it, code
// asserts): at least one level, every size >= 1, capacity() <= 2^32,
// level names distinct and non-empty, α, β, γ finite and >= 0, 1 <= share <=
// ranks per level-(j-1) group (1 at level 0), mapBy < levels, explicit
// locations in range.
#ifndef COLLC_MODEL_TOPOLOGY_H
#define COLLC_MODEL_TOPOLOGY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::model {

/// One level of the hierarchy.
struct Level {
  std::string name;
  uint32_t size = 1;  ///< children per group: ranks at level 0, level-(j-1) groups above
  double alpha = 0;   ///< latency of a message crossing this level, seconds
  double beta = 0;    ///< inverse bandwidth of such a message, seconds per byte
  uint32_t share = 1; ///< ranks of one level-(j-1) group per link of this level
};

/// How ranks are placed on the slots (as `mpirun --map-by` would).
enum class Mapping : uint8_t {
  Block,      ///< rank r on slot r: fill each innermost group before the next
  RoundRobin, ///< consecutive ranks on consecutive groups of level `mapBy`
  Explicit,   ///< rank r at `map[r]`
};

/// The reduction cost of one datatype (its name as collc-bench's --dtype).
struct ReduceCost {
  std::string dtype;
  double gamma = 0; ///< seconds per byte combined
};

/// A machine description (docs/topology.md).
struct Topology {
  std::string name;
  std::string description;
  std::vector<Level> levels;     ///< innermost first
  double gamma = 0;              ///< reduction, seconds per byte: the default
  std::vector<ReduceCost> gammaByType; ///< overrides of `gamma` per datatype
  double copyBeta = 0;           ///< local copy, seconds per byte (0: free)
  Mapping mapping = Mapping::Block;
  uint32_t mapBy = 0;            ///< RoundRobin: the level whose groups alternate
  /// Explicit: one location per rank, one coordinate per level, innermost
  /// first (the text writes them outermost first).
  std::vector<std::vector<uint32_t>> map;

  /// Slots on the machine: the product of the level sizes.
  uint64_t capacity() const;
  /// γ of `dtype` (its override, else the default).
  double gammaOf(llvm::StringRef dtype) const;
  /// The index of the level named `name`.
  std::optional<uint32_t> levelIndex(llvm::StringRef name) const;
};

/// Where P ranks sit on a topology, with the queries the simulator needs.
/// Built by `place`; valid while the topology lives.
class Placement {
public:
  uint32_t ranks() const { return ranks_; }
  uint32_t numLevels() const { return levels_; }
  /// Rank r's coordinate at level j (its child index in its level-j group).
  uint32_t coord(uint32_t r, uint32_t j) const { return coords_[size_t(r) * levels_ + j]; }
  /// The level a message from a to b crosses: the outermost level at which
  /// their locations differ (0 when they share a slot).
  uint32_t levelOf(uint32_t a, uint32_t b) const;
  /// The link of level j that rank r uses (a dense index below numLinks(j)).
  uint64_t linkOf(uint32_t r, uint32_t j) const;
  /// Links of level j over the whole machine.
  uint64_t numLinks(uint32_t j) const { return numLinks_[j]; }
  /// Links of level j in one level-(j-1) group: linkOf(r, j) is the group's
  /// number times this plus the link's index in the group.
  uint64_t linksPerGroup(uint32_t j) const { return linksPerGroup_[j]; }
  /// Rank r's location as text, outermost level first: "node 3, core 17"...
  /// written "3.17".
  std::string location(uint32_t r) const;

private:
  friend llvm::Expected<Placement> place(const Topology &topo, uint32_t ranks);
  uint32_t ranks_ = 0, levels_ = 0;
  std::vector<uint32_t> coords_;     ///< ranks × levels
  std::vector<uint64_t> below_;      ///< ranks per level-j group below level j (level 0: 1)
  std::vector<uint64_t> linksPerGroup_; ///< links of level j per level-(j-1) group
  std::vector<uint64_t> numLinks_;
  std::vector<uint32_t> sizes_;
  std::vector<uint32_t> share_;
};

/// Places `ranks` ranks by the topology's mapping; an error when they do not
/// fit (more ranks than slots, or than explicit locations).
llvm::Expected<Placement> place(const Topology &topo, uint32_t ranks);

/// Why the topology breaks an invariant of this header, or nullopt.
std::optional<std::string> checkTopology(const Topology &topo);

// --- text ---------------------------------------------------------------------

/// The format tag this build reads and writes.
inline constexpr llvm::StringLiteral topologyFormatTag = "collc-topology/1";

/// An error of the topology reader; its message is the full diagnostic,
/// `file:line:column: error: message`, or `cannot read 'file': why`.
class TopologyReadError : public llvm::ErrorInfo<TopologyReadError> {
public:
  static char ID;
  explicit TopologyReadError(std::string message) : message_(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string message_;
};

/// Parses topology text; `fileName` labels error positions.
llvm::Expected<Topology> parseTopology(llvm::StringRef text, llvm::StringRef fileName);
/// Reads and parses a file; "-" reads standard input.
llvm::Expected<Topology> readTopologyFile(llvm::StringRef path);
/// Writes the topology as text that parseTopology reads back (times and
/// bandwidths with 9 significant digits).
void printTopology(const Topology &topo, llvm::raw_ostream &os);
std::string printTopology(const Topology &topo);

/// Parses a time with its unit ("1.5us", "800ns", "2ms", "0.1s", "0").
std::optional<double> parseTime(llvm::StringRef s);
/// Parses a bandwidth ("12.5GB/s", "100Gb/s", "800MiB/s", "inf") into
/// seconds per byte (inf: 0).
std::optional<double> parseBandwidth(llvm::StringRef s);
/// "1.5us" / "12.5GB/s" text of a time (seconds) / an inverse bandwidth.
std::string formatTime(double seconds);
std::string formatBandwidth(double secondsPerByte);

} // namespace collc::model

#endif // COLLC_MODEL_TOPOLOGY_H
