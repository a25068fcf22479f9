// fuzz/TopologyFuzzer.cpp: libFuzzer target for the topology reader
// (collc-topology/1, docs/topology.md); seeds in fuzz/corpus/topology.
//
// Each input is a topology file. Properties: the reader never crashes or hits
// undefined behaviour (ASan/UBSan); a refusal is a positioned error
// (`fuzz.yaml:LINE:COL: syntax|invalid: `); a topology it returns passes
// checkTopology, prints to text that reads back to the same text, and places
// up to 64 ranks (or refuses with a message) with every rank's level and
// links in range.
//
// Sources it needs: model/Topology.cpp, model/TopologyReader.cpp,
// ir/YamlDoc.cpp; links yaml-cpp and LLVM Support.
#include "model/Topology.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace collc;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "topology fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void expectPositioned(llvm::Error e) {
  const std::string text = llvm::toString(std::move(e));
  if (text.rfind("fuzz.yaml:", 0) != 0 ||
      (text.find(": syntax: ") == std::string::npos &&
       text.find(": invalid: ") == std::string::npos))
    fail("an error without a position and class", text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<model::Topology> t =
      model::parseTopology(llvm::StringRef(reinterpret_cast<const char *>(data), size),
                           "fuzz.yaml");
  if (!t) {
    expectPositioned(t.takeError());
    return 0;
  }
  if (std::optional<std::string> why = model::checkTopology(*t))
    fail("the reader returned a topology that breaks an invariant", *why);

  // The printer's text reads back to itself.
  const std::string printed = model::printTopology(*t);
  llvm::Expected<model::Topology> again = model::parseTopology(printed, "printed.yaml");
  if (!again)
    fail("printed text does not read back", printed + "\n" + llvm::toString(again.takeError()));
  if (model::printTopology(*again) != printed)
    fail("print(parse(print(t))) != print(t)", printed);

  // Placement: every query in range.
  const uint64_t cap = t->mapping == model::Mapping::Explicit ? t->map.size() : t->capacity();
  const uint32_t ranks = static_cast<uint32_t>(std::min<uint64_t>(cap, 64));
  llvm::Expected<model::Placement> p = model::place(*t, ranks);
  if (!p)
    fail("placing at most its capacity failed", llvm::toString(p.takeError()));
  for (uint32_t a = 0; a < ranks; ++a)
    for (uint32_t b = 0; b < ranks; b += 7) {
      const uint32_t level = p->levelOf(a, b);
      if (level >= t->levels.size())
        fail("levelOf out of range", std::to_string(level));
      if (p->linkOf(a, level) >= p->numLinks(level))
        fail("linkOf out of range", std::to_string(p->linkOf(a, level)));
    }
  if (cap < UINT32_MAX) { // one rank too many is refused before any allocation
    llvm::Expected<model::Placement> over = model::place(*t, static_cast<uint32_t>(cap + 1));
    if (over)
      fail("placing more ranks than slots succeeded", printed);
    llvm::consumeError(over.takeError());
  }
  return 0;
}
