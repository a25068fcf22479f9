// runtime/bytecode/Bundle.cpp: reading, validating and writing .cbundle files
// (docs/bundle.md). Every read is bounds-checked against the input first.
#include "runtime/bytecode/Bundle.h"

#include "runtime/bytecode/Loader.h"

#include <algorithm>

namespace collc::rt {

namespace {

Status corrupt(size_t at, const std::string &m) {
  return Status::error(ErrorCode::Corrupt, "offset " + hex(at) + ": " + m);
}
Status malformed(size_t at, const std::string &m) {
  return Status::error(ErrorCode::Malformed, "offset " + hex(at) + ": " + m);
}
Status invalid(const std::string &m) { return Status::error(ErrorCode::Invalid, m); }

/// Checks one entry's plan against the bundle's shape; `what` names it.
Status checkPlan(const std::string &what, const LoadedPlan &p, Collective c, uint32_t ranks) {
  if (p.partial)
    return invalid(what + ": a partial plan (rank " + std::to_string(p.own) +
                   "'s program) cannot be bundled: a bundle holds whole plans");
  if (p.shape.collective != c)
    return invalid(what + ": the plan is for " + name(p.shape.collective) +
                   ", the bundle for " + name(c));
  if (p.shape.ranks != ranks)
    return invalid(what + ": the plan is for " + std::to_string(p.shape.ranks) +
                   " ranks, the bundle for " + std::to_string(ranks));
  return Status::success();
}

/// Entries i < j with the same root and overlapping ranges.
Status checkOverlaps(const std::vector<BundleEntry> &entries,
                     const std::vector<LoadedPlan> &plans) {
  for (size_t i = 0; i < entries.size(); ++i)
    for (size_t j = i + 1; j < entries.size(); ++j) {
      if (plans[i].shape.root != plans[j].shape.root)
        continue;
      const BundleEntry &a = entries[i], &b = entries[j];
      if (a.minBytes < b.maxBytes && b.minBytes < a.maxBytes)
        return invalid("entries " + std::to_string(i) + " (" +
                       formatByteRange(a.minBytes, a.maxBytes) + ") and " +
                       std::to_string(j) + " (" + formatByteRange(b.minBytes, b.maxBytes) +
                       ") overlap" +
                       (hasRoot(plans[i].shape.collective)
                            ? " for root " + std::to_string(plans[i].shape.root)
                            : std::string()));
    }
  return Status::success();
}

std::string formatBound(uint64_t v) {
  static const char suffix[] = {'G', 'M', 'K'};
  static const unsigned shift[] = {30, 20, 10};
  for (unsigned k = 0; k < 3; ++k)
    if (v && v % (uint64_t(1) << shift[k]) == 0)
      return std::to_string(v >> shift[k]) + suffix[k];
  return std::to_string(v);
}

} // namespace

bool looksLikeBundle(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::equal(bundle::magic, bundle::magic + 4, bytes.begin());
}

Status readBundle(std::span<const uint8_t> bytes, Bundle &out) {
  using namespace bundle;
  out = Bundle();
  const size_t n = bytes.size();
  if (n == 0)
    return Status::error(ErrorCode::NotAPlan, "the file is empty");
  if (!looksLikeBundle(bytes)) {
    if (n >= 4 && std::equal(format::magic, format::magic + 4, bytes.begin()))
      return Status::error(ErrorCode::NotAPlan,
                           "this is a compiled plan (.cplan), not a bundle");
    return Status::error(ErrorCode::NotAPlan, "not a collc plan bundle (bad magic)");
  }
  if (n <= offVersion)
    return corrupt(n, "truncated: the header needs " + std::to_string(headerSize) + " bytes");
  if (bytes[offVersion] != version)
    return Status::error(ErrorCode::Unsupported,
                         "bundle format version " + std::to_string(bytes[offVersion]) +
                             " is not supported: this reader reads version " +
                             std::to_string(version));
  if (n < headerSize + checksumSize)
    return corrupt(n, "truncated: " + std::to_string(n) + " bytes, shorter than the " +
                          std::to_string(headerSize + checksumSize) +
                          "-byte header and checksum");
  const uint32_t size = readU32(&bytes[offSize]);
  if (size != n)
    return corrupt(offSize, size > n ? "truncated: the size field says " + std::to_string(size) +
                                           " bytes, the input has " + std::to_string(n)
                                     : "trailing bytes: the size field says " +
                                           std::to_string(size) + " bytes, the input has " +
                                           std::to_string(n));
  const uint32_t stored = readU32(&bytes[n - checksumSize]);
  const uint32_t actual = crc32(bytes.first(n - checksumSize));
  if (stored != actual)
    return corrupt(n - checksumSize, "checksum mismatch (stored " + hex(stored) +
                                         ", computed " + hex(actual) + ")");
  if (bytes[offReserved] != 0 || bytes[offReserved + 1] != 0)
    return malformed(offReserved, "reserved bytes are not zero");
  if (bytes[offCollective] >= numCollectives)
    return malformed(offCollective,
                     "unknown collective code " + std::to_string(bytes[offCollective]));
  const Collective coll = static_cast<Collective>(bytes[offCollective]);
  const uint32_t ranks = readU32(&bytes[offRanks]);
  if (ranks < 1 || ranks > format::maxRanks)
    return malformed(offRanks, "ranks " + std::to_string(ranks) + " out of range (1.." +
                                   std::to_string(format::maxRanks) + ")");
  const uint32_t count = readU32(&bytes[offEntries]);
  if (count < 1 || count > maxEntries)
    return malformed(offEntries, "entry count " + std::to_string(count) +
                                     " out of range (1.." + std::to_string(maxEntries) + ")");
  const uint64_t tableEnd = headerSize + uint64_t(count) * entrySize;
  if (tableEnd > n - checksumSize)
    return corrupt(headerSize, "the entry table (" + std::to_string(count) +
                                   " entries) runs past the end of the file");

  Bundle b;
  b.collective = coll;
  b.ranks = ranks;
  b.entries.resize(count);
  b.plans.resize(count);
  uint64_t expected = tableEnd;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = headerSize + size_t(i) * entrySize;
    const std::string what = "entry " + std::to_string(i);
    BundleEntry &e = b.entries[i];
    e.minBytes = readU64(&bytes[at]);
    e.maxBytes = readU64(&bytes[at + 8]);
    const uint32_t off = readU32(&bytes[at + 16]);
    const uint32_t len = readU32(&bytes[at + 20]);
    if (e.minBytes >= e.maxBytes)
      return malformed(at, what + ": empty byte range [" + std::to_string(e.minBytes) + ", " +
                               std::to_string(e.maxBytes) + ")");
    if (off != expected)
      return malformed(at + 16, what + ": plan offset " + hex(off) + ", expected " +
                                    hex(expected) + " (plans are back to back)");
    if (uint64_t(off) + len > n - checksumSize)
      return corrupt(at + 20, what + ": the plan (" + std::to_string(len) +
                                  " bytes at " + hex(off) + ") runs into the checksum");
    expected = uint64_t(off) + len;
    const std::span<const uint8_t> plan = bytes.subspan(off, len);
    if (Status s = load(plan, b.plans[i]); !s.ok())
      return Status::error(s.code(), what + " (the plan at " + hex(off) + "): " + s.message());
    COLLC_RT_TRY(checkPlan(what, b.plans[i], coll, ranks));
    e.plan.assign(plan.begin(), plan.end());
  }
  if (expected != n - checksumSize)
    return malformed(expected, std::to_string(n - checksumSize - expected) +
                                   " bytes between the last plan and the checksum");
  COLLC_RT_TRY(checkOverlaps(b.entries, b.plans));
  out = std::move(b);
  return Status::success();
}

