// tests/bytecode/LoaderTest.cpp: the validating loader, one test per rule.
//
// Every corrupted file is built byte by byte (RawFile) or patched and then
// resealed (size and CRC-32 recomputed), so the rule under test fires rather
// than the checksum. Links only collc::bytecode: the loader needs no LLVM.
#include "runtime/bytecode/Encoder.h"
#include "runtime/bytecode/Loader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

using namespace collc::rt;

namespace {

std::string at(size_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "offset 0x%zx: ", offset);
  return buf;
}

/// A .cplan file written field by field, valid or not.
struct RawFile {
  uint8_t magic[4] = {0x7f, 'C', 'P', 'L'};
  uint8_t version = 2, flags = format::flagCommutative, collective = 0, reserved = 0;
  uint32_t ranks = 1, root = 0, chunks = 4, scratch = 2;
  std::vector<uint8_t> name = {'t'};
  /// Each rank's section: op count, then the ops.
  std::vector<std::vector<uint8_t>> sections = {{0}};

  size_t tableAt() const {
    return format::fixedHeaderSize + leb128Size(ranks) + leb128Size(root) +
           leb128Size(chunks) + leb128Size(scratch) +
           leb128Size(static_cast<uint32_t>(name.size())) + name.size();
  }
  size_t sectionAt(size_t r) const {
    size_t off = tableAt() + 4 * sections.size();
    for (size_t i = 0; i < r; ++i)
      off += sections[i].size();
    return off;
  }
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out(magic, magic + 4);
    out.insert(out.end(), {version, flags, collective, reserved});
    appendU32(out, 0);
    for (uint32_t v : {ranks, root, chunks, scratch, static_cast<uint32_t>(name.size())})
      appendLeb128(out, v);
    out.insert(out.end(), name.begin(), name.end());
    for (size_t r = 0; r < sections.size(); ++r)
      appendU32(out, static_cast<uint32_t>(sectionAt(r)));
    for (const auto &s : sections)
      out.insert(out.end(), s.begin(), s.end());
    storeU32(out, format::offSize, static_cast<uint32_t>(out.size() + 4));
    appendU32(out, crc32(out));
    return out;
  }
};

/// Recomputes the size field and the checksum after patching.
std::vector<uint8_t> reseal(std::vector<uint8_t> b) {
  b.resize(b.size() - 4);
  storeU32(b, format::offSize, static_cast<uint32_t>(b.size() + 4));
  appendU32(b, crc32(b));
  return b;
}

Status loadBytes(const std::vector<uint8_t> &b, LoadedPlan &plan) { return load(b, plan); }

/// The loader's message for bytes it must refuse.
std::string refuse(const std::vector<uint8_t> &b, ErrorCode expected) {
  LoadedPlan plan;
  Status s = loadBytes(b, plan);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), expected) << s.message();
  EXPECT_TRUE(plan.programs.empty());
  return s.message();
}

/// A one-rank file whose single section holds `ops` (the count is added).
RawFile oneRank(std::vector<uint8_t> ops, uint8_t nops = 1) {
  RawFile f;
  ops.insert(ops.begin(), nops);
  f.sections = {ops};
  return f;
}

/// Where the first op of a oneRank file starts.
size_t op0(const RawFile &f) { return f.sectionAt(0) + 1; }

/// A three-rank allreduce (chunks 3, scratch 1) where rank 0 sends out[0] to
/// rank 1 and rank 1 receives it; rank 2 has `rank2` as its section.
RawFile threeRanks(std::vector<uint8_t> rank1Op, std::vector<uint8_t> rank2 = {0}) {
  RawFile f;
  f.ranks = 3;
  f.chunks = 3;
  f.scratch = 1;
  // send: opcode 0x00, relative peer +1 (zigzag 2), chunk 0.
  f.sections = {{1, 0x00, 0x02, 0x00}, {}, rank2};
  f.sections[1].push_back(1);
  f.sections[1].insert(f.sections[1].end(), rank1Op.begin(), rank1Op.end());
  return f;
}

