// bench/tune/Baselines.cpp: the default decisions of Open MPI 4.1 and MPICH.
#include "bench/tune/Baselines.h"

#include <vector>

namespace collc::bench {

namespace {

uint64_t pof2(uint64_t p) {
  uint64_t v = 1;
  while (v * 2 <= p)
    v *= 2;
  return v;
}

/// One band of communicator sizes of Open MPI 4.1's table: below `ranks`,
/// the algorithm number of the first step whose byte bound the call is
/// below (the last step has none).
struct Band {
  uint32_t ranks;
  std::vector<std::pair<uint64_t, int>> steps;
};

// Open MPI 4.1's numbers: 2 nonoverlapping (tuned reduce, then tuned
// bcast), 3 recursive doubling, 4 ring, 5 segmented ring (the fixed
// decision passes segment size 0, which runs the plain ring), 6 Rabenseifner.
constexpr uint64_t none = ~uint64_t(0);
const std::vector<Band> &commutativeTable() {
  static const std::vector<Band> t = {
      {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {none, 6}}},
      {8, {{16, 4}, {8192, 3}, {none, 6}}},
      {16, {{8192, 3}, {none, 6}}},
      {32, {{64, 5}, {4096, 3}, {none, 6}}},
      {64, {{128, 5}, {none, 6}}},
      {128, {{262144, 3}, {none, 6}}},
      {256, {{131072, 2}, {262144, 3}, {none, 6}}},
      {512, {{4096, 2}, {none, 6}}},
      {2048, {{2048, 2}, {16384, 3}, {none, 6}}},
      {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {none, 6}}},
      {~uint32_t(0), {{2048, 2}, {16384, 5}, {32768, 3}, {none, 6}}},
  };
  return t;
}

} // namespace

Baseline openMpi41(uint32_t ranks, uint64_t bytes, uint64_t count) {
  int alg = 6;
  for (const Band &b : commutativeTable())
    if (ranks < b.ranks) {
      for (const auto &[below, a] : b.steps)
        if (bytes < below) {
          alg = a;
          break;
        }
      break;
    }
  switch (alg) {
  case 2:
    return {"nonoverlapping (reduce + bcast)", "binary_tree", false};
  case 3:
    return {"recursive_doubling", "recursive_doubling", true};
  case 4:
  case 5:
    if (count < ranks)
      return {alg == 4 ? "ring -> recursive_doubling" : "segmented_ring -> recursive_doubling",
              "recursive_doubling", true};
    return {alg == 4 ? "ring" : "segmented_ring (segment 0: ring)", "ring", true};
  default:
    if (count < pof2(ranks))
      return {"rabenseifner -> basic_linear", "binary_tree", false};
    return {"rabenseifner", "rabenseifner", true};
  }
}

Baseline mpich(uint32_t ranks, uint64_t bytes, uint64_t count) {
  if (bytes <= 2048 || count < pof2(ranks))
    return {"recursive_doubling", "recursive_doubling", true};
  return {"reduce_scatter_allgather", "rabenseifner", true};
}

} // namespace collc::bench
