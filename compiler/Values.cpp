// compiler/Values.cpp: interning of values and rank sets.
#include "compiler/Values.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>

namespace collc::compiler {

ValueTable::ValueTable() {
  sets_.push_back({0, 0}); // the empty set, for undef and poison
  nodes_.push_back({leafMark, ~0u, 0, {}}); // undefValue
  nodes_.push_back({leafMark, ~0u, 0, {}}); // poisonValue
}

uint32_t ValueTable::internSet(llvm::ArrayRef<RankInterval> set) {
  uint64_t h = llvm::hash_combine_range(
      reinterpret_cast<const uint32_t *>(set.data()),
      reinterpret_cast<const uint32_t *>(set.data() + set.size()));
  auto [it, fresh] = setIndex_.try_emplace(h, 0);
  if (!fresh)
    for (uint32_t id = it->second; id; id = setNext_[id]) {
      auto [b, n] = sets_[id];
      if (llvm::ArrayRef<RankInterval>(pool_).slice(b, n) == set)
        return id;
    }
  uint32_t id = static_cast<uint32_t>(sets_.size());
  sets_.push_back({static_cast<uint32_t>(pool_.size()), static_cast<uint32_t>(set.size())});
  pool_.insert(pool_.end(), set.begin(), set.end());
  setNext_.resize(id + 1, 0);
  setNext_[id] = it->second;
  it->second = id;
  return id;
}

ValueId ValueTable::leaf(uint32_t rank) {
  if (rank >= leaves_.size())
    leaves_.resize(rank + 1, 0);
  if (leaves_[rank])
    return leaves_[rank];
  ValueId v = static_cast<ValueId>(nodes_.size());
  nodes_.push_back({leafMark, rank, oneInterval, RankInterval{rank, rank}});
  leaves_[rank] = v;
  return v;
}

llvm::ArrayRef<RankInterval> ValueTable::ranks(ValueId v) const {
  const Node &node = nodes_[v];
  if (node.set == oneInterval)
    return llvm::ArrayRef<RankInterval>(&node.one, 1);
  auto [b, n] = sets_[node.set];
  return llvm::ArrayRef<RankInterval>(pool_).slice(b, n);
}

ValueTable::Combined ValueTable::combine(ValueId a, ValueId b, bool checkOrder) {
  assert(a > poisonValue && b > poisonValue && "combine of undef or poison");
  llvm::ArrayRef<RankInterval> sa = ranks(a), sb = ranks(b);
  Fault fault = Fault::None;
  if (checkOrder && !(sa.size() == 1 && sb.size() == 1 && sa[0].hi + 1 == sb[0].lo))
    fault = Fault::Order;

  // Merge the two interval lists, detecting overlap and joining neighbours.
  scratch_.clear();
  size_t i = 0, j = 0;
  auto push = [&](RankInterval x) {
    if (!scratch_.empty() && scratch_.back().hi + 1 >= x.lo) {
      if (scratch_.back().hi >= x.lo)
        fault = Fault::Duplicate;
      scratch_.back().hi = std::max(scratch_.back().hi, x.hi);
    } else {
      scratch_.push_back(x);
    }
  };
  while (i < sa.size() || j < sb.size()) {
    bool takeA = j == sb.size() || (i < sa.size() && sa[i].lo <= sb[j].lo);
    push(takeA ? sa[i++] : sb[j++]);
  }
  if (fault != Fault::None)
    return {poisonValue, fault};

  const ValueId l = a, r = b;
  // DenseMap hashes a 64-bit key as key * 37, which keeps only the low bits'
  // variety: keys (l, r) with one r would share a bucket chain (ring at
  // p = 1024 makes millions of them). A bijective mix spreads them.
  uint64_t key = (uint64_t(l) << 32) | r;
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  auto [it, fresh] = combos_.try_emplace(key, 0);
  if (fresh) {
    it->second = static_cast<ValueId>(nodes_.size());
    // Reads of sa and sb are done: pushing may move the nodes they point into.
    if (scratch_.size() == 1)
      nodes_.push_back({l, r, oneInterval, scratch_[0]});
    else
      nodes_.push_back({l, r, internSet(scratch_), {}});
  }
  return {it->second, Fault::None};
}

bool ValueTable::coversExactly(ValueId v, uint32_t lo, uint32_t hi) const {
  auto s = ranks(v);
  return s.size() == 1 && s[0].lo == lo && s[0].hi == hi;
}

namespace {
// Set difference a \ b of interval lists.
std::vector<RankInterval> subtract(llvm::ArrayRef<RankInterval> a,
                                   llvm::ArrayRef<RankInterval> b) {
  std::vector<RankInterval> out;
  size_t j = 0;
  for (RankInterval x : a) {
    uint64_t lo = x.lo;
    while (j < b.size() && b[j].hi < lo)
      ++j;
    for (size_t k = j; k < b.size() && b[k].lo <= x.hi; ++k) {
      if (b[k].lo > lo)
        out.push_back({uint32_t(lo), b[k].lo - 1});
      lo = uint64_t(b[k].hi) + 1;
    }
    if (lo <= x.hi)
      out.push_back({uint32_t(lo), x.hi});
  }
  return out;
}
std::vector<RankInterval> intersect(llvm::ArrayRef<RankInterval> a,
                                    llvm::ArrayRef<RankInterval> b) {
  std::vector<RankInterval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint32_t lo = std::max(a[i].lo, b[j].lo), hi = std::min(a[i].hi, b[j].hi);
    if (lo <= hi)
      out.push_back({lo, hi});
    (a[i].hi < b[j].hi) ? ++i : ++j;
  }
  return out;
}
} // namespace