Status writeBundle(const std::vector<BundleEntry> &entries, std::vector<uint8_t> &out) {
  using namespace bundle;
  out.clear();
  if (entries.empty())
    return invalid("a bundle needs at least one plan");
  if (entries.size() > maxEntries)
    return invalid("a bundle holds at most " + std::to_string(maxEntries) + " plans, not " +
                   std::to_string(entries.size()));
  std::vector<LoadedPlan> plans(entries.size());
  uint64_t total = headerSize + entries.size() * entrySize + checksumSize;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string what = "plan " + std::to_string(i);
    if (entries[i].minBytes >= entries[i].maxBytes)
      return invalid(what + ": empty byte range");
    if (Status s = load(entries[i].plan, plans[i]); !s.ok())
      return Status::error(s.code(), what + ": " + s.message());
    COLLC_RT_TRY(checkPlan(what, plans[i], plans[0].shape.collective, plans[0].shape.ranks));
    total += entries[i].plan.size();
  }
  if (total > UINT32_MAX)
    return invalid("the bundle would be larger than 4 GiB");
  COLLC_RT_TRY(checkOverlaps(entries, plans));

  out.insert(out.end(), magic, magic + 4);
  out.push_back(version);
  out.push_back(static_cast<uint8_t>(plans[0].shape.collective));
  out.push_back(0);
  out.push_back(0);
  appendU32(out, uint32_t(total));
  appendU32(out, plans[0].shape.ranks);
  appendU32(out, uint32_t(entries.size()));
  uint64_t off = headerSize + entries.size() * entrySize;
  for (const BundleEntry &e : entries) {
    appendU64(out, e.minBytes);
    appendU64(out, e.maxBytes);
    appendU32(out, uint32_t(off));
    appendU32(out, uint32_t(e.plan.size()));
    off += e.plan.size();
  }
  for (const BundleEntry &e : entries)
    out.insert(out.end(), e.plan.begin(), e.plan.end());
  appendU32(out, crc32(out));
  return Status::success();
}

std::string formatByteRange(uint64_t minBytes, uint64_t maxBytes) {
  return formatBound(minBytes) + "-" +
         (maxBytes == bundle::unbounded ? std::string() : formatBound(maxBytes));
}

bool parseByteCount(std::string_view t, uint64_t &value) {
  if (t.empty())
    return false;
  unsigned shift = 0;
  switch (t.back()) {
  case 'k':
  case 'K':
    shift = 10;
    break;
  case 'm':
  case 'M':
    shift = 20;
    break;
  case 'g':
  case 'G':
    shift = 30;
    break;
  }
  if (shift)
    t.remove_suffix(1);
  if (t.empty() || t.size() > 19)
    return false;
  uint64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + uint64_t(c - '0');
  }
  if (shift && v > (bundle::unbounded >> shift))
    return false;
  value = v << shift;
  return true;
}

bool parseByteRange(std::string_view t, uint64_t &minBytes, uint64_t &maxBytes) {
  const size_t dash = t.find('-');
  if (dash == std::string_view::npos || t.find('-', dash + 1) != std::string_view::npos)
    return false;
  std::string_view lo = t.substr(0, dash), hi = t.substr(dash + 1);
  uint64_t a = 0, b = bundle::unbounded;
  if (!lo.empty() && !parseByteCount(lo, a))
    return false;
  if (!hi.empty() && !parseByteCount(hi, b))
    return false;
  if (a >= b)
    return false;
  minBytes = a;
  maxBytes = b;
  return true;
}

} // namespace collc::rt
