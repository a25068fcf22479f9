// bench/read/ReadBench.cpp: how long reading a plan file takes, and where.
//
//   collc-read-bench FILE.yaml [REPEATS]
//
// Prints, best of REPEATS (default 3): yaml-cpp's event parser alone (the
// floor of any reader built on yaml-cpp), the YAML subset's own reader
// building the flat document (ir/YamlDoc.h; "declined" when the file is
// outside the subset), collc's whole reader (ir::parsePlan: the document,
// then validation), and YAML::Load building and freeing its node tree (what
// the reader used first). Peak memory is not measured here: use
// /usr/bin/time -v collc verify FILE.yaml.
#include "ir/PlanIO.h"
#include "ir/YamlDoc.h"

#include "llvm/Support/MemoryBuffer.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>

namespace {

/// Counts events and does nothing else.
struct Counter final : YAML::EventHandler {
  size_t events = 0;
  void OnDocumentStart(const YAML::Mark &) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &, YAML::anchor_t) override { ++events; }
  void OnAlias(const YAML::Mark &, YAML::anchor_t) override { ++events; }
  void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                const std::string &) override {
    ++events;
  }
  void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    ++events;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    ++events;
  }
  void OnMapEnd() override {}
};

double bestSeconds(int repeats, const std::function<void()> &f) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: collc-read-bench FILE.yaml [REPEATS]\n");
    return 2;
  }
  const int repeats = argc == 3 ? std::atoi(argv[2]) : 3;
  auto buf = llvm::MemoryBuffer::getFile(argv[1], /*IsText=*/true);
  if (!buf || repeats < 1) {
    std::fprintf(stderr, "collc-read-bench: cannot read '%s' (or bad REPEATS)\n", argv[1]);
    return 2;
  }
  const std::string text = (*buf)->getBuffer().str();

  size_t events = 0;
  const double tEvents = bestSeconds(repeats, [&] {
    std::istringstream in(text);
    YAML::Parser parser(in);
    Counter c;
    parser.HandleNextDocument(c);
    events = c.events;
  });
  bool subset = true;
  const double tSubset =
      bestSeconds(repeats, [&] { subset = collc::ir::yaml::Doc::parseSubset(text) != nullptr; });
  size_t ops = 0;
  bool ok = true;
  const double tReader = bestSeconds(repeats, [&] {
    llvm::Expected<collc::ir::Plan> plan = collc::ir::parsePlan(text, argv[1]);
    if (!plan) {
      std::fprintf(stderr, "%s\n", llvm::toString(plan.takeError()).c_str());
      ok = false;
      return;
    }
    ops = plan->numOps();
  });
  if (!ok)
    return 1;
  const double tLoad = bestSeconds(repeats, [&] { YAML::Node n = YAML::Load(text); });

  char subsetText[32] = "declined";
  if (subset)
    std::snprintf(subsetText, sizeof subsetText, "%.2f", tSubset);
  std::printf("%-12s %10s %10s %14s %14s %14s %14s\n", "file MB", "ops", "events", "events-only s",
              "subset s", "parsePlan s", "YAML::Load s");
  std::printf("%-12.1f %10zu %10zu %14.2f %14s %14.2f %14.2f\n", double(text.size()) / 1e6, ops,
              events, tEvents, subsetText, tReader, tLoad);
  return 0;
}
