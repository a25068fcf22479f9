// compiler/Values.h: hash-consed symbolic values of the verifier.
//
// A value is chunk-independent: the leaf x_q stands for "rank q's contribution
// to the chunk of the slot that holds it" (or, in allgather and bcast, rank q's
// data); which chunk is tracked beside the value (see Verifier.cpp). Combined
// values are binary trees a ∘ b, interned so equal trees have equal ids. The
// operands keep their order in every mode: x0 ∘ x1 and x1 ∘ x0 are different
// values even for a commutative plan (the same value on two ranks means the
// same bits, whatever the operation). Each value carries its set of
// contributing ranks, interned as a sorted list of disjoint intervals.
#ifndef COLLC_COMPILER_VALUES_H
#define COLLC_COMPILER_VALUES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::compiler {

using ValueId = uint32_t;
inline constexpr ValueId undefValue = 0;  ///< the slot holds nothing
inline constexpr ValueId poisonValue = 1; ///< result of an op already reported

/// An inclusive interval of ranks [lo..hi].
struct RankInterval {
  uint32_t lo, hi;
  bool operator==(const RankInterval &o) const { return lo == o.lo && hi == o.hi; }
};

class ValueTable {
public:
  ValueTable();

  ValueId leaf(uint32_t rank);

  /// What goes wrong when combining two values.
  enum class Fault { None, Duplicate, Order };
  struct Combined {
    ValueId value;
    Fault fault;
  };
  /// a ∘ b. Preconditions: both are real values (not undef or poison).
  /// Duplicate: the sets intersect. Order (only checked when
  /// `checkOrder`): a and b are not adjacent intervals with a below b.
  Combined combine(ValueId a, ValueId b, bool checkOrder);

  bool isLeaf(ValueId v) const { return nodes_[v].left == leafMark; }
  uint32_t leafRank(ValueId v) const { return nodes_[v].right; }
  ValueId left(ValueId v) const { return nodes_[v].left; }
  ValueId right(ValueId v) const { return nodes_[v].right; }
  llvm::ArrayRef<RankInterval> ranks(ValueId v) const;
  /// True when v's contributions are exactly [lo..hi].
  bool coversExactly(ValueId v, uint32_t lo, uint32_t hi) const;
  /// Ranks in [lo..hi] that v lacks, and ranks of v outside [lo..hi], as text.
  std::string missingRanks(ValueId v, uint32_t lo, uint32_t hi) const;
  std::string extraRanks(ValueId v, uint32_t lo, uint32_t hi) const;
  /// Ranks two values share, as text.
  std::string commonRanks(ValueId a, ValueId b) const;

  /// "x[0..3]" or "x{0..1,3}"; with `data`, leaves print as "d[3]".
  std::string show(ValueId v, bool data = false) const;
  /// The tree, "((x0 ∘ x1) ∘ x2)", cut at about `limit` characters.
  std::string showTree(ValueId v, size_t limit = 160) const;

  size_t size() const { return nodes_.size(); }
  /// Room for about n combined values (saves growing the tables).
  void reserve(size_t n) {
    nodes_.reserve(nodes_.size() + n);
    combos_.reserve(combos_.size() + n);
  }

private:
  static constexpr uint32_t leafMark = ~0u;
  /// Node::set of a value whose ranks are one interval, kept in the node.
  static constexpr uint32_t oneInterval = ~0u;
  struct Node {
    ValueId left;  ///< leafMark for a leaf
    ValueId right; ///< the rank for a leaf
    uint32_t set;  ///< interned rank set, or oneInterval: just `one`
    RankInterval one;
  };
  uint32_t internSet(llvm::ArrayRef<RankInterval> set);
  void showTree(ValueId v, std::string &out, size_t limit) const;

  std::vector<Node> nodes_;
  std::vector<ValueId> leaves_; ///< rank -> leaf id (0 = not made yet)
  llvm::DenseMap<uint64_t, ValueId> combos_;
  // Sets: intervals in one pool, each set a (begin, size) range of it.
  std::vector<RankInterval> pool_;
  std::vector<std::pair<uint32_t, uint32_t>> sets_;
  /// Hash -> the last set interned with it; setNext_ chains the others
  /// (set -> the previous one with its hash, 0 = none: set 0 is the empty
  /// set, never looked up).
  llvm::DenseMap<uint64_t, uint32_t> setIndex_;
  std::vector<uint32_t> setNext_;
  std::vector<RankInterval> scratch_;
};

/// Text of an interval list: "0..3", "0..1,5".
std::string showRanks(llvm::ArrayRef<RankInterval> set);
/// "rank 3" or "ranks 0..1,5" for the text of showRanks.
std::string ranksPhrase(const std::string &set);

} // namespace collc::compiler

#endif // COLLC_COMPILER_VALUES_H