std::string showRanks(llvm::ArrayRef<RankInterval> set) {
  std::string s;
  for (size_t i = 0; i < set.size(); ++i) {
    if (i)
      s += ',';
    s += set[i].lo == set[i].hi ? std::to_string(set[i].lo)
                                : llvm::formatv("{0}..{1}", set[i].lo, set[i].hi).str();
  }
  return s;
}

std::string ranksPhrase(const std::string &set) {
  bool one = set.find_first_of(".,") == std::string::npos;
  return (one ? "rank " : "ranks ") + set;
}

std::string ValueTable::missingRanks(ValueId v, uint32_t lo, uint32_t hi) const {
  RankInterval want{lo, hi};
  return showRanks(subtract(want, ranks(v)));
}

std::string ValueTable::extraRanks(ValueId v, uint32_t lo, uint32_t hi) const {
  RankInterval want{lo, hi};
  return showRanks(subtract(ranks(v), want));
}

std::string ValueTable::commonRanks(ValueId a, ValueId b) const {
  return showRanks(intersect(ranks(a), ranks(b)));
}

std::string ValueTable::show(ValueId v, bool data) const {
  if (v == undefValue)
    return "nothing";
  if (v == poisonValue)
    return "an invalid value";
  if (data && isLeaf(v))
    return llvm::formatv("d[{0}]", leafRank(v)).str();
  auto s = ranks(v);
  if (s.size() == 1)
    return llvm::formatv("x[{0}..{1}]", s[0].lo, s[0].hi).str();
  return "x{" + showRanks(s) + "}";
}

void ValueTable::showTree(ValueId v, std::string &out, size_t limit) const {
  if (out.size() > limit) {
    return;
  }
  if (v <= poisonValue) {
    out += show(v);
    return;
  }
  if (isLeaf(v)) {
    out += "x" + std::to_string(leafRank(v));
    return;
  }
  out += '(';
  showTree(left(v), out, limit);
  out += " ∘ ";
  showTree(right(v), out, limit);
  out += ')';
}

std::string ValueTable::showTree(ValueId v, size_t limit) const {
  std::string out;
  showTree(v, out, limit);
  if (out.size() > limit) {
    size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
      --cut; // keep UTF-8 sequences whole
    out = out.substr(0, cut) + " ...";
  }
  return out;
}

} // namespace collc::compiler
