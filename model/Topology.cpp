// model/Topology.cpp: topology queries, rank placement and units.
#include "model/Topology.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace collc::model {

char TopologyReadError::ID = 0;

uint64_t Topology::capacity() const {
  uint64_t c = 1;
  for (const Level &l : levels) {
    c *= l.size;
    if (c > (uint64_t(1) << 32))
      return (uint64_t(1) << 32) + 1; // saturate: checkTopology refuses it
  }
  return c;
}

double Topology::gammaOf(llvm::StringRef dtype) const {
  for (const ReduceCost &c : gammaByType)
    if (c.dtype == dtype)
      return c.gamma;
  return gamma;
}

std::optional<uint32_t> Topology::levelIndex(llvm::StringRef n) const {
  for (uint32_t j = 0; j < levels.size(); ++j)
    if (levels[j].name == n)
      return j;
  return std::nullopt;
}

namespace {
bool costOk(double v) { return std::isfinite(v) && v >= 0; }
} // namespace

std::optional<std::string> checkTopology(const Topology &t) {
  if (t.levels.empty())
    return std::string("a topology needs at least one level");
  uint64_t below = 1; // ranks per level-(j-1) group
  for (uint32_t j = 0; j < t.levels.size(); ++j) {
    const Level &l = t.levels[j];
    if (l.name.empty())
      return llvm::formatv("level {0} has no name", j).str();
    for (uint32_t i = 0; i < j; ++i)
      if (t.levels[i].name == l.name)
        return llvm::formatv("two levels are named '{0}'", l.name).str();
    if (l.size < 1)
      return llvm::formatv("level '{0}': size must be at least 1", l.name).str();
    if (!costOk(l.alpha) || !costOk(l.beta))
      return llvm::formatv("level '{0}': latency and bandwidth must be finite and >= 0", l.name)
          .str();
    if (l.share < 1 || l.share > below)
      return llvm::formatv("level '{0}': share must be 1..{1} (the ranks of one {2})", l.name,
                           below, j == 0 ? llvm::StringRef("slot")
                                         : llvm::StringRef(t.levels[j - 1].name))
          .str();
    below *= l.size;
    if (below > (uint64_t(1) << 32))
      return std::string("the topology has more than 2^32 slots");
  }
  if (!costOk(t.gamma) || !costOk(t.copyBeta))
    return std::string("reduce and copy costs must be finite and >= 0");
  for (const ReduceCost &c : t.gammaByType)
    if (!costOk(c.gamma))
      return llvm::formatv("reduce cost of '{0}' must be finite and >= 0", c.dtype).str();
  if (t.mapping == Mapping::RoundRobin && t.mapBy >= t.levels.size())
    return std::string("round-robin level out of range");
  if (t.mapping == Mapping::Explicit) {
    if (t.map.empty())
      return std::string("an explicit mapping needs at least one location");
    for (size_t r = 0; r < t.map.size(); ++r) {
      if (t.map[r].size() != t.levels.size())
        return llvm::formatv("rank {0}: a location has one coordinate per level ({1})", r,
                             t.levels.size())
            .str();
      for (uint32_t j = 0; j < t.levels.size(); ++j)
        if (t.map[r][j] >= t.levels[j].size)
          return llvm::formatv("rank {0}: coordinate {1} of level '{2}' is not below its size "
                               "{3}",
                               r, t.map[r][j], t.levels[j].name, t.levels[j].size)
              .str();
    }
  }
  return std::nullopt;
}

// --- placement ----------------------------------------------------------------

llvm::Expected<Placement> place(const Topology &t, uint32_t ranks) {
  assert(!checkTopology(t) && "place needs a valid topology");
  auto fail = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
  };
  const uint32_t k = static_cast<uint32_t>(t.levels.size());
  const uint64_t cap = t.capacity();
  if (ranks < 1)
    return fail("a placement needs at least one rank");
  if (t.mapping == Mapping::Explicit && ranks > t.map.size())
    return fail(llvm::formatv("{0} ranks, but the topology '{1}' maps only {2}", ranks, t.name,
                              t.map.size()));
  if (t.mapping != Mapping::Explicit && ranks > cap)
    return fail(llvm::formatv("{0} ranks, but the topology '{1}' has only {2} slots", ranks,
                              t.name, cap));
  Placement p;
  p.ranks_ = ranks;
  p.levels_ = k;
  p.coords_.assign(size_t(ranks) * k, 0);
  p.below_.assign(k, 1);
  for (uint32_t j = 1; j < k; ++j)
    p.below_[j] = p.below_[j - 1] * t.levels[j - 1].size;
  for (const Level &l : t.levels) {
    p.sizes_.push_back(l.size);
    p.share_.push_back(l.share);
  }
  // Links of level j: one per `share` ranks of each level-(j-1) group.
  p.linksPerGroup_.assign(k, 1);
  p.numLinks_.assign(k, 1);
  for (uint32_t j = 0; j < k; ++j) {
    p.linksPerGroup_[j] = (p.below_[j] + t.levels[j].share - 1) / t.levels[j].share;
    p.numLinks_[j] = p.linksPerGroup_[j] * (cap / p.below_[j]);
  }
  auto digits = [&](uint32_t r, uint64_t slot, uint32_t from, uint32_t to) {
    for (uint32_t j = from; j < to; ++j) {
      p.coords_[size_t(r) * k + j] = static_cast<uint32_t>(slot % t.levels[j].size);
      slot /= t.levels[j].size;
    }
  };
  for (uint32_t r = 0; r < ranks; ++r) {
    switch (t.mapping) {
    case Mapping::Block:
      digits(r, r, 0, k);
      break;
    case Mapping::RoundRobin: {
      // The groups of level mapBy take turns; inside one, ranks fill it in order.
      const uint32_t b = t.mapBy;
      const uint64_t groups = cap / (p.below_[b] * t.levels[b].size);
      digits(r, r % groups, b + 1, k);
      digits(r, r / groups, 0, b + 1);
      break;
    }
    case Mapping::Explicit:
      for (uint32_t j = 0; j < k; ++j)
        p.coords_[size_t(r) * k + j] = t.map[r][j];
      break;
    }
  }
  return p;
}