LoadedPlan loadOk(const std::vector<uint8_t> &b) {
  LoadedPlan plan;
  Status s = loadBytes(b, plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return plan;
}

// --- accepted files ----------------------------------------------------------------

TEST(Loader, AcceptsMinimalPlan) {
  RawFile f;
  f.name = {};
  EXPECT_EQ(f.bytes().size(), format::minFileSize);
  EXPECT_EQ(loadOk(f.bytes()).algorithm, "");
  f.name = {'t'};
  LoadedPlan p = loadOk(f.bytes());
  EXPECT_EQ(p.shape.ranks, 1u);
  EXPECT_EQ(p.shape.chunks, 4u);
  EXPECT_EQ(p.shape.scratch, 2u);
  EXPECT_TRUE(p.shape.commutative);
  EXPECT_EQ(p.algorithm, "t");
  ASSERT_EQ(p.programs.size(), 1u);
  EXPECT_TRUE(p.programs[0].ops.empty());
}

TEST(Loader, DecodesEveryFieldExplicitly) {
  // Op 0: copy out[0..2) from in[0..2): 0x06, chunk word 0x01 (chunk 0, N), count 2.
  // Op 1: reduce.bf tmp[0] from out[1], after [0]: 0xb5 mode 0x16 (buf tmp, src out, S)
  //       word 1 (one entry, back 1, folded into the word), chunk word 0, src_chunk 1.
  RawFile f = oneRank({0x06, 0x01, 0x02, 0xb5, 0x16, 0x01, 0x00, 0x01}, 2);
  LoadedPlan p = loadOk(f.bytes());
  ASSERT_EQ(p.programs[0].ops.size(), 2u);
  const Op &c = p.programs[0].ops[0];
  EXPECT_EQ(c.kind, OpKind::Copy);
  EXPECT_EQ(c.buf, Buffer::Out);
  EXPECT_EQ(c.src, Buffer::In);
  EXPECT_EQ(c.count, 2u);
  EXPECT_EQ(c.srcChunk, 0u);
  EXPECT_EQ(c.deps, DepKind::None);
  EXPECT_EQ(c.offset, op0(f));
  const Op &r = p.programs[0].ops[1];
  EXPECT_EQ(r.kind, OpKind::Reduce);
  EXPECT_EQ(r.opcode, Opcode::ReduceBF);
  EXPECT_EQ(r.order, Order::BufFirst);
  EXPECT_EQ(r.buf, Buffer::Tmp);
  EXPECT_EQ(r.src, Buffer::Out);
  EXPECT_EQ(r.chunk, 0u);
  EXPECT_EQ(r.srcChunk, 1u);
  EXPECT_EQ(r.deps, DepKind::After);
  ASSERT_EQ(p.programs[0].afterOf(r).size(), 1u);
  EXPECT_EQ(p.programs[0].afterOf(r)[0], 0u);
  EXPECT_EQ(r.offset, op0(f) + 3);
}

TEST(Loader, DecodesStepForms) {
  // copy out[0] (no deps); copy out[1] step Δ0 → 0; Δ1 → 1; word 0 then Δ 300 → 301;
  // even word 4: Δ = 4/2 + 1 = 3 → 304.
  RawFile f = oneRank({0x06, 0x00, 0x16, 0x02, 0x26, 0x04, 0x36, 0x00, 0xac, 0x02, 0x06,
                       0x36, 0x04, 0x00},
                      5);
  LoadedPlan p = loadOk(f.bytes());
  const auto &ops = p.programs[0].ops;
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[4].step, 304u);
  EXPECT_EQ(ops[0].deps, DepKind::None);
  EXPECT_EQ(ops[1].deps, DepKind::Step);
  EXPECT_EQ(ops[1].step, 0u);
  EXPECT_EQ(ops[2].step, 1u);
  EXPECT_EQ(ops[3].step, 301u);
  EXPECT_EQ(ops[3].chunk, 3u);
}

TEST(Loader, DecodesRelativeAndAbsolutePeers) {
  RawFile f = threeRanks({0x01, 0x01, 0x00}); // recv, relative -1 → rank 0
  LoadedPlan p = loadOk(f.bytes());
  EXPECT_EQ(p.programs[0].ops[0].peer, 1u);
  EXPECT_EQ(p.programs[1].ops[0].peer, 0u);
  RawFile g = threeRanks({0x81, 0x21, 0x00, 0x00}); // recv, mode A, absolute 0
  EXPECT_EQ(loadOk(g.bytes()).programs[1].ops[0].peer, 0u);
}

