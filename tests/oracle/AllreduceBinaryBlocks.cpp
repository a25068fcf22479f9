// tests/oracle/AllreduceBinaryBlocks.cpp: Rabenseifner's binary-blocks allreduce.
//
// The binary-blocks algorithm works as follows. Write p as a sum of distinct
// powers of two, 2^k1 > 2^k2 > ... > 2^km, and cut the ranks into consecutive
// blocks of those sizes, the largest first from rank 0. The vector is cut
// into C = 2^k1 chunks. Each block runs a recursive-halving reduce-scatter
// internally, beginning with the largest distance, so index i of a block of
// size s ends owning the block's reduction of chunks [i·C/s, (i+1)·C/s).
// Then the blocks are chained from the smallest upward: each rank of block j
// sends the pieces of its range to the ranks of the next larger block j-1
// that own them, which combine them into theirs (recv_reduce); once block
// j-1 has combined it passes its ranges on to block j-2 the same way, and
// after the largest block has combined it holds the full reduction,
// reduce-scattered. The result flows back down the chain — each block sends
// its final ranges to the owners in the next smaller block, which overwrite
// theirs — and every block finishes with a recursive-doubling allgather
// (distances 1, 2, ..., s/2). Each chunk is reduced to its final value once,
// at its owner in the largest block, and otherwise only copied, so all
// results are bitwise identical. For p a power of two there is one block:
// reduce-scatter plus allgather, i.e. recursive halving and doubling.
//
// Cost: the largest block costs 2k1 α + 2((C-1)/C)nβ + ((C-1)/C)nγ; each link
// of the chain between blocks of sizes 2^a > 2^b adds two steps in which a
// rank of the smaller block sends (and later receives) 2^(a-b) messages of
// n/2^a bytes each, n/2^b in all, plus (n/2^a)γ at the larger block. The chain
// is cheap when neighbouring blocks are close in size and expensive when a
// block is much smaller than the next (p = 2^k + 1: one rank ships its whole
// vector to the large block and back) — the imbalance Rabenseifner's paper
// discusses. Blocks pair ranks at large distances first, so partial results
// are not contiguous rank intervals: the plan needs a commutative operation.
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

#include <algorithm>
#include <cassert>

namespace collc::oracle {

namespace {
/// A block of consecutive ranks [first, first + size), size a power of two.
struct Block {
  uint32_t first = 0;
  uint32_t size = 0;
};

/// The blocks of p: one per set bit, the largest first, from rank 0 upward.
std::vector<Block> binaryBlocks(uint32_t p) {
  std::vector<Block> blocks;
  uint32_t first = 0;
  for (uint32_t bit = 32; bit-- > 0;) {
    const uint32_t size = uint32_t(1) << bit;
    if (p & size) {
      blocks.push_back({first, size});
      first += size;
    }
  }
  return blocks;
}
} // namespace

ir::Plan buildAllreduceBinaryBlocks(const GenOptions &o) {
  const uint32_t p = o.ranks;
  const std::vector<Block> blocks = binaryBlocks(p);
  const uint32_t m = static_cast<uint32_t>(blocks.size());
  const uint32_t C = blocks[0].size;
  ir::Shape shape;
  shape.collective = ir::Collective::Allreduce;
  shape.ranks = p;
  shape.chunks = C;
  shape.commutative = true;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "binary_blocks", o.maxOps);
  auto accInOut = [](uint32_t) { return ir::Buffer::Out; };

  // Index arithmetic: rank of index i of block j, and the chunks it owns
  // after the block's reduce-scatter.
  auto rankAt = [&](uint32_t j, uint32_t i) { return blocks[j].first + i; };
  auto owned = [&](uint32_t j, uint32_t i) {
    const uint32_t width = C / blocks[j].size;
    return ChunkRange{i * width, width};
  };
  auto members = [&](uint32_t j) {
    std::vector<uint32_t> g(blocks[j].size);
    for (uint32_t i = 0; i < blocks[j].size; ++i)
      g[i] = rankAt(j, i);
    return g;
  };
  // Index t of block j-1 owns a piece of index i of block j iff t / ratio == i.
  auto ratio = [&](uint32_t j) { return blocks[j - 1].size / blocks[j].size; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(0, C), ir::in(0, C));

  // 1. Reduce-scatter inside every block, all blocks at once from step 1.
  std::vector<std::vector<ChunkRange>> ranges(m);
  for (uint32_t j = 0; j < m; ++j) {
    ranges[j] = halvingReduceScatter(b, members(j), descendingDistances(blocks[j].size), C,
                                     /*firstStep=*/1, accInOut);
    for (uint32_t i = 0; i < blocks[j].size; ++i)
      assert(ranges[j][i] == owned(j, i) && "largest distance first gives rank order");
  }
  auto rsLastStep = [&](uint32_t j) { return log2Exact(blocks[j].size); };

  // 2. Up the chain: block j's ranges into block j-1, smallest block first.
  uint32_t ready = rsLastStep(m - 1); // the last step block j's data changed
  for (uint32_t j = m - 1; j >= 1; --j) {
    const uint32_t step = std::max(ready, rsLastStep(j - 1)) + 1;
    b.setStep(step);
    for (uint32_t i = 0; i < blocks[j].size; ++i)
      for (uint32_t t = i * ratio(j); t < (i + 1) * ratio(j); ++t) {
        const ir::Slots piece = slotsOf(ir::Buffer::Out, owned(j - 1, t));
        b.send(rankAt(j, i), rankAt(j - 1, t), piece);
        b.recvReduce(rankAt(j - 1, t), rankAt(j, i), piece,
                     ir::orderFor(/*localIsLower=*/true));
      }
    ready = step;
  }

  // 3. Down the chain: final ranges from block j-1 to block j, one step per
  // link; block j starts its allgather in the step after it received.
  std::vector<uint32_t> allgatherStep(m);
  allgatherStep[0] = ready + 1;
  for (uint32_t j = 1; j < m; ++j) {
    const uint32_t step = ready + j;
    b.setStep(step);
    for (uint32_t i = 0; i < blocks[j].size; ++i)
      for (uint32_t t = i * ratio(j); t < (i + 1) * ratio(j); ++t) {
        const ir::Slots piece = slotsOf(ir::Buffer::Out, owned(j - 1, t));
        b.send(rankAt(j - 1, t), rankAt(j, i), piece);
        b.recv(rankAt(j, i), rankAt(j - 1, t), piece);
      }
    allgatherStep[j] = step + 1;
  }

  // 4. Allgather inside every block, in reverse order of the distances.
  for (uint32_t j = 0; j < m; ++j)
    doublingAllgather(b, members(j), ascendingDistances(blocks[j].size), ranges[j],
                      allgatherStep[j], ir::Buffer::Out);
  return b.take();
}

} // namespace collc::oracle
