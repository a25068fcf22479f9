// tune/Native.h: tuning files for MPIs' own algorithms — what `collc tune
// --emit` writes so that a job that does not run collc's runtime still gets
// the tuned choice (docs/tune.md, "Tuning files for MPIs' own algorithms").
//
// Of the search's compiled candidates only those that are an algorithm the MPI
// also has take part (recursive doubling, ring, Rabenseifner, ...: a library
// algorithm at its default parameters and without pipelining, nativeAlgorithm
// names the pairs); per size the one the model predicts fastest wins, and a
// boundary between two sizes with different winners is placed as --measure
// places them (boundaryBetween). The files select the MPI's implementation of
// the algorithm family, not collc's plan: the two share the communication
// pattern the model priced, not necessarily every message.
#ifndef COLLC_TUNE_NATIVE_H
#define COLLC_TUNE_NATIVE_H

#include "tune/Tuner.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::tune {

/// The MPIs whose selection collc can write.
enum class NativeFormat : uint8_t {
  OmpiRules, ///< Open MPI 4.1's coll/tuned dynamic rules file
  MpichJson, ///< MPICH 4.0's collective selection JSON
};
/// "ompi-rules", "mpich-json".
std::optional<NativeFormat> parseNativeFormat(llvm::StringRef text);
llvm::StringRef name(NativeFormat f);
/// "Open MPI", "MPICH".
llvm::StringRef mpiName(NativeFormat f);

/// A library algorithm and the MPI's algorithm of the same pattern.
struct NativeAlgorithm {
  llvm::StringRef collc; ///< the library algorithm (collc list)
  int id = 0;            ///< Open MPI: coll/tuned's algorithm number
  llvm::StringRef name;  ///< Open MPI: its name; MPICH: the MPIR function
};

/// The pairs for a collective, in the library's order.
std::vector<NativeAlgorithm> nativeAlgorithms(ir::Collective c, NativeFormat f);

/// A range of sizes [minBytes, maxBytes) and the algorithm that serves it.
struct NativeRange {
  uint64_t minBytes = 0;
  uint64_t maxBytes = 0; ///< rt::bundle::unbounded: no bound
  size_t candidate = 0;  ///< index in TuneResult::candidates
  NativeAlgorithm algorithm;
};

/// The ranges, ascending and tiling [0, unbounded). An error when no compiled
/// candidate is an algorithm of the MPI (it names the ones that would be).
llvm::Expected<std::vector<NativeRange>> nativeRanges(const TuneResult &r, NativeFormat f);

/// The file for `r`, merged into `existing` (the file's current text; empty
/// for a new file): the MPI reads one file, so the entries for other
/// collectives and rank counts are kept and those for this collective at this
/// rank count replaced. Communicators of other sizes keep the MPI's own
/// choice (Open MPI: algorithm 0 from P + 1 ranks; MPICH: the selection the
/// file had, around a `comm_size<=P` branch). For MPICH `existing` must be a
/// complete selection (mpichDefaultSelection gives MPICH's own). Errors:
/// `existing` is not such a file, or no candidate maps.
llvm::Expected<std::string> nativeFile(const TuneResult &r, NativeFormat f,
                                       llvm::StringRef existing);

/// Whether `existing` (a file's text) can be merged into for collective `c`:
/// the check nativeFile makes, before a search that may take minutes.
llvm::Error checkNativeFile(NativeFormat f, ir::Collective c, llvm::StringRef existing);

/// MPICH's own selection (its MPIR layer's JSON, compiled into the library):
/// MPICH needs a selection for every collective in the file it is given, so
/// a new mpich-json file is this with the tuned collective's entry replaced.
/// `library` is libmpich's path; errors when it holds none.
llvm::Expected<std::string> mpichDefaultSelection(llvm::StringRef library);

} // namespace collc::tune

#endif // COLLC_TUNE_NATIVE_H