TEST(Loader, EncodeOfLoadedPlanRoundTrips) {
  RawFile f = oneRank({0x06, 0x01, 0x02, 0xb5, 0x16, 0x01, 0x00, 0x01}, 2);
  LoadedPlan p = loadOk(f.bytes());
  EXPECT_EQ(encode(p), f.bytes());
}

// --- header --------------------------------------------------------------------------

TEST(Loader, RejectsEmptyInput) {
  EXPECT_EQ(refuse({}, ErrorCode::NotAPlan),
            "empty input: not a compiled plan (expected magic 7f 43 50 4c)");
}

TEST(Loader, RejectsWrongMagic) {
  RawFile f;
  f.magic[3] = 'X';
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::NotAPlan),
            "offset 0x0: not a compiled plan: magic 7f 43 50 58, expected 7f 43 50 4c");
  std::string text = "format: collc-plan/1\n";
  EXPECT_EQ(refuse(std::vector<uint8_t>(text.begin(), text.end()), ErrorCode::NotAPlan),
            "offset 0x0: not a compiled plan: magic 66 6f 72 6d, expected 7f 43 50 4c (this "
            "looks like plan text; compile it with 'collc compile')");
  EXPECT_EQ(refuse({0x7f, 'C'}, ErrorCode::NotAPlan),
            "offset 0x0: not a compiled plan: magic 7f 43, expected 7f 43 50 4c");
}

TEST(Loader, RejectsFutureVersionNamingBoth) {
  RawFile f;
  f.version = 3;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Unsupported),
            "offset 0x4: format version 3 is not supported: this loader reads version 2");
  // Even when the rest of a future file is unlike v1.
  EXPECT_EQ(refuse({0x7f, 'C', 'P', 'L', 7, 0xff}, ErrorCode::Unsupported),
            "offset 0x4: format version 7 is not supported: this loader reads version 2");
}

TEST(Loader, RejectsTheOlderVersionWhoseDependencyWordsDiffer) {
  RawFile f;
  f.version = 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Unsupported),
            "offset 0x4: format version 1 is not supported: this loader reads version 2");
}

TEST(Loader, RejectsTruncatedHeader) {
  std::vector<uint8_t> b = RawFile().bytes();
  b.resize(9);
  EXPECT_EQ(refuse(b, ErrorCode::Corrupt),
            "file truncated: 9 bytes, the header alone has 12");
}

TEST(Loader, RejectsTruncatedFile) {
  std::vector<uint8_t> b = RawFile().bytes();
  b.pop_back();
  EXPECT_EQ(refuse(b, ErrorCode::Corrupt), "file truncated: the header says 27 bytes, got 26");
}

TEST(Loader, RejectsTruncationAtEveryOffset) {
  RawFile f = threeRanks({0x01, 0x01, 0x00});
  const std::vector<uint8_t> b = f.bytes();
  loadOk(b);
  for (size_t n = 0; n < b.size(); ++n) {
    LoadedPlan plan;
    Status s = load(std::span<const uint8_t>(b.data(), n), plan);
    EXPECT_FALSE(s.ok()) << "prefix of " << n << " bytes accepted";
  }
}

TEST(Loader, RejectsSizeFieldBelowMinimum) {
  std::vector<uint8_t> b = RawFile().bytes();
  storeU32(b, format::offSize, 3);
  EXPECT_EQ(refuse(b, ErrorCode::Corrupt),
            "offset 0x8: file size field 3 is smaller than the smallest plan (26 bytes)");
}

TEST(Loader, RejectsTrailingBytes) {
  std::vector<uint8_t> b = RawFile().bytes();
  b.push_back(0);
  b.push_back(0);
  EXPECT_EQ(refuse(b, ErrorCode::Corrupt),
            "offset 0x1b: 2 trailing bytes after the checksum (the header says 27 bytes, got "
            "29)");
}

