// compiler/Clocks.h: ancestry in one rank's dependency DAG, by vector clocks.
//
// The ops are numbered in a topological order (dependencies point to lower
// numbers) and added one at a time with their predecessors. Each op joins the
// chain of a predecessor that is still its chain's tail, or starts a chain
// (a greedy chain decomposition); its clock lists, per chain among its
// ancestors, how many ops of that chain precede it, stored sparsely and
// sorted. So `before` is a binary search, and plans whose ranks run a few
// chains side by side (every generated plan) cost about O(ops · log chains)
// time and memory — where a bit matrix would cost O(ops²).
#ifndef COLLC_COMPILER_CLOCKS_H
#define COLLC_COMPILER_CLOCKS_H

#include "ir/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace collc::compiler {

class Clocks {
public:
  Clocks() { begin_.push_back(0); }
  /// The clocks of a whole program's DAG.
  explicit Clocks(const ir::DepGraph &g);

  /// Adds op size() with predecessors `preds` (each < size(), any order,
  /// duplicates allowed).
  void add(llvm::ArrayRef<uint32_t> preds);

  /// Ops added so far.
  uint32_t size() const { return static_cast<uint32_t>(chain_.size()); }

  /// True when op a is a strict ancestor of op b (a path a → ... → b).
  /// Precondition: both were added.
  bool before(uint32_t a, uint32_t b) const {
    if (a >= b)
      return false;
    if (chain_[a] == chain_[b])
      return pos_[a] < pos_[b];
    llvm::ArrayRef<std::pair<uint32_t, uint32_t>> c = clock(b);
    auto it = std::lower_bound(c.begin(), c.end(), std::make_pair(chain_[a], 0u));
    return it != c.end() && it->first == chain_[a] && it->second > pos_[a];
  }

private:
  llvm::ArrayRef<std::pair<uint32_t, uint32_t>> clock(uint32_t i) const {
    return llvm::ArrayRef<std::pair<uint32_t, uint32_t>>(pool_).slice(
        begin_[i], begin_[i + 1] - begin_[i]);
  }
  /// out = p's clock counting p itself in its chain (what p passes on).
  void closedClock(uint32_t p, std::vector<std::pair<uint32_t, uint32_t>> &out) const;
  static constexpr uint32_t none = ~0u;
  std::vector<uint32_t> chain_, pos_, chainLen_;
  std::vector<uint32_t> begin_;
  std::vector<std::pair<uint32_t, uint32_t>> pool_; ///< (chain, ops of it before)
  // The clock merged for the last predecessor list (ops of one step share it).
  llvm::SmallVector<uint32_t, 8> lastPreds_;
  bool haveLast_ = false;
  std::vector<std::pair<uint32_t, uint32_t>> merged_, left_, right_;
  std::vector<uint32_t> dense_, touched_;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_CLOCKS_H
