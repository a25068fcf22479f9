// compiler/VerifierImpl.h: the verifier's internal state, shared by its parts
// (Verifier.cpp: driver, structure, matching, results; VerifyRaces.cpp;
// VerifySimulation.cpp). Not a public header.
#ifndef COLLC_COMPILER_VERIFIERIMPL_H
#define COLLC_COMPILER_VERIFIERIMPL_H

#include "compiler/SegmentMap.h"
#include "compiler/Values.h"
#include "compiler/Verifier.h"

#include "llvm/ADT/DenseSet.h"

#include <array>

namespace collc::compiler::detail {

inline constexpr uint32_t noOp = ~0u;

/// A slot's symbolic content: value v of the chunk `slot + off`.
struct SymVal {
  ValueId v = undefValue;
  int64_t off = 0;
  bool operator==(const SymVal &o) const { return v == o.v && off == o.off; }
};

/// Part of a range read out of a buffer: `len` slots holding value v, the
/// t-th of them (t relative to the range start) of chunk t + roff.
struct Piece {
  uint32_t len;
  ValueId v;
  int64_t roff;
};

/// Collects diagnostics up to the cap, counting the rest.
class Collector {
public:
  explicit Collector(unsigned cap) : cap_(cap) {}
  /// False when the next diagnostic would only be counted.
  bool wants() const { return cap_ == 0 || diags_.size() < cap_; }
  void add(Diagnostic d);
  std::vector<Diagnostic> &diags() { return diags_; }
  size_t dropped() const { return dropped_; }
  size_t total() const { return diags_.size() + dropped_; }
  /// In the aliased run: drop diagnostics identical to ones of the plain run.
  void setBaseline(size_t n) { baseline_ = n; }
  bool aliased = false;

private:
  unsigned cap_;
  size_t baseline_ = 0;
  std::vector<Diagnostic> diags_;
  size_t dropped_ = 0;
};

class Verifier {
public:
  explicit Verifier(const ir::Plan &plan);
  /// Verifies the plan with `opts`. The first call also checks its structure
  /// and matches its messages; later calls reuse that (see reusable).
  VerifyResult run(const VerifyOptions &opts);
  /// Whether a later run may reuse the first one's structure check, graphs
  /// and matching: they found nothing, and the shape differs at most in the
  /// `commutative` and `in_place` claims (and is still valid).
  bool reusable() const;
  /// verifyReordered's shortcut (Verifier.h): the result, or nothing when
  /// the plan must be verified in full (then call run).
  std::optional<VerifyResult> runReordered(const VerifyOptions &opts,
                                           const VerifyResult &before);

  // --- shared helpers -----------------------------------------------------
  uint32_t gid(uint32_t rank, uint32_t op) const { return base_[rank] + op; }
  uint32_t rankOf(uint32_t g) const { return sim_[g].rank; }
  uint32_t indexOf(uint32_t g) const { return g - base_[sim_[g].rank]; }
  const ir::Op &opOf(uint32_t g) const {
    return plan_.programs[sim_[g].rank].ops[indexOf(g)];
  }
  /// A diagnostic about op g (its rank, index and text filled in).
  Diagnostic opDiag(DiagClass cls, uint32_t g) const;
  /// "rank 1 op 3 (send out[0] to 0)"
  std::string opRef(uint32_t g) const;
  bool checkOrder() const { return opts_.noncommutative || !shape_.commutative; }
  bool dataCollective() const { return !ir::reduces(shape_.collective); }
  /// The end of the run of out slots from `slot` on whose expected chunk
  /// (ir::outChunk) is affine in the slot and whose owner (ir::outOwner) is
  /// one rank: the slot's block where either changes per block (allgather,
  /// gather, alltoall), else past any slot.
  uint32_t outRunEnd(uint32_t slot) const {
    switch (shape_.collective) {
    case ir::Collective::Allgather:
    case ir::Collective::Gather:
    case ir::Collective::Alltoall: {
      const uint32_t k = shape_.chunks / shape_.ranks;
      return (slot / k + 1) * k;
    }
    default:
      return UINT32_MAX;
    }
  }

private:
  /// Structure, dependency graphs, successor lists and message matching:
  /// what does not depend on the options or the plan's claims.
  void prepare();
  bool checkStructure();
  void matchMessages();
  void checkRaces(bool aliased);
  void checkRacesOfRank(uint32_t rank, bool aliased);
  /// With `values` false, only when each op completes (for the critical
  /// path and deadlock freedom): no buffers, no values, nothing reported.
  void simulate(bool aliased, bool values = true);
  /// Whether ops a < b of rank r conflict: a slot one of them writes is one
  /// the other touches (in and out one memory when `aliased`).
  bool conflict(uint32_t r, const ir::Op &a, const ir::Op &b, bool aliased) const;
  void reportDeadlocks();
  void checkResults();
  void checkIdentical();
  /// Barrier plans: no rank's ops all complete before every other rank has
  /// started one (VerifyBarrier.cpp). Needs a simulation where every op
  /// completed (the times order the ops causally).
  void checkSynchronized();