TEST(Loader, RejectsChecksumMismatch) {
  std::vector<uint8_t> b = RawFile().bytes();
  b[format::fixedHeaderSize + 2] ^= 0x01; // chunks 4 → 5
  const uint32_t stored = readU32(&b[b.size() - 4]);
  const uint32_t computed = crc32({b.data(), b.size() - 4});
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "offset 0x17: checksum mismatch: stored 0x%x, computed 0x%x", stored,
                computed);
  EXPECT_EQ(refuse(b, ErrorCode::Corrupt), expected);
}

TEST(Loader, ChecksumIsCrc32) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32({reinterpret_cast<const uint8_t *>(check.data()), check.size()}),
            0xCBF43926u);
}

TEST(Loader, RejectsReservedFlags) {
  RawFile f;
  f.flags = 0x21;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed), "offset 0x5: reserved flag bits 0x20 set");
  f.flags = 0x81;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed), "offset 0x5: reserved flag bits 0x80 set");
}

TEST(Loader, ReadsTheProofStatus) {
  RawFile f;
  EXPECT_EQ(loadOk(f.bytes()).proof, (Proof{false, false}));
  f.flags = format::flagCommutative | format::flagVerified;
  EXPECT_EQ(loadOk(f.bytes()).proof, (Proof{true, false}));
  f.flags = format::flagCommutative | format::flagVerified | format::flagIdentical;
  EXPECT_EQ(loadOk(f.bytes()).proof, (Proof{true, true}));
}

TEST(Loader, RejectsIdenticalWithoutVerified) {
  RawFile f;
  f.flags = format::flagIdentical;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            "offset 0x5: flag identical (0x08) set without flag verified (0x04)");
}

// The proof status is inside the checksummed header: claiming a proof the
// compiler did not record breaks the checksum.
TEST(Loader, AFlippedProofBitFailsTheChecksum) {
  RawFile f;
  std::vector<uint8_t> b = f.bytes();
  b[format::offFlags] |= format::flagVerified;
  EXPECT_NE(refuse(b, ErrorCode::Corrupt).find("checksum mismatch"), std::string::npos);
}

TEST(Loader, RejectsUnknownCollective) {
  RawFile f;
  f.collective = numCollectives;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed), "offset 0x6: unknown collective code 11");
}

TEST(Loader, RejectsReservedHeaderByte) {
  RawFile f;
  f.reserved = 3;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            "offset 0x7: reserved byte is 0x3, expected 0");
}

// --- shape ---------------------------------------------------------------------------

TEST(Loader, RejectsZeroRanks) {
  RawFile f;
  f.ranks = 0;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid), "offset 0xc: ranks 0 out of range (1..1048576)");
}

TEST(Loader, RejectsTooManyRanks) {
  RawFile f;
  f.ranks = (1u << 20) + 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xc: ranks 1048577 out of range (1..1048576)");
}

TEST(Loader, RejectsRootOutOfRange) {
  RawFile f;
  f.collective = uint8_t(Collective::Reduce);
  f.root = 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid), "offset 0xd: root 1 out of range (ranks = 1)");
}

TEST(Loader, RejectsRootForRootlessCollective) {
  RawFile f;
  f.root = 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xd: allreduce has no root, but root is 1");
}

TEST(Loader, RejectsChunksOutOfRange) {
  RawFile f;
  f.chunks = 0;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xe: chunks 0 out of range (1..16777216)");
  f.chunks = (1u << 24) + 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xe: chunks 16777217 out of range (1..16777216)");
}

TEST(Loader, RejectsChunksNotMultipleOfRanks) {
  RawFile f;
  f.collective = uint8_t(Collective::Allgather);
  f.ranks = 3;
  f.sections = {{0}, {0}, {0}};
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xe: allgather needs chunks to be a multiple of ranks (chunks = 4, ranks "
            "= 3)");
}

TEST(Loader, RejectsScratchOutOfRange) {
  RawFile f;
  f.scratch = (1u << 24) + 1;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0xf: scratch 16777217 out of range (0..16777216)");
}

TEST(Loader, RejectsInPlaceBcast) {
  RawFile f;
  f.collective = uint8_t(Collective::Bcast);
  f.flags = format::flagInPlace;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            "offset 0x5: in_place is not supported for bcast");
}

