// compiler/Clocks.cpp: vector clocks over a greedy chain decomposition.
#include "compiler/Clocks.h"

#include <algorithm>

namespace collc::compiler {

Clocks::Clocks(const ir::DepGraph &g) : Clocks() {
  const uint32_t n = g.size();
  chain_.reserve(n);
  pos_.reserve(n);
  begin_.reserve(n + 1);
  for (uint32_t i = 0; i < n; ++i)
    add(g.preds(i));
}

void Clocks::closedClock(uint32_t p, std::vector<std::pair<uint32_t, uint32_t>> &out) const {
  // p's clock with p itself counted in its own chain (ops of a chain are a
  // path, so p's ancestors in it are the ones before it).
  out.clear();
  const uint32_t own = chain_[p], count = pos_[p] + 1;
  bool placed = false;
  for (const auto &e : clock(p)) {
    if (!placed && e.first >= own) {
      placed = true;
      out.push_back({own, std::max(count, e.first == own ? e.second : 0)});
      if (e.first == own)
        continue;
    }
    out.push_back(e);
  }
  if (!placed)
    out.push_back({own, count});
}

void Clocks::add(llvm::ArrayRef<uint32_t> preds) {
  // Ops of one step share their predecessors: reuse the merged clock.
  if (haveLast_ && llvm::ArrayRef<uint32_t>(lastPreds_) == preds) {
    // merged_ is the clock already.
  } else if (preds.size() == 1) {
    closedClock(preds[0], merged_);
  } else if (preds.size() == 2) {
    // The common case past one predecessor: a merge of two sorted clocks.
    closedClock(preds[0], left_);
    closedClock(preds[1], right_);
    merged_.clear();
    size_t i = 0, j = 0;
    while (i < left_.size() || j < right_.size()) {
      if (j == right_.size() || (i < left_.size() && left_[i].first < right_[j].first)) {
        merged_.push_back(left_[i++]);
      } else if (i == left_.size() || right_[j].first < left_[i].first) {
        merged_.push_back(right_[j++]);
      } else {
        merged_.push_back({left_[i].first, std::max(left_[i].second, right_[j].second)});
        ++i;
        ++j;
      }
    }
  } else {
    merged_.clear();
    auto visit = [&](uint32_t c, uint32_t v) {
      if (c >= dense_.size())
        dense_.resize(c + 1, 0);
      if (dense_[c] == 0)
        touched_.push_back(c);
      dense_[c] = std::max(dense_[c], v);
    };
    for (uint32_t p : preds) {
      for (auto [c, v] : clock(p))
        visit(c, v);
      visit(chain_[p], pos_[p] + 1);
    }
    std::sort(touched_.begin(), touched_.end());
    for (uint32_t c : touched_) {
      merged_.push_back({c, dense_[c]});
      dense_[c] = 0;
    }
    touched_.clear();
  }
  lastPreds_.assign(preds.begin(), preds.end());
  haveLast_ = true;
  // Extend the chain of a predecessor that is still its chain's tail.
  uint32_t chain = none;
  for (uint32_t p : preds)
    if (chainLen_[chain_[p]] == pos_[p] + 1) {
      chain = chain_[p];
      break;
    }
  if (chain == none) {
    chain = static_cast<uint32_t>(chainLen_.size());
    chainLen_.push_back(0);
  }
  chain_.push_back(chain);
  pos_.push_back(chainLen_[chain]++);
  pool_.insert(pool_.end(), merged_.begin(), merged_.end());
  begin_.push_back(static_cast<uint32_t>(pool_.size()));
}

} // namespace collc::compiler
