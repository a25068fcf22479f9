// fuzz/LoaderFuzzer.cpp: libFuzzer target for the .cplan loader (scripts/fuzz-loader).
//
// Each input is loaded twice: as given (exercising magic, version, size and
// checksum checks) and resealed — size field and CRC-32 recomputed — so that
// mutations reach the field and op validation behind the checksum. Properties:
// the loader never crashes or hits undefined behaviour (ASan/UBSan), a refusal
// always has a message, a plan it accepts can be listed and re-encodes to bytes
// that load to the same plan.
#include "runtime/bytecode/Encoder.h"
#include "runtime/bytecode/Listing.h"
#include "runtime/bytecode/Loader.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace collc::rt;

namespace {

/// Compares two loaded plans, ignoring where each op sat in its file.
bool samePlan(LoadedPlan a, LoadedPlan b) {
  for (LoadedPlan *p : {&a, &b})
    for (Program &prog : p->programs)
      for (Op &op : prog.ops)
        op.offset = 0;
  return a == b;
}

void check(const std::vector<uint8_t> &bytes) {
  LoadedPlan plan;
  Status s = load(bytes, plan);
  if (!s.ok()) {
    if (s.message().empty() || !plan.programs.empty()) {
      std::fprintf(stderr, "refusal without a message or with a partial plan\n");
      std::abort();
    }
    return;
  }
  if (listing(bytes, plan).empty())
    std::abort();
  const std::vector<uint8_t> again = encode(plan);
  LoadedPlan reloaded;
  Status s2 = load(again, reloaded);
  if (!s2.ok() || !samePlan(plan, reloaded)) {
    std::fprintf(stderr, "re-encoding an accepted plan changed it: %s\n",
                 s2.message().c_str());
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  check(bytes);
  if (size >= format::fixedHeaderSize + format::checksumSize) {
    bytes.resize(size - format::checksumSize);
    storeU32(bytes, format::offSize, static_cast<uint32_t>(size));
    appendU32(bytes, crc32(bytes));
    check(bytes);
  }
  return 0;
}