TEST(Loader, RejectsNameRunningPastTheEnd) {
  std::vector<uint8_t> b = RawFile().bytes();
  b[0x10] = 100; // name length
  EXPECT_EQ(refuse(reseal(b), ErrorCode::Malformed),
            "offset 0x10: algorithm name of 100 bytes runs past the end of the file");
}

TEST(Loader, RejectsNameNotUtf8) {
  RawFile f;
  f.name = {'r', 'i', 0xc3, 0x28}; // 0xc3 must be followed by a continuation byte
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            "offset 0x13: algorithm name is not valid UTF-8");
  f.name = {0xc0, 0x80}; // overlong NUL
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            "offset 0x11: algorithm name is not valid UTF-8");
  f.name = {'p', 0xc3, 0xa9}; // "pé" is fine
  EXPECT_EQ(loadOk(f.bytes()).algorithm, "p\xc3\xa9");
}

// --- layout ----------------------------------------------------------------------------

TEST(Loader, RejectsOffsetTablePastTheEnd) {
  RawFile f;
  f.ranks = 1000; // two LEB128 bytes; one section only
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            "offset 0x13: offset table of 1000 ranks (4000 bytes) runs past the end of the "
            "file");
}

TEST(Loader, RejectsFirstSectionNotAfterTable) {
  std::vector<uint8_t> b = RawFile().bytes();
  storeU32(b, 0x12, 0x17);
  EXPECT_EQ(refuse(reseal(b), ErrorCode::Malformed),
            "offset 0x12: rank 0's section starts at 0x17, expected 0x16 (right after the "
            "offset table)");
}

TEST(Loader, RejectsSectionsOutOfOrder) {
  RawFile f;
  f.ranks = 2;
  f.sections = {{0}, {0}};
  std::vector<uint8_t> b = f.bytes();
  storeU32(b, 0x16, 0x19); // rank 1 before rank 0's start 0x1a
  EXPECT_EQ(refuse(reseal(b), ErrorCode::Malformed),
            "offset 0x16: rank 1's section starts at 0x19, before rank 0's (0x1a)");
}

TEST(Loader, RejectsSectionPastTheEnd) {
  RawFile f;
  f.ranks = 2;
  f.sections = {{0}, {0}};
  std::vector<uint8_t> b = f.bytes();
  storeU32(b, 0x16, 0x40);
  EXPECT_EQ(refuse(reseal(b), ErrorCode::Malformed),
            "offset 0x16: rank 1's section starts at 0x40, past the end of the code (0x1c)");
}

TEST(Loader, RejectsUnusedSectionBytes) {
  RawFile f = oneRank({0x06, 0x00, 0x00}); // one op, one byte too many
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 2) + "rank 0: 1 unused bytes at the end of the section");
}

TEST(Loader, RejectsSectionOverrun) {
  RawFile f = oneRank({0x06, 0x00}, 2); // says two ops, holds one... and a half
  f.sections[0].push_back(0x06);
  f.sections[0].push_back(0x80);
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 3) + "rank 0 op 1: chunk: LEB128 value runs past the end of rank "
                             "0's section (at 0x1b)");
}

TEST(Loader, RejectsOpCountBeyondSection) {
  RawFile f = oneRank({0x06, 0x00}, 2);
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(f.sectionAt(0)) + "rank 0: op count 2 does not fit in the section's 2 "
                                 "remaining bytes");
}

TEST(Loader, RejectsHugeOpCountWithoutAllocating) {
  RawFile f;
  f.sections = {{0xff, 0xff, 0xff, 0xff, 0x0f}};
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(f.sectionAt(0)) + "rank 0: op count 4294967295 does not fit in the section's "
                                 "0 remaining bytes");
}

// --- encoding of ops ---------------------------------------------------------------

TEST(Loader, RejectsReservedOpcode) {
  RawFile f = oneRank({0x0b, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f)) + "rank 0 op 0: unknown opcode 0xb (reserved: unassigned)");
  f = oneRank({0x0f, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f)) + "rank 0 op 0: unknown opcode 0xf (reserved: unassigned)");
}

