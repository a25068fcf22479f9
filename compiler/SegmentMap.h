// compiler/SegmentMap.h: a map from slot ranges to values, kept as segments.
//
// Covers slots [0, size) with maximal runs of equal values, so an op on a
// range of k slots costs O(log runs + pieces) rather than O(k). Runs live in
// sorted blocks of at most `blockRuns` runs, found by a binary search over
// the blocks' first slots and then within the block: splitting or merging a
// run moves at most one block's runs (and, when a block splits or empties,
// the list of blocks), so a buffer whose runs grow with its slots — a ring's
// p chunks, each holding another partial sum — costs O(log runs) per update,
// not O(runs). The common update, replacing the value of exactly one existing
// run, moves nothing. Values must be equality-comparable and describe their
// whole run the same way (e.g. "chunk = slot + offset", never an absolute
// chunk).
//
// Flat mode (reset(..., flat = true)) keeps one value per slot instead: an
// update costs O(slots it covers) and no search, which is faster when the
// accesses are short (a ring's one-chunk ops) and the map is small against
// them (preferFlat says when). Both modes report the same runs: visit joins
// equal neighbours, as assign merges them in segment mode.
#ifndef COLLC_COMPILER_SEGMENTMAP_H
#define COLLC_COMPILER_SEGMENTMAP_H

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

