// tests/mpi/MpiSuite.h: a tiny collective test harness for the MPI suites.
//
// Every rank runs the same tests in the same order; a test records failed
// checks on each rank, and rank 0 prints every rank's failures (at most 40
// lines a test). finish() gives the exit status, the same on every rank.
#ifndef COLLC_TESTS_MPI_MPISUITE_H
#define COLLC_TESTS_MPI_MPISUITE_H

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace collc::mpitest {

class Suite {
public:
  Suite() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Records a failed check on this rank when `cond` is false.
  void expect(bool cond, const std::string &what) {
    ++checks_;
    if (!cond)
      failures_.push_back(what);
  }

  /// Runs `body` on every rank; then rank 0 prints the failures of all ranks.
  template <class F> void test(const char *name, F &&body) {
    auto t0 = std::chrono::steady_clock::now();
    failures_.clear();
    checks_ = 0;
    body();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    report(name, ms);
  }

  /// The exit status, the same on every rank.
  int finish() {
    if (rank_ == 0)
      std::printf("%d of %d tests failed (%d ranks)\n", failedTests_, tests_, size_);
    return failedTests_ ? 1 : 0;
  }

private:
  void report(const char *name, double ms) {
    std::string mine;
    for (const std::string &f : failures_)
      mine += "  rank " + std::to_string(rank_) + ": " + f + "\n";
    int len = int(mine.size());
    std::vector<int> lens(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank_ == 0) {
      int total = 0;
      for (int r = 0; r < size_; ++r) {
        offsets[size_t(r)] = total;
        total += lens[size_t(r)];
      }
      all.resize(size_t(total));
    }
    MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    long checks = checks_, totalChecks = 0;
    MPI_Reduce(&checks, &totalChecks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int failed = !all.empty(), anyFailed = 0;
    MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    ++tests_;
    failedTests_ += anyFailed ? 1 : 0;
    if (rank_ != 0)
      return;
    std::printf("[%s] %-16s %8.0f ms  %7ld checks\n", anyFailed ? "FAIL" : " OK ", name, ms,
                totalChecks);
    // At most 40 lines: one bug usually fails many cases alike.
    size_t at = 0;
    int lines = 0;
    while (at < all.size() && lines < 40) {
      size_t nl = all.find('\n', at);
      std::printf("%s\n", all.substr(at, nl - at).c_str());
      at = nl + 1;
      ++lines;
    }
    if (at < all.size())
      std::printf("  ... and %zu more\n",
                  size_t(std::count(all.begin() + long(at), all.end(), '\n')));
    std::fflush(stdout);
  }

  int rank_ = 0, size_ = 1;
  std::vector<std::string> failures_;
  long checks_ = 0;
  int tests_ = 0, failedTests_ = 0;
};

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char[], FreeDeleter>;

inline Bytes allocate(size_t bytes) {
  return Bytes(static_cast<char *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)));
}


} // namespace collc::mpitest

#endif // COLLC_TESTS_MPI_MPISUITE_H