TEST(Loader, RejectsModeAndTmpBitTogether) {
  RawFile f = oneRank({0xc6, 0x01, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f)) + "rank 0 op 0: opcode byte sets both the mode bit and the tmp bit");
}

TEST(Loader, RejectsReservedModeBit) {
  RawFile f = oneRank({0x86, 0x81, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: mode byte 0x81: reserved bits 0x80 set");
}

TEST(Loader, RejectsReservedBufferCode) {
  RawFile f = oneRank({0x86, 0x03, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: mode byte 0x3: buffer code 3 is reserved");
  f = oneRank({0x86, 0x0d, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: mode byte 0xd: source buffer code 3 is reserved");
}

TEST(Loader, RejectsModeFieldsTheOpDoesNotHave) {
  RawFile f = threeRanks({0x81, 0x05, 0x01, 0x00}); // recv with src bits
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(f.sectionAt(1) + 2) + "rank 1 op 0: mode byte 0x5 gives a source to recv");
  RawFile g = oneRank({0x86, 0x21, 0x00}); // copy with an absolute peer
  EXPECT_EQ(refuse(g.bytes(), ErrorCode::Malformed),
            at(op0(g) + 1) + "rank 0 op 0: mode byte 0x21 gives a peer to copy");
}

TEST(Loader, RejectsOverlongLeb128) {
  RawFile f = oneRank({0x06, 0x80, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: chunk: overlong LEB128 encoding (2 bytes for the "
                             "value 0)");
}

TEST(Loader, RejectsLeb128LongerThanFiveBytes) {
  RawFile f = oneRank({0x06, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: chunk: LEB128 value longer than 5 bytes");
}

TEST(Loader, RejectsLeb128Overflow) {
  RawFile f = oneRank({0x06, 0xff, 0xff, 0xff, 0xff, 0x10});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: chunk: LEB128 value overflows 32 bits");
}

TEST(Loader, RejectsLeb128InHeaderPastTheEnd) {
  // A header LEB128 whose continuation runs into the checksum is cut at the
  // header's end: ranks 0x80 0x80 ... with nothing after.
  std::vector<uint8_t> b(format::magic, format::magic + 4);
  b.insert(b.end(), {format::version, 1, 0, 0, 0, 0, 0, 0});
  for (int i = 0; i < 10; ++i)
    b.push_back(0x80);
  b.insert(b.end(), {0, 0, 0, 0});
  EXPECT_EQ(refuse(reseal(b), ErrorCode::Malformed),
            "offset 0xc: ranks: LEB128 value longer than 5 bytes");
}

// --- three-address forms -------------------------------------------------------------

TEST(Loader, DecodesThreeAddressReduce) {
  // reduce3.bf: tmp[1] := out[0] ∘ in[0]; dst word 1 << 2 | tmp = 0x06.
  RawFile f = oneRank({0x0a, 0x00, 0x06});
  const LoadedPlan plan = loadOk(f.bytes());
  const Op &op = plan.programs[0].ops[0];
  EXPECT_EQ(op.kind, OpKind::Reduce);
  EXPECT_EQ(op.order, Order::BufFirst);
  EXPECT_TRUE(op.hasDst);
  EXPECT_EQ(op.dst, Buffer::Tmp);
  EXPECT_EQ(op.dstChunk, 1u);
  EXPECT_EQ(encode(plan), f.bytes());
}

TEST(Loader, RejectsReservedDestinationBuffer) {
  RawFile f = oneRank({0x0a, 0x00, 0x07});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 2) + "rank 0 op 0: destination buffer code 3 is reserved");
}

TEST(Loader, RejectsDestinationOutOfRange) {
  RawFile f = oneRank({0x0a, 0x00, 0x0a}); // tmp[2], scratch 2
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 2) + "rank 0 op 0: destination tmp[2] out of range (tmp has 2 slots)");
}

TEST(Loader, RejectsDestinationOverlappingAnOperand) {
  RawFile f = oneRank({0x0a, 0x00, 0x01}); // dst out[0] = the operand
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 2) + "rank 0 op 0: destination out[0] overlaps out[0] (omit dst to "
                             "combine in place)");
  RawFile g = oneRank({0x0a, 0x04, 0x08}); // reduce3.bf out[2] ∘ in[2] into in[2]
  EXPECT_EQ(refuse(g.bytes(), ErrorCode::Invalid),
            at(op0(g) + 2) + "rank 0 op 0: destination in[2] overlaps in[2] (omit dst to "
                             "combine in place)");
}

// --- dependencies ----------------------------------------------------------------------

TEST(Loader, RejectsAfterNamingItself) {
  RawFile f = oneRank({0x06, 0x00, 0x36, 0x07, 0x00, 0x02}, 2); // list form, n = 1
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 4) + "rank 0 op 1: after: back-reference 0 names the op itself (op "
                             "index 1)");
}

TEST(Loader, RejectsAfterBeforeFirstOp) {
  RawFile f = oneRank({0x06, 0x00, 0x36, 0x07, 0x02, 0x02}, 2);
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 4) + "rank 0 op 1: after: back-reference 2 reaches before the first "
                             "op (op index 1)");
}

