// runtime/bytecode/Bundle.h: plan bundles (.cbundle) — several .cplan plans
// for one (collective, ranks), each with the message sizes it serves.
//
// `collc bundle` writes them; the drop-in (dropin/) loads them from COLLC_PLAN_PATH.
// The format is specified byte by byte in docs/bundle.md. Like the .cplan
// loader, readBundle accepts any byte string and returns either a bundle or an
// error naming the offset and the rule — never a crash. A bundle it returns
// satisfies:
//  - magic "\x7fCPB", version 1, reserved bytes zero, a known collective,
//    1 <= ranks <= 2^20, 1 <= entries <= maxBundleEntries;
//  - the size field equals the input length and the CRC-32 over everything
//    before the checksum matches;
//  - the entry table lies inside the file; every entry's plan starts where
//    the previous one ended (the first right after the table), the last ends
//    at the checksum, and each is a .cplan the loader accepts, for the
//    bundle's collective and ranks;
//  - every entry's byte range [minBytes, maxBytes) is non-empty, and the
//    ranges of entries with the same root do not overlap.
// MPI-free and LLVM-free: the drop-in and the collc tool share it.
#ifndef COLLC_RUNTIME_BYTECODE_BUNDLE_H
#define COLLC_RUNTIME_BYTECODE_BUNDLE_H

#include "runtime/Status.h"
#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace collc::rt {

namespace bundle {
inline constexpr uint8_t magic[4] = {0x7f, 'C', 'P', 'B'};
inline constexpr uint8_t version = 1;
inline constexpr size_t offMagic = 0x00, offVersion = 0x04, offCollective = 0x05,
                        offReserved = 0x06, offSize = 0x08, offRanks = 0x0c,
                        offEntries = 0x10, headerSize = 0x14;
inline constexpr size_t entrySize = 24; ///< u64 min, u64 max, u32 offset, u32 length
inline constexpr size_t checksumSize = 4;
inline constexpr uint32_t maxEntries = 1024;
/// maxBytes of an entry that has no upper bound.
inline constexpr uint64_t unbounded = ~uint64_t(0);
} // namespace bundle

/// One plan of a bundle and the message sizes (bytes = count × type size) it
/// is meant for: [minBytes, maxBytes), maxBytes == bundle::unbounded for "and up".
struct BundleEntry {
  uint64_t minBytes = 0;
  uint64_t maxBytes = bundle::unbounded;
  std::vector<uint8_t> plan; ///< the .cplan bytes
};

/// A validated bundle; each entry's plan is also given decoded.
struct Bundle {
  Collective collective = Collective::Allreduce;
  uint32_t ranks = 1;
  std::vector<BundleEntry> entries;
  std::vector<LoadedPlan> plans; ///< plans[i] is entries[i].plan, loaded
};

/// True when `bytes` starts with the bundle magic (it may still be invalid).
bool looksLikeBundle(std::span<const uint8_t> bytes);

/// Decodes and validates `bytes` (see the banner for what is checked). On
/// failure `out` is left empty.
Status readBundle(std::span<const uint8_t> bytes, Bundle &out);

/// Checks that `entries` can form one bundle (non-empty ranges, at most
/// bundle::maxEntries, each plan loads, all for one collective and ranks, no
/// overlapping ranges for one root) and encodes it. Errors name the entry.
Status writeBundle(const std::vector<BundleEntry> &entries, std::vector<uint8_t> &out);

/// "2K-64K", "0-", "1M-": an entry's range as `collc bundle` accepts it
/// (K, M, G are powers of 1024; a bound is printed with the largest suffix
/// that divides it).
std::string formatByteRange(uint64_t minBytes, uint64_t maxBytes);

/// Parses "MIN-MAX" with optional K/M/G suffixes; either bound may be left
/// out (MIN defaults to 0, MAX to unbounded). False on bad syntax, overflow or
/// an empty range.
bool parseByteRange(std::string_view text, uint64_t &minBytes, uint64_t &maxBytes);

/// Parses one byte count with an optional K/M/G suffix ("64K").
bool parseByteCount(std::string_view text, uint64_t &value);

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_BUNDLE_H