  // --- simulation (VerifySimulation.cpp) ------------------------------------
  struct Loc {
    SegmentMap<SymVal> *map;
    uint32_t offset; ///< slot s of the buffer is slot s + offset of the map
    bool aliasedIn;  ///< `in` read through `out` (in-place run)
  };
  Loc locate(uint32_t rank, ir::Buffer b);
  void readRange(uint32_t rank, const ir::Slots &s, llvm::SmallVectorImpl<Piece> &out);
  /// Reads the op's source or buffer range, reporting uninitialized slots and
  /// in-place reads of overwritten input; bad parts become poison.
  void readChecked(uint32_t g, const ir::Slots &s, llvm::SmallVectorImpl<Piece> &out);
  void writeRange(uint32_t g, const ir::Slots &s, llvm::ArrayRef<Piece> pieces);
  /// dst = other ∘ operand (otherFirst) or operand ∘ other.
  void combineInto(uint32_t g, const ir::Slots &operand, const ir::Slots &dst,
                   llvm::ArrayRef<Piece> other, bool otherFirst);
  void executeLocal(uint32_t g);
  void transfer(uint32_t send, uint32_t recv);

  const ir::Plan &plan_;
  const ir::Shape &shape_;
  VerifyOptions opts_;
  Collector diags_{0};
  PlanStats stats_;
  // What prepare() found, for the runs after the first.
  bool prepared_ = false;
  bool structureOk_ = false; ///< structure valid (graphs and matching built)
  bool clean_ = false;       ///< and nothing reported
  ir::Shape preparedShape_;
  PlanStats preparedStats_;
  size_t combining_ = 0; ///< recv_reduce and reduce ops

  /// Whether rank r's slot maps of `size` slots are kept flat
  /// (SegmentMap::preferFlat over the rank's accesses).
  bool flatSlots(uint32_t r, uint32_t size) const {
    return SegmentMap<SymVal>::preferFlat(size, access_[r].first, access_[r].second);
  }

  // Ops, numbered globally.
  std::vector<uint32_t> base_;   ///< rank -> first global id
  /// rank -> (slot ranges its ops access, slots those ranges cover)
  std::vector<std::pair<uint64_t, uint64_t>> access_;
  std::vector<ir::DepGraph> graphs_;
  std::vector<uint32_t> succ_; ///< global successor lists (from SimOp::succBegin)
  bool mismatched_ = false;
  /// Aliased race check: some op reads an input slot after an op listed
  /// before it wrote that slot's place in out (ordered or not).
  bool inPlaceReadAfterWrite_ = false;
  bool aliasedByOrder_ = false;
  /// Race check as a probe: nothing reported or marked, raceFound_ set.
  bool raceProbe_ = false;
  bool raceFound_ = false;

  // Simulation state.
  ValueTable values_;
  bool aliased_ = false;
  std::vector<std::array<SegmentMap<SymVal>, 3>> bufs_; ///< rank -> in, out, tmp
  std::vector<SegmentMap<uint32_t>> writers_; ///< in-place run: rank -> writer op+1 of out
  /// What the verifier keeps of op g (its global id), in one record: the
  /// simulation visits ranks in a wavefront, so separate arrays would cost
  /// a cache miss each per op.
  struct SimOp {
    uint32_t rank = 0;
    uint32_t succBegin = 0;  ///< its successors: succ_[succBegin, next op's succBegin)
    uint32_t partner = noOp; ///< matched op of a message end, or noOp
    uint32_t pending = 0;    ///< simulation: dependencies not done
    /// Simulation, waiting: the latest finish of its done dependencies;
    /// posted: when it was posted; done: when it finished.
    uint32_t time = 0;
    uint8_t state = 0; ///< simulation: 0 waiting, 1 posted, 2 done
    uint8_t racy = 0;  ///< takes part in a reported race
  };
  uint32_t succEnd(uint32_t g) const {
    return g + 1 < sim_.size() ? sim_[g + 1].succBegin : static_cast<uint32_t>(succ_.size());
  }
  const ir::Op &simOp(uint32_t g) const { return opOf(g); }
  std::vector<SimOp> sim_;
  llvm::DenseSet<uint64_t> reported_; ///< (op, class) pairs already reported
  bool report(uint32_t g, DiagClass cls) {
    return reported_.insert((uint64_t(g) << 8) | uint64_t(cls)).second;
  }
};

} // namespace collc::compiler::detail

#endif // COLLC_COMPILER_VERIFIERIMPL_H