TEST(Loader, RejectsAFoldedBackReferenceBeforeTheFirstOp) {
  RawFile f = oneRank({0x06, 0x00, 0x36, 0x05, 0x02}, 2); // word 5: back 2 from op 1
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 3) + "rank 0 op 1: after: back-reference 2 reaches before the first "
                             "op (op index 1)");
}

TEST(Loader, RejectsAfterListedTwice) {
  RawFile f = oneRank({0x06, 0x00, 0x06, 0x02, 0x36, 0x0b, 0x02, 0x02, 0x04}, 3);
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 7) + "rank 0 op 2: after: op 0 is listed twice");
}

TEST(Loader, RejectsAfterListPastTheSection) {
  RawFile f = oneRank({0x36, 0x7f, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Malformed),
            at(op0(f) + 1) + "rank 0 op 0: after list of 31 entries runs past the end of "
                             "the section");
}

TEST(Loader, RejectsStepOverflow) {
  // Explicit Δ 2^32-1, then Δ1.
  RawFile f = oneRank({0x36, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x26, 0x02}, 2);
  EXPECT_EQ(loadOk(oneRank({0x36, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}).bytes())
                .programs[0]
                .ops[0]
                .step,
            UINT32_MAX);
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 8) + "rank 0 op 1: step 4294967295 + 1 overflows 32 bits");
}

// --- operands ----------------------------------------------------------------------------

TEST(Loader, RejectsAbsolutePeerOutOfRange) {
  RawFile f = threeRanks({0x81, 0x21, 0x09, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 3) + "rank 1 op 0: peer 9 out of range (ranks = 3)");
}

TEST(Loader, RejectsAbsolutePeerSelf) {
  RawFile f = threeRanks({0x81, 0x21, 0x01, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 3) + "rank 1 op 0: peer 1 is the rank itself");
}

TEST(Loader, RejectsRelativePeerSelf) {
  RawFile f = threeRanks({0x01, 0x00, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 2) + "rank 1 op 0: relative peer +0 is the rank itself");
}

TEST(Loader, RejectsRelativePeerOutOfRange) {
  RawFile f = threeRanks({0x01, 0x05, 0x00}); // zigzag 5 = -3
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 2) + "rank 1 op 0: relative peer -3 out of range (ranks = 3)");
}

TEST(Loader, RejectsCombiningOpInNonReducingCollective) {
  RawFile f = threeRanks({0x02, 0x01, 0x00});
  f.collective = uint8_t(Collective::Allgather);
  f.chunks = 3;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 1) + "rank 1 op 0: recv_reduce is not allowed in an allgather "
                                     "plan (it does not reduce)");
}

TEST(Loader, RejectsMissingOutBufferInReduce) {
  RawFile f = threeRanks({0x01, 0x01, 0x00});
  f.collective = uint8_t(Collective::Reduce);
  f.root = 2;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(0) + 3) + "rank 0 op 0: rank 0 has no out buffer (in reduce only "
                                     "the root has one)");
}

TEST(Loader, RejectsInBufferAtScattersNonRoot) {
  RawFile f = threeRanks({0x86, 0x00, 0x00}); // rank 1: copy ... from in[0]
  f.collective = uint8_t(Collective::Scatter);
  f.root = 2;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(f.sectionAt(1) + 3) + "rank 1 op 0: rank 1 has no in buffer (in scatter only "
                                     "the root has one)");
}

