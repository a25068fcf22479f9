// runtime/bytecode/Encoder.h: writing a plan as .cplan bytes (docs/bytecode.md).
//
// The encoding is deterministic (the same plan always gives the same bytes)
// and, for a plan the loader accepted, exact: load(encode(p)) == p up to the
// ops' `offset` fields. compiler/Lower turns an ir::Plan into a LoadedPlan and
// calls this; the fuzzer uses it to check that round trip.
#ifndef COLLC_RUNTIME_BYTECODE_ENCODER_H
#define COLLC_RUNTIME_BYTECODE_ENCODER_H

#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <vector>

namespace collc::rt {

/// Encodes `plan`. Preconditions: programs.size() == shape.ranks; steps
/// non-decreasing among each program's step ops; every `after` entry smaller
/// than its op's index. Everything else (peers, ranges, message pairing) is
/// encoded as given, so a plan that breaks other rules yields bytes the loader
/// refuses with a precise message instead of a crash here.
std::vector<uint8_t> encode(const LoadedPlan &plan);

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_ENCODER_H
