// compiler/SegmentMap.h: a map from slot ranges to values, kept as segments.
//
// Covers slots [0, size) with maximal runs of equal values, so an op on a
// range of k slots costs O(log runs + pieces) rather than O(k). Runs live in
// one sorted vector: lookups are binary searches, and the common update —
// replacing the value of exactly one existing run — moves nothing. Values
// must be equality-comparable and describe their whole run the same way
// (e.g. "chunk = slot + offset", never an absolute chunk).
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

  void reset(uint32_t size, const T &init) {
    runs_.clear();
    size_ = size;
    if (size)
      runs_.push_back({0, init});
  }
  uint32_t size() const { return size_; }
  size_t segments() const { return runs_.size(); }

  /// Calls fn(begin, end, value) for each run intersected with [b, e), in order.
  template <class F> void visit(uint32_t b, uint32_t e, F &&fn) const {
    assert(b <= e && e <= size_);
    if (b == e)
      return;
    for (size_t i = find(b); i < runs_.size() && runs_[i].start < e; ++i)
      fn(std::max(b, runs_[i].start), std::min(e, end(i)), runs_[i].value);
  }

  /// The value of one slot.
  const T &at(uint32_t slot) const {
    assert(slot < size_);
    return runs_[find(slot)].value;
  }

  /// Sets slots [b, e) to v, merging with equal neighbours.
  void assign(uint32_t b, uint32_t e, const T &v) {
    assert(b <= e && e <= size_);
    if (b == e)
      return;
    size_t i = find(b), j = find(e - 1);
    if (i == j && runs_[i].start == b && end(i) == e) {
      runs_[i].value = v; // fast path: one whole run changes value
    } else {
      // Replace runs i..j by: the part of i before b, [b, e), the part of j after e.
      Run pieces[3];
      size_t n = 0;
      if (runs_[i].start < b)
        pieces[n++] = runs_[i];
      size_t mid = n;
      pieces[n++] = Run{b, v};
      if (end(j) > e)
        pieces[n++] = Run{e, runs_[j].value};
      size_t old = j - i + 1;
      if (n > old)
        runs_.insert(runs_.begin() + i, n - old, Run{});
      else if (n < old)
        runs_.erase(runs_.begin() + i, runs_.begin() + i + (old - n));
      std::copy(pieces, pieces + n, runs_.begin() + i);
      i += mid;
    }
    // Merge run i with equal neighbours.
    if (i + 1 < runs_.size() && runs_[i + 1].value == runs_[i].value)
      runs_.erase(runs_.begin() + i + 1);
    if (i > 0 && runs_[i - 1].value == runs_[i].value)
      runs_.erase(runs_.begin() + i);
  }

private:
  struct Run {
    uint32_t start = 0;
    T value{};
  };
  /// Index of the run containing slot x (x < size).
  size_t find(uint32_t x) const {
    auto it = std::upper_bound(runs_.begin(), runs_.end(), x,
                               [](uint32_t s, const Run &r) { return s < r.start; });
    return static_cast<size_t>(it - runs_.begin()) - 1;
  }
  uint32_t end(size_t i) const { return i + 1 < runs_.size() ? runs_[i + 1].start : size_; }

  std::vector<Run> runs_;
  uint32_t size_ = 0;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_SEGMENTMAP_H
