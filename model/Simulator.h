// model/Simulator.h: what a plan costs on a topology — a
// discrete-event model of the plan's dependency graph (docs/topology.md,
// "The cost model").
//
// The model, in full:
//  - An op starts once the ops it depends on (its rank's DAG) are done.
//  - A message of b bytes between ranks a and b costs α + b·β of the level
//    it crosses (Placement::levelOf). It starts when its send is ready and
//    its receive is posted (both ops' dependencies done: the verifier's
//    unbuffered sends), a's send port and b's receive port are free (ports
//    are full-duplex: a rank's sends serialize among themselves, and its
//    receives among themselves), and — on a level whose links are shared —
//    when a's up-link and b's down-link are free. The data holds those links
//    for b·β and arrives α later; the ports are held until it arrives. The
//    send is done when its message arrives.
//  - A recv is done when its message has arrived. A
//    recv_reduce then combines b bytes on the rank's core for γ·b; a reduce
//    costs γ·b and a copy copyβ·b on the core. A rank's core runs one local
//    op at a time (first come, first served) and overlaps its messages.
//  - Ports, links and cores go to the ops that need them in a fixed order,
//    not first come, first served: by depth (the longest chain of
//    dependencies and messages before the op), then turn (the op's place
//    among its rank's ops of that depth: a rank's messages of one step take
//    turns), then rank, then index. An op later in the order may use a gap
//    left before the intervals given out so far (backfill): a message that
//    cannot start yet does not hold up a later one that can, as a rank's
//    posted messages progress side by side in the runtime. The order does
//    not depend on the costs; with backfill the times are not strictly a
//    max-plus function of them any more (a cost change can move a message
//    into or out of a gap), so monotonicity — a faster link never slower,
//    an added dependency never faster — is checked over the library
//    (tests/model/SimulatorTest.cpp) rather than implied.
//  - The plan's time is the latest finish over all ranks.
// Byte counts follow the chunk rule (docs/plan-format.md): chunk c of an
// n-element vector in C chunks has floor((c+1)n/C) - floor(cn/C) elements;
// a range of tmp slots counts the chunks at the other end of the message, or
// the largest chunk size when both ends (or a local op) only name tmp.
#ifndef COLLC_MODEL_SIMULATOR_H
#define COLLC_MODEL_SIMULATOR_H

#include "model/Topology.h"
#include "ir/Plan.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collc::model {

/// What to simulate.
struct SimOptions {
  uint64_t bytes = 0;     ///< the vector's size in bytes (n elements × elemBytes)
  uint32_t elemBytes = 8; ///< one element (8: double); bytes is rounded down to a multiple
  double gamma = 0;       ///< reduction cost, seconds per byte (Topology::gammaOf)
  bool criticalPath = true; ///< also trace the critical path (SimResult::criticalPath)
  bool opTimes = false;     ///< also record every op's times (SimResult::ops), e.g. to draw them
};

/// Why an op of the critical path started when it did.
enum class Cause : uint8_t {
  Start,      ///< at time 0: nothing before it
  Dependency, ///< its last dependency finished
  Message,    ///< its message arrived (a recv or recv_reduce)
  SendPort,   ///< its rank's send port was busy with the previous op on the path
  RecvPort,   ///< the receiver's receive port was busy
  Link,       ///< a shared link was busy
  Core,       ///< its rank's core was busy
};
llvm::StringRef name(Cause c);

/// One op on the critical path.
struct PathStep {
  uint32_t rank = 0, op = 0;
  double start = 0, end = 0; ///< seconds
  Cause cause = Cause::Start;
  uint32_t level = 0;        ///< message ops: the level the message crosses
  uint64_t bytes = 0;        ///< the bytes the op moves or combines
};

