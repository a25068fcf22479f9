// tools/draw/TunedChoice.h: what `collc tune --json` chose, read back for a
// picture (`collc explain --tuned FILE`).
//
// The JSON report (format "collc-tune/1", written by `collc tune --json`)
// holds one rank count's search: the sizes it simulated, the winner at each
// with its predicted time, and the size ranges the bundle serves, each with
// its plan. This reader takes those parts and ignores every other key (the
// report carries much more: candidates, terms, budgets). Errors name
// file:line:column: malformed JSON, a missing or mistyped key, another
// format, ranges that do not tile [0, unbounded) in ascending order.
#ifndef COLLC_TOOLS_DRAW_TUNEDCHOICE_H
#define COLLC_TOOLS_DRAW_TUNEDCHOICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::draw {

struct TunedRange {
  uint64_t minBytes = 0;
  std::optional<uint64_t> maxBytes; ///< exclusive; none: and up
  std::string plan;                 ///< "ring.seg2", "recursive_multiplying.k4"
};

struct TunedSize {
  uint64_t bytes = 0;
  std::string winner;
  double time = 0; ///< seconds
};

struct TunedChoice {
  std::string collective; ///< "allreduce"
  uint32_t ranks = 0;
  std::string topology;   ///< the topology's name
  std::string dtype;
  uint32_t elemBytes = 0;
  bool noncommutative = false;
  std::vector<TunedSize> sizes;   ///< ascending
  std::vector<TunedRange> ranges; ///< ascending, tiling [0, unbounded)

  /// The range serving `bytes`.
  const TunedRange &rangeOf(uint64_t bytes) const;
  /// The simulated size `bytes`, if the search simulated it.
  const TunedSize *sizeAt(uint64_t bytes) const;
};

/// Parses report text; `fileName` labels error positions.
llvm::Expected<TunedChoice> parseTunedChoice(llvm::StringRef text, llvm::StringRef fileName);
/// Reads and parses a file.
llvm::Expected<TunedChoice> readTunedChoice(llvm::StringRef path);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_TUNEDCHOICE_H
