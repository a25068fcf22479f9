// fuzz/BundleFuzzer.cpp: libFuzzer target for the .cbundle reader (scripts/fuzz bundle).
//
// Each input is read twice: as given (magic, version, size and checksum
// checks) and resealed — every plan the entry table points at gets its own
// size field and CRC-32 recomputed, then the bundle's — so that mutations
// reach the table and plan validation behind the checksums. Properties: the
// reader never crashes or hits undefined behaviour (ASan/UBSan); a refusal
// has a message and leaves the bundle empty; an accepted bundle has one
// loaded plan per entry, each range non-empty, and writeBundle re-encodes its
// entries to exactly the input bytes (the format has one encoding).
#include "runtime/bytecode/Bundle.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace collc::rt;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "bundle fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check(const std::vector<uint8_t> &bytes) {
  Bundle b;
  Status s = readBundle(bytes, b);
  if (!s.ok()) {
    if (s.message().empty() || !b.entries.empty() || !b.plans.empty())
      fail("a refusal without a message or with a partial bundle", s.message());
    return;
  }
  if (!looksLikeBundle(bytes))
    fail("an accepted bundle without the magic", "");
  if (b.entries.empty() || b.entries.size() != b.plans.size())
    fail("an accepted bundle without one plan per entry", std::to_string(b.entries.size()));
  for (size_t i = 0; i < b.entries.size(); ++i) {
    if (b.entries[i].minBytes >= b.entries[i].maxBytes)
      fail("an accepted entry with an empty range", std::to_string(i));
    if (b.plans[i].shape.collective != b.collective || b.plans[i].shape.ranks != b.ranks)
      fail("an accepted plan for another collective or rank count", std::to_string(i));
  }
  std::vector<uint8_t> again;
  if (Status w = writeBundle(b.entries, again); !w.ok())
    fail("the entries of an accepted bundle cannot be written", w.message());
  if (again != bytes)
    fail("re-encoding an accepted bundle changed its bytes", "");
}

/// Recomputes the size field and checksum of the .cplan at [off, off + len).
void resealPlan(std::vector<uint8_t> &bytes, size_t off, size_t len) {
  if (len < format::fixedHeaderSize + format::checksumSize)
    return;
  std::vector<uint8_t> plan(bytes.begin() + off, bytes.begin() + off + len - format::checksumSize);
  storeU32(plan, format::offSize, uint32_t(len));
  appendU32(plan, crc32(plan));
  std::copy(plan.begin(), plan.end(), bytes.begin() + off);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  check(bytes);
  using namespace bundle;
  if (size < headerSize + checksumSize)
    return 0;
  const size_t body = size - checksumSize;
  const uint32_t count = readU32(&bytes[offEntries]);
  for (uint64_t i = 0; i < count && headerSize + (i + 1) * entrySize <= body; ++i) {
    const size_t at = headerSize + i * entrySize;
    const uint64_t off = readU32(&bytes[at + 16]), len = readU32(&bytes[at + 20]);
    if (off + len <= body)
      resealPlan(bytes, off, len);
  }
  bytes.resize(body);
  storeU32(bytes, offSize, uint32_t(size));
  appendU32(bytes, crc32(bytes));
  check(bytes);
  return 0;
}