/// When one op ran and what decided its start (SimOptions::opTimes).
struct OpTiming {
  double start = 0, end = 0; ///< seconds; start as PathStep::start
  /// A send: when its data entered the link (later than start when a shared
  /// link was busy); its message arrives at `end`. Other ops: start.
  double leaves = 0;
  Cause cause = Cause::Start;
  /// The op whose completion (or hold of a port, link or core) decided
  /// `start`; none for Cause::Start.
  std::optional<std::pair<uint32_t, uint32_t>> pred; ///< (rank, op)
  uint32_t level = 0; ///< message ops: the level the message crosses
  uint64_t bytes = 0; ///< the bytes the op moves or combines
};

/// Traffic across one level.
struct LevelTraffic {
  uint64_t messages = 0;
  uint64_t bytes = 0;
};

/// The busiest link: the most time spent moving data (b·β summed).
struct LinkUse {
  uint32_t level = 0;
  uint64_t link = 0; ///< Placement::linkOf numbering
  bool up = true;    ///< up: leaving its group; down: entering it
  double busy = 0;   ///< seconds
  uint64_t bytes = 0;
  uint64_t messages = 0;
};

/// The outcome of a simulation.
struct SimResult {
  double time = 0;                  ///< the latest finish, seconds
  std::vector<double> rankFinish;   ///< each rank's last op's end
  std::vector<LevelTraffic> levels; ///< per topology level, innermost first
  std::optional<LinkUse> busiestLink; ///< none when the plan sends nothing
  std::vector<PathStep> criticalPath; ///< first op to last (when asked for)
  std::vector<std::vector<OpTiming>> ops; ///< ops[rank][op] (when asked for)
};

/// Simulates `plan` with its ranks placed by `placement` on `topo`.
/// Preconditions: the plan is well-formed (ir/Plan.h), placement was built
/// from `topo` for plan.shape.ranks ranks. Errors: a peer out of range, sends
/// and receives that do not pair up, or ops that never complete (the plan
/// deadlocks: a wait-for cycle through dependencies and messages).
llvm::Expected<SimResult> simulate(const ir::Plan &plan, const Topology &topo,
                                   const Placement &placement, const SimOptions &opts);

/// A plan made ready to simulate at many sizes (or costs): the message
/// matching and the op order, which depend on neither, are done once, so
/// each run costs only the walk over the ops. run(o) gives what
/// simulate(plan, topo, placement, o) gives. The plan, topology and placement
/// must outlive it; one run at a time.
class PreparedSimulation {
public:
  /// Errors as simulate's: a peer out of range, unpaired messages, a deadlock.
  static llvm::Expected<PreparedSimulation> prepare(const ir::Plan &plan, const Topology &topo,
                                                    const Placement &placement);
  SimResult run(const SimOptions &opts);

  PreparedSimulation(PreparedSimulation &&) noexcept;
  PreparedSimulation &operator=(PreparedSimulation &&) noexcept;
  ~PreparedSimulation();

private:
  struct Impl;
  explicit PreparedSimulation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The plan's predicted time at each of `sizes` (bytes; elemBytes and gamma
/// as SimOptions), its ranks placed on `topo` by its mapping; +inf at every
/// size when it cannot be placed or simulated. The cost a pass manager
/// weighs passes by (compiler::PassManagerOptions::cost).
std::vector<double> predictTimes(const ir::Plan &plan, const Topology &topo,
                                 llvm::ArrayRef<uint64_t> sizes, uint32_t elemBytes,
                                 double gamma);

/// The bytes of `count` slots of `buf` from `slot` on `rank` (Buffer::Tmp:
/// count × the largest chunk).
uint64_t slotBytes(const ir::Shape &shape, uint32_t rank, ir::Slots slots, uint64_t elements,
                   uint32_t elemBytes);

/// A link as text: "network up-link 0 of node 3" (the group's location,
/// outermost level first).
std::string describeLink(const Topology &topo, const Placement &placement, const LinkUse &link);

} // namespace collc::model

#endif // COLLC_MODEL_SIMULATOR_H
