// lang/Estimate.cpp: a plan's size estimated from a sample of ranks, and what may fit.
#include "lang/InstantiatorImpl.h"

#include "llvm/Support/Format.h"

#include <sys/resource.h>
#include <unistd.h>

namespace collc::lang {

namespace detail {

namespace {
/// The k-th rank of the estimate's sample: 0, p-1, then p/2, p/4, 3p/4, p/8,
/// ... (bit-reversed counters scaled to p, so any prefix is spread evenly).
uint32_t sampleRank(uint32_t k, uint32_t p) {
  if (k == 0)
    return 0;
  if (k == 1)
    return p - 1;
  uint32_t j = k - 1, rev = 0;
  for (int b = 0; b < 32; ++b, j >>= 1)
    rev = (rev << 1) | (j & 1);
  return uint32_t((uint64_t(rev) * p) >> 32);
}

/// "4.00e+10" for a count too long to read at a glance, else the number.
std::string approx(uint64_t n) {
  if (n < 100000000)
    return std::to_string(n);
  return llvm::formatv("{0}", llvm::format("%.2e", double(n))).str();
}

std::string gigabytes(uint64_t bytes) {
  return llvm::formatv("{0} GB", llvm::format("%.1f", double(bytes) / 1e9)).str();
}
} // namespace

OpEstimate Machine::estimate() {
  constexpr uint32_t maxSamples = 16;
  constexpr uint64_t sampleBudget = uint64_t(4) << 20;
  const uint32_t p = sh.ranks;
  const uint32_t samples = std::min(p, maxSamples);
  ir::Program prog;
  uint64_t sum = 0;
  uint32_t k = 0;
  while (k < samples) {
    prog.ops.clear();
    opsLeft_ = opts_.maxOps;
    run(sampleRank(k++, p), &prog);
    sum += prog.ops.size();
    if (k >= 2 && sum >= sampleBudget)
      break;
  }
  opsLeft_ = opts_.maxOps;
  const double total = double(sum) / k * p;
  return {total >= 1.8e19 ? UINT64_MAX : uint64_t(total), k};
}

void Machine::refuseWhatCannotFit() {
  const OpEstimate e = estimate();
  const uint64_t bytes = e.ops > UINT64_MAX / planBytesPerOp ? UINT64_MAX : e.ops * planBytesPerOp;
  const std::string about =
      llvm::formatv("about {0} ops (estimated from {1} ranks' programs; {2} in memory)",
                    approx(e.ops), e.sampledRanks, gigabytes(bytes))
          .str();
  EvalFailure f{m_.nameLoc, "", /*opLimit=*/true, e.ops, 0};
  // Twice the limit: a sample's mean may overshoot (a root emitting more
  // than its peers), and a plan near the limit is counted exactly instead.
  if (e.ops / 2 > opts_.maxOps) {
    f.message = llvm::formatv("the plan for p = {0} would have {1}, more than the limit of {2} "
                              "ops; refused before instantiating",
                              p(), about, opts_.maxOps)
                    .str();
    throw f;
  }
  const uint64_t avail = availableMemory();
  if (bytes / 2 > avail) {
    f.memoryLimit = avail;
    f.message = llvm::formatv("the plan for p = {0} would have {1}, more than the {2} this "
                              "process may use; refused before instantiating",
                              p(), about, gigabytes(avail))
                    .str();
    throw f;
  }
}

} // namespace detail

uint64_t availableMemory() {
  uint64_t avail = UINT64_MAX;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    avail = uint64_t(pages) * uint64_t(pageSize);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      avail = std::min<uint64_t>(avail, rl.rlim_cur);
  }
  return avail;
}

} // namespace collc::lang
