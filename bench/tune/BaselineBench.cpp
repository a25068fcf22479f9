// bench/tune/BaselineBench.cpp: collc-tune-baselines — the tuned choice
// against the defaults of Open MPI 4.1 and MPICH on a topology, predicted by
// the simulator (docs/performance.md, "Tuned against the defaults of Open MPI and MPICH").
//
//   collc-tune-baselines TOPOLOGY P [BUDGET_SECONDS [SIZES]]
//
// Runs `collc tune`'s search (every candidate, the budget given, default
// 120 s), then compiles the algorithms the two defaults pick (-O2, proven,
// without a budget) and prints a markdown table per size: the tuned plan and
// its predicted time, each default's choice with its time and the speedup
// (default's time / tuned time). Progress goes to stderr.
#include "bench/tune/Baselines.h"

#include "tune/Report.h"
#include "tune/Tuner.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>

using namespace collc;

namespace {

/// The predicted time of library algorithm `name` at each size index.
std::map<std::string, std::vector<double>> timesByAlgorithm(const tune::TuneResult &r) {
  std::map<std::string, std::vector<double>> out;
  for (const tune::CandidateResult &c : r.candidates)
    if (c.status == tune::Status::Compiled && c.candidate.params.empty() &&
        c.candidate.segments == 1)
      for (const tune::SizeTime &t : c.times)
        out[c.candidate.algorithm->name.str()].push_back(t.time);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    llvm::errs() << "usage: collc-tune-baselines TOPOLOGY P [BUDGET_SECONDS [SIZES]]\n";
    return 2;
  }
  llvm::Expected<model::Topology> topo = model::readTopologyFile(argv[1]);
  if (!topo) {
    llvm::errs() << llvm::toString(topo.takeError()) << '\n';
    return 2;
  }
  tune::TuneOptions o;
  o.ranks = uint32_t(std::atoi(argv[2]));
  o.budget = argc > 3 ? std::atof(argv[3]) : 120;
  llvm::Expected<std::vector<uint64_t>> sizes =
      tune::parseSizes(argc > 4 ? argv[4] : "8,64,512,4K,32K,256K,2M,16M,128M", 8);
  if (!sizes) {
    llvm::errs() << llvm::toString(sizes.takeError()) << '\n';
    return 2;
  }
  o.sizes = *sizes;
  o.progress = &llvm::errs();
  llvm::Expected<tune::TuneResult> tuned = tune::tune(*topo, o);
  if (!tuned) {
    llvm::errs() << llvm::toString(tuned.takeError()) << '\n';
    return 1;
  }
  // The algorithms the defaults pick, each compiled whatever the budget did above.
  tune::TuneOptions b = o;
  b.candidates.algorithms.clear();
  for (uint64_t bytes : o.sizes)
    for (const bench::Baseline &d :
         {bench::openMpi41(o.ranks, bytes, bytes / 8), bench::mpich(o.ranks, bytes, bytes / 8)})
      if (!llvm::is_contained(b.candidates.algorithms, d.collc))
        b.candidates.algorithms.push_back(d.collc);
  b.candidates.segments = {1};
  b.budget = std::numeric_limits<double>::infinity();
  llvm::Expected<tune::TuneResult> base = tune::tune(*topo, b);
  if (!base) {
    llvm::errs() << llvm::toString(base.takeError()) << '\n';
    return 1;
  }
  const auto times = timesByAlgorithm(*base);

  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("**{0}, {1} ranks** ({2} of {3} candidates compiled{4})\n\n",
                      topo->name, o.ranks,
                      llvm::count_if(tuned->candidates,
                                     [](const tune::CandidateResult &c) {
                                       return c.status == tune::Status::Compiled;
                                     }),
                      tuned->candidates.size(),
                      tuned->budgetExhausted ? "; the budget cut the search" : "");
  os << "| bytes | tuned plan | tuned | Open MPI 4.1 | time | speedup | MPICH | time | speedup "
        "|\n|---:|---|---:|---|---:|---:|---|---:|---:|\n";
  bool approximate = false;
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    const uint64_t bytes = o.sizes[s], count = bytes / 8;
    const tune::CandidateResult &w = tuned->candidates[tuned->choices[s].winner];
    const double t = w.times[s].time;
    os << "| " << tune::formatBytes(bytes) << " | " << w.name << " | "
       << tune::formatSeconds(t);
    for (const bench::Baseline &d :
         {bench::openMpi41(o.ranks, bytes, count), bench::mpich(o.ranks, bytes, count)}) {
      auto it = times.find(d.collc);
      approximate |= !d.exact;
      os << " | " << (d.exact ? "" : "≈ ") << d.collc;
      if (d.collc != d.native)
        os << " (" << d.native << ")";
      if (it == times.end())
        os << " | - | -";
      else
        os << " | " << tune::formatSeconds(it->second[s]) << " | "
           << llvm::format("%.2f", it->second[s] / t) << "×";
    }
    os << " |\n";
  }
  if (approximate)
    os << "\n≈: collc has no equivalent of the native algorithm; the nearest collc plan "
          "is timed instead.\n";
  if (!tuned->budgetNote.empty())
    os << "\nBudget: " << tuned->budgetNote << ".\n";
  os << '\n';
  return 0;
}
