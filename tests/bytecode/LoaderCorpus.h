// tests/bytecode/LoaderCorpus.h: the seed corpus of the loader fuzzer
// (fuzz/corpus/loader), made from real plans.
#ifndef COLLC_TESTS_BYTECODE_LOADERCORPUS_H
#define COLLC_TESTS_BYTECODE_LOADERCORPUS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace collc::test {

/// A plan text that exercises every encoding path the lowering has: all three
/// dependency kinds, step gaps, multi-byte LEB128 values, count > 1,
/// src_chunk != chunk, both orders, every buffer, near and far peers, and the
/// three-address forms of recv_reduce and reduce (dst, dst_chunk).
extern const char *const encodingPathsPlan;

/// (file name, .cplan bytes): every registered generator at p = 3 (reduce
/// with root 1), the ring at p = 1, and encodingPathsPlan.
std::vector<std::pair<std::string, std::vector<uint8_t>>> loaderCorpus();

} // namespace collc::test

#endif // COLLC_TESTS_BYTECODE_LOADERCORPUS_H
