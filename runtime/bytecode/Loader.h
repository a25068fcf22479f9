// runtime/bytecode/Loader.h: the validating loader of .cplan bytecode.
//
// Any byte string yields either a LoadedPlan or a Status saying what is wrong
// and where (`offset 0x1a3: rank 5 op 12: peer 9 out of range (ranks = 8)`);
// never a crash, never undefined behaviour, and no allocation larger than a
// small multiple of the input size. A plan the loader returns satisfies:
//  - the header: magic, version 2, size field equal to the input size, CRC-32
//    over everything before it, no reserved flag or byte set, a known
//    collective;
//  - the shape rules of ir::checkShape: 1 <= ranks <= 2^20, 1 <= chunks <= 2^24,
//    scratch <= 2^24, root < ranks for reduce/bcast and 0 otherwise, chunks a
//    multiple of ranks for reduce_scatter_block/allgather, in_place not for
//    bcast/reduce_scatter_block; the algorithm name is valid UTF-8;
//  - the layout: one section per rank (per listed rank in a partial plan),
//    contiguous and in rank order right after
//    the offset table, each decoding to exactly its bytes; every LEB128 minimal
//    and within 32 bits; every opcode known; no reserved bit set;
//  - every op: peers in 0..ranks-1 and not the rank itself; buffers the rank has
//    (docs/plan-format.md, "Buffers"); slot ranges inside them; count >= 1; source and
//    destination of reduce/copy not overlapping; the separate destination of
//    a three-address recv_reduce/reduce inside its buffer and overlapping
//    neither operand; combining ops only in
//    collectives that reduce; `after` entries earlier than the op and distinct;
//    step values non-decreasing (deltas) without overflow;
//  - the messages: for every ordered pair (a, b), a's sends to b and b's
//    receives from a are equally many, and the k-th of each move the same
//    number of slots;
//  - a partial plan (flag bit 4; docs/bytecode.md, "Partial plans"): no
//    proof bits, its own rank < ranks, 1..ranks sections of strictly
//    increasing ranks with the own rank among them, one section for every
//    rank the own rank exchanges messages with; the rules above hold for
//    every section, and the message rule for every pair of ranks that both
//    have one.
// So a loaded plan is a well-formed ir::Plan (ir/Plan.h) whose messages pair
// up; the interpreter only asserts. Whether it computes its collective is the
// verifier's business (collc disasm | collc verify -).
#ifndef COLLC_RUNTIME_BYTECODE_LOADER_H
#define COLLC_RUNTIME_BYTECODE_LOADER_H

#include "runtime/Status.h"
#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <span>

namespace collc::rt {

/// Decodes and validates `bytes`. On success fills `plan`; on failure returns
/// the error (code and message) and leaves `plan` empty.
Status load(std::span<const uint8_t> bytes, LoadedPlan &plan);

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_LOADER_H