uint32_t Placement::levelOf(uint32_t a, uint32_t b) const {
  const uint32_t *ca = &coords_[size_t(a) * levels_], *cb = &coords_[size_t(b) * levels_];
  for (uint32_t j = levels_; j-- > 1;)
    if (ca[j] != cb[j])
      return j;
  return 0;
}

uint64_t Placement::linkOf(uint32_t r, uint32_t j) const {
  // The rank's level-(j-1) group and its index inside it (both mixed radix).
  const uint32_t *c = &coords_[size_t(r) * levels_];
  uint64_t local = 0, group = 0;
  for (uint32_t i = j; i-- > 0;)
    local = local * sizes_[i] + c[i];
  for (uint32_t i = levels_; i-- > j;)
    group = group * sizes_[i] + c[i];
  return group * linksPerGroup_[j] + local / share_[j];
}

std::string Placement::location(uint32_t r) const {
  std::string s;
  for (uint32_t j = levels_; j-- > 0;)
    s += std::to_string(coord(r, j)) + (j ? "." : "");
  return s;
}

// --- units ----------------------------------------------------------------------

namespace {
/// Splits "12.5GB/s" into 12.5 and "GB/s"; false when no number leads.
bool splitNumber(llvm::StringRef s, double &value, llvm::StringRef &unit) {
  s = s.trim();
  size_t i = 0;
  while (i < s.size() && (llvm::isDigit(s[i]) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                          ((s[i] == '+' || s[i] == '-') && i > 0 &&
                           (s[i - 1] == 'e' || s[i - 1] == 'E'))))
    ++i;
  // "1e" followed by a unit letter: the e belongs to the number only with digits after it.
  while (i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E'))
    --i;
  llvm::StringRef num = s.take_front(i);
  unit = s.drop_front(i).trim();
  if (num.empty() || !llvm::isDigit(num.front()))
    return false;
  if (num.getAsDouble(value) || !std::isfinite(value) || value < 0)
    return false;
  return true;
}
} // namespace

std::optional<double> parseTime(llvm::StringRef s) {
  double v = 0;
  llvm::StringRef unit;
  if (!splitNumber(s, v, unit))
    return std::nullopt;
  if (unit.empty())
    return v == 0 ? std::optional<double>(0.0) : std::nullopt;
  static const std::pair<llvm::StringRef, double> units[] = {
      {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
  for (const auto &[name, scale] : units)
    if (unit == name)
      return std::isfinite(v * scale) ? std::optional<double>(v * scale) : std::nullopt;
  return std::nullopt;
}

std::optional<double> parseBandwidth(llvm::StringRef s) {
  if (s.trim() == "inf")
    return 0.0;
  double v = 0;
  llvm::StringRef unit;
  if (!splitNumber(s, v, unit) || v <= 0 || !unit.consume_back("/s") || unit.empty())
    return std::nullopt;
  double bytes = 1;
  if (unit.consume_back("B"))
    bytes = 1;
  else if (unit.consume_back("b"))
    bytes = 1.0 / 8;
  else
    return std::nullopt;
  const bool binary = unit.consume_back("i");
  double scale = 1;
  if (!unit.empty()) {
    static const char prefixes[] = "kMGTP";
    const char *at = unit.size() == 1 ? std::strchr(prefixes, unit[0] == 'K' ? 'k' : unit[0])
                                      : nullptr;
    if (!at || !*at)
      return std::nullopt;
    for (const char *q = prefixes; q <= at; ++q)
      scale *= binary ? 1024.0 : 1000.0;
  } else if (binary) {
    return std::nullopt;
  }
  const double beta = 1.0 / (v * scale * bytes);
  if (!std::isnormal(beta) || !std::isnormal(1.0 / beta))
    return std::nullopt; // beyond what a double holds both ways
  return beta;
}

std::string formatTime(double seconds) {
  char buf[64];
  if (seconds == 0)
    return "0us";
  if (seconds >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.9gms", seconds * 1e3);
  else if (seconds >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.9gus", seconds * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.9gns", seconds * 1e9);
  return buf;
}

std::string formatBandwidth(double secondsPerByte) {
  if (secondsPerByte == 0)
    return "inf";
  char buf[64];
  const double bps = 1.0 / secondsPerByte;
  if (bps >= 1e9)
    std::snprintf(buf, sizeof buf, "%.9gGB/s", bps / 1e9);
  else if (bps >= 1e6)
    std::snprintf(buf, sizeof buf, "%.9gMB/s", bps / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.9gB/s", bps);
  return buf;
}

} // namespace collc::model