namespace collc::compiler {

template <class T> class SegmentMap {
public:
  SegmentMap() = default;
  SegmentMap(uint32_t size, const T &init) { reset(size, init); }

  /// Whether flat mode pays for a map of `size` slots that `accesses`
  /// accesses covering `slotsTouched` slots in all will use: short accesses
  /// (16 slots on average at most) and a map not much larger than them.
  static bool preferFlat(uint64_t size, uint64_t accesses, uint64_t slotsTouched) {
    return slotsTouched <= 16 * accesses && size <= 8 * accesses + 256;
  }

  void reset(uint32_t size, const T &init, bool flat = false) {
    flat_ = flat;
    if (flat) {
      cells_.assign(size, init);
      blocks_.clear();
      first_.clear();
      size_ = size;
      runs_ = 0;
      return;
    }
    cells_.clear();
    blocks_.resize(size ? 1 : 0);
    first_.assign(size ? 1 : 0, 0);
    size_ = size;
    runs_ = size ? 1 : 0;
    if (size)
      blocks_[0].assign(1, Run{0, init});
  }
  uint32_t size() const { return size_; }
  /// Asks the CPU to fetch what a search starts with (when the map will be
  /// used soon and is likely cold).
  void prefetch() const {
    if (flat_)
      return;
    __builtin_prefetch(first_.data());
    __builtin_prefetch(blocks_.data());
  }
  size_t segments() const {
    if (!flat_)
      return runs_;
    size_t n = 0;
    visit(0, size_, [&](uint32_t, uint32_t, const T &) { ++n; });
    return n;
  }
  bool flat() const { return flat_; }

  /// Calls fn(begin, end, value) for each run intersected with [b, e), in
  /// order. fn must not change the map.
  template <class F> void visit(uint32_t b, uint32_t e, F &&fn) const {
    assert(b <= e && e <= size_);
    if (b == e)
      return;
    if (flat_) {
      for (uint32_t x = b; x < e;) {
        const T &v = cells_[x];
        uint32_t y = x + 1;
        while (y < e && cells_[y] == v)
          ++y;
        fn(x, y, v);
        x = y;
      }
      return;
    }
    Pos p = find(b);
    for (size_t k = p.block; k < blocks_.size(); ++k) {
      const std::vector<Run> &blk = blocks_[k];
      const uint32_t blockEnd = k + 1 < blocks_.size() ? first_[k + 1] : size_;
      for (size_t i = k == p.block ? p.index : 0; i < blk.size(); ++i) {
        if (blk[i].start >= e)
          return;
        const uint32_t end = i + 1 < blk.size() ? blk[i + 1].start : blockEnd;
        fn(std::max(b, blk[i].start), std::min(e, end), blk[i].value);
      }
    }
  }

  /// The value of one slot.
  const T &at(uint32_t slot) const {
    assert(slot < size_);
    if (flat_)
      return cells_[slot];
    Pos p = find(slot);
    return blocks_[p.block][p.index].value;
  }

  /// Sets slots [b, e) to v, merging with equal neighbours.
  void assign(uint32_t b, uint32_t e, const T &v) {
    assert(b <= e && e <= size_);
    if (b == e)
      return;
    if (flat_) {
      std::fill(cells_.begin() + b, cells_.begin() + e, v);
      return;
    }
    Pos p = find(b);
    // Make e and then b the start of a run (found by walking from b's run:
    // the runs between are dropped anyway).
    if (e < size_) {
      Pos q = p;
      for (Pos n = next(q); n.block != noBlock && run(n).start <= e; n = next(n))
        q = n;
      if (run(q).start < e && insertAfter(q, Run{e, run(q).value}).movedBlocks)
        p = find(b);
    }
    if (run(p).start < b)
      p = insertAfter(p, Run{b, run(p).value}).pos;
    // Drop the runs after it that start before e (e starts a run now).
    for (size_t k = p.block, i = p.index + 1; k < blocks_.size();) {
      std::vector<Run> &blk = blocks_[k];
      size_t j = i;
      while (j < blk.size() && blk[j].start < e)
        ++j;
      blk.erase(blk.begin() + i, blk.begin() + j);
      runs_ -= j - i;
      if (i < blk.size()) { // the run starting at e
        if (k != p.block)
          first_[k] = blk[0].start;
        break;
      }
      if (k != p.block && blk.empty()) {
        dropBlock(k); // the next block is block k now
        continue;
      }
      ++k;
      i = 0;
    }
    blocks_[p.block][p.index].value = v;
    // Merge with the next run.
    if (Pos n = next(p); n.block != noBlock && blocks_[n.block][n.index].value == v)
      eraseRun(n);
    // Merge with the previous run.
    if (Pos q = prev(p); q.block != noBlock && blocks_[q.block][q.index].value == v)
      eraseRun(p);
  }

private:
  static constexpr size_t blockRuns = 64;
  static constexpr size_t noBlock = ~size_t(0);
  struct Run {
    uint32_t start = 0;
    T value{};
  };
  struct Pos {
    size_t block, index;
  };
  /// The run containing slot x (x < size).
  Pos find(uint32_t x) const {
    size_t k = static_cast<size_t>(std::upper_bound(first_.begin(), first_.end(), x) -
                                   first_.begin()) -
               1;
    const std::vector<Run> &blk = blocks_[k];
    auto it = std::upper_bound(blk.begin(), blk.end(), x,
                               [](uint32_t s, const Run &r) { return s < r.start; });
    return {k, static_cast<size_t>(it - blk.begin()) - 1};
  }
  Pos next(Pos p) const {
    if (p.index + 1 < blocks_[p.block].size())
      return {p.block, p.index + 1};
    if (p.block + 1 < blocks_.size())
      return {p.block + 1, 0};
    return {noBlock, 0};
  }
  Pos prev(Pos p) const {
    if (p.index > 0)
      return {p.block, p.index - 1};
    if (p.block > 0)
      return {p.block - 1, blocks_[p.block - 1].size() - 1};
    return {noBlock, 0};
  }
  const Run &run(Pos p) const { return blocks_[p.block][p.index]; }
  struct Inserted {
    Pos pos;          ///< where the new run is
    bool movedBlocks; ///< a block split: positions taken before are stale
  };
  /// Inserts r right after run at, splitting a full block in halves.
  Inserted insertAfter(Pos at, Run r) {
    bool moved = false;
    if (blocks_[at.block].size() >= blockRuns) {
      std::vector<Run> &blk = blocks_[at.block];
      const size_t half = blk.size() / 2;
      std::vector<Run> upper(blk.begin() + half, blk.end());
      blk.resize(half);
      blocks_.insert(blocks_.begin() + at.block + 1, std::move(upper));
      first_.insert(first_.begin() + at.block + 1, blocks_[at.block + 1][0].start);
      if (at.index >= half)
        at = {at.block + 1, at.index - half};
      moved = true;
    }
    std::vector<Run> &target = blocks_[at.block];
    target.insert(target.begin() + at.index + 1, r);
    ++runs_;
    return {{at.block, at.index + 1}, moved};
  }
  /// Removes run p; the run before it (there is one) now covers its slots.
  void eraseRun(Pos p) {
    std::vector<Run> &blk = blocks_[p.block];
    blk.erase(blk.begin() + p.index);
    --runs_;
    if (blk.empty())
      dropBlock(p.block);
    else if (p.index == 0)
      first_[p.block] = blk[0].start;
  }
  void dropBlock(size_t k) {
    blocks_.erase(blocks_.begin() + k);
    first_.erase(first_.begin() + k);
  }

  bool flat_ = false;
  std::vector<T> cells_; ///< flat mode: slot -> value
  std::vector<std::vector<Run>> blocks_;
  std::vector<uint32_t> first_; ///< block -> its first run's start
  uint32_t size_ = 0;
  size_t runs_ = 0;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_SEGMENTMAP_H