TEST(Loader, RejectsInBufferInBcast) {
  RawFile f = oneRank({0x86, 0x00, 0x00}); // copy in[0] ...
  f.collective = uint8_t(Collective::Bcast);
  f.flags = 0;
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 2) + "rank 0 op 0: bcast has no in buffer");
}

TEST(Loader, RejectsZeroCount) {
  RawFile f = oneRank({0x06, 0x01, 0x00});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 2) + "rank 0 op 0: count must be at least 1");
}

TEST(Loader, RejectsSlotsOutOfRange) {
  RawFile f = oneRank({0x06, 0x07, 0x02}); // copy out[3..4] from in[3..4], chunks 4
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 1) + "rank 0 op 0: slot out[3..4] out of range (out has 4 slots)");
  RawFile g = oneRank({0x46, 0x04}); // copy tmp[2] from in[2], scratch 2
  EXPECT_EQ(refuse(g.bytes(), ErrorCode::Invalid),
            at(op0(g) + 1) + "rank 0 op 0: slot tmp[2] out of range (tmp has 2 slots)");
}

TEST(Loader, RejectsSourceOutOfRange) {
  RawFile f = oneRank({0x84, 0x12, 0x00, 0x04}); // reduce tmp[0] from in[4]
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 3) + "rank 0 op 0: source in[4] out of range (in has 4 slots)");
}

TEST(Loader, RejectsOverlappingSourceAndDestination) {
  RawFile f = oneRank({0x86, 0x15, 0x01, 0x02, 0x01}); // copy out[0..1] from out[1..2]
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Invalid),
            at(op0(f) + 4) + "rank 0 op 0: source out[1..2] overlaps destination out[0..1]");
}

// --- messages ------------------------------------------------------------------------------

TEST(Loader, RejectsUnmatchedSend) {
  RawFile f = threeRanks({0x06, 0x00}); // rank 1 copies instead of receiving
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Mismatch),
            at(f.sectionAt(0) + 1) + "rank 0 op 0: send to rank 1 has no matching receive "
                                     "(rank 0 sends 1 message to rank 1, rank 1 receives 0 "
                                     "from rank 0)");
}

TEST(Loader, RejectsUnmatchedReceive) {
  // Rank 2 receives from rank 0 as well; rank 0 sends only to rank 1.
  RawFile f = threeRanks({0x01, 0x01, 0x00}, {1, 0x01, 0x02, 0x02});
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Mismatch),
            at(f.sectionAt(2) + 1) + "rank 2 op 0: recv from rank 0 has no matching send "
                                     "(rank 0 sends 0 messages to rank 2, rank 2 receives 1 "
                                     "from rank 0)");
}

TEST(Loader, RejectsMatchedMessagesOfDifferentSize) {
  RawFile f = threeRanks({0x01, 0x01, 0x01, 0x02}); // recv out[0..1] from 0
  EXPECT_EQ(refuse(f.bytes(), ErrorCode::Mismatch),
            at(f.sectionAt(1) + 1) + "rank 1 op 0: recv from rank 0 takes 2 slots, but its "
                                     "matching send (rank 0 op 0, offset 0x1f) sends 1");
}

// --- robustness ----------------------------------------------------------------------------

TEST(Loader, RejectsRandomBitFlipsWithoutCrashing) {
  RawFile f = threeRanks({0x01, 0x01, 0x00}, {2, 0x06, 0x01, 0x03, 0x56, 0x00});
  const std::vector<uint8_t> good = f.bytes();
  loadOk(good);
  std::mt19937 rng(20240501);
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k)
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
    if (b == good)
      continue;
    LoadedPlan plan;
    Status s = load(b, plan);
    EXPECT_FALSE(s.ok()) << "trial " << trial;
    // Resealed, the same damage must meet a rule or load a different plan —
    // never crash (the sanitizer build and the fuzzer make that visible).
    if (b.size() > 12 && std::equal(b.begin(), b.begin() + 5, good.begin()))
      (void)load(reseal(b), plan);
  }
}

} // namespace
