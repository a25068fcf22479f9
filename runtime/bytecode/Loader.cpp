// runtime/bytecode/Loader.cpp: decoding and validating .cplan bytes (see Loader.h
// for the invariants, docs/bytecode.md for the layout).
//
// Reads are byte by byte through one cursor bounded by the current scope (the
// header, or one rank's section), so no read can leave the input; counts from
// the file are checked against the bytes that remain before anything is
// reserved for them. Errors carry the offset of the field at fault.
#include "runtime/bytecode/Loader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace collc::rt {

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

/// "out[3]" or "out[3..5]" (inclusive, as ir::describe prints them).
std::string describeSlots(Buffer b, uint32_t chunk, uint32_t count) {
  std::string s = std::string(name(b)) + "[" + num(chunk);
  if (count != 1)
    s += ".." + num(uint64_t(chunk) + count - 1);
  return s + "]";
}

/// Length of the valid UTF-8 prefix of `s` (s.size() when all valid).
size_t validUtf8Prefix(std::span<const uint8_t> s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (s.size() - i < len)
      return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80)
        return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    static constexpr uint32_t minForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minForLen[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return i;
}

/// One end of a message, for pairing sends with receives.
struct MessageEnd {
  uint32_t from, to; ///< the channel, as program indices (ranks in a whole plan)
  uint32_t rank;     ///< the rank whose op this is
  uint32_t op;       ///< index in that rank's program
  uint32_t count;
  uint32_t offset;
  OpKind kind;
};

/// Stable counting sort of `v` on `key` (< p): O(n + p).
template <class Key>
void countingSort(std::vector<MessageEnd> &v, std::vector<MessageEnd> &tmp, uint32_t p,
                  Key key) {
  std::vector<uint32_t> start(size_t(p) + 1, 0);
  for (const MessageEnd &e : v)
    ++start[key(e) + 1];
  for (uint32_t k = 0; k < p; ++k)
    start[k + 1] += start[k];
  tmp.resize(v.size());
  for (const MessageEnd &e : v)
    tmp[start[key(e)]++] = e;
  v.swap(tmp);
}

/// Sorts by (from, to), stably: least significant key first.
void sortByChannel(std::vector<MessageEnd> &v, uint32_t p) {
  std::vector<MessageEnd> tmp;
  countingSort(v, tmp, p, [](const MessageEnd &e) { return e.to; });
  countingSort(v, tmp, p, [](const MessageEnd &e) { return e.from; });
}

class Loader {
public:
  Loader(std::span<const uint8_t> bytes, LoadedPlan &plan)
      : data_(bytes.data()), size_(bytes.size()), plan_(plan) {}

  Status run() {
    COLLC_RT_TRY(fixedHeader());
    COLLC_RT_TRY(shapeAndName());
    if (plan_.partial)
      COLLC_RT_TRY(partialHeader());
    COLLC_RT_TRY(sections());
    if (plan_.partial)
      COLLC_RT_TRY(ownPeersPresent());
    return channels();
  }

private:
  // --- errors ------------------------------------------------------------------
  Status fail(ErrorCode code, size_t at, const std::string &msg) const {
    std::string text = "offset " + hex(at) + ": ";
    if (rank_ >= 0) {
      text += "rank " + num(uint64_t(rank_));
      text += op_ >= 0 ? " op " + num(uint64_t(op_)) + ": " : ": ";
    }
    return Status::error(code, text + msg);
  }
  Status malformed(size_t at, const std::string &msg) const {
    return fail(ErrorCode::Malformed, at, msg);
  }
  Status invalid(size_t at, const std::string &msg) const {
    return fail(ErrorCode::Invalid, at, msg);
  }
  /// What the cursor's scope is called in "runs past the end of ..." errors.
  std::string scopeName() const {
    return rank_ >= 0 ? "rank " + num(uint64_t(rank_)) + "'s section (at " + hex(end_) + ")"
                      : "the header (at " + hex(end_) + ")";
  }

  // --- reading ---------------------------------------------------------------------
  Status byte(uint8_t &b, const char *what) {
    if (pos_ >= end_)
      return malformed(pos_, std::string(what) + " runs past the end of " + scopeName());
    b = data_[pos_++];
    return {};
  }

  /// Unsigned LEB128, minimal, at most 32 bits.
  Status leb(uint32_t &v, const char *what) {
    const size_t at = pos_;
    uint32_t result = 0;
    for (unsigned i = 0;; ++i) {
      if (pos_ >= end_)
        return malformed(at, std::string(what) + ": LEB128 value runs past the end of " +
                                 scopeName());
      const uint8_t b = data_[pos_++];
      if (i == 4 && (b & 0x80))
        return malformed(at, std::string(what) + ": LEB128 value longer than 5 bytes");
      if (!(b & 0x80) && b == 0 && i > 0)
        return malformed(at, std::string(what) + ": overlong LEB128 encoding (" + num(i + 1) +
                                 " bytes for the value " + num(result) + ")");
      if (i == 4 && b > 0x0f)
        return malformed(at, std::string(what) + ": LEB128 value overflows 32 bits");
      result |= uint32_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80))
        break;
    }
    v = result;
    return {};
  }

  // --- header --------------------------------------------------------------------
  Status fixedHeader() {
    using namespace format;
    const std::string expected = "7f 43 50 4c";
    if (size_ == 0)
      return Status::error(ErrorCode::NotAPlan,
                           "empty input: not a compiled plan (expected magic " + expected +
                               ")");
    if (size_ < 4 || std::memcmp(data_, magic, 4) != 0) {
      std::string got;
      for (size_t i = 0; i < std::min<size_t>(size_, 4); ++i) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", data_[i]);
        got += buf;
      }
      std::string msg = "offset 0x0: not a compiled plan: magic " + got + ", expected " +
                        expected;
      static const char textTag[] = "format:";
      if (size_ >= sizeof textTag - 1 && std::memcmp(data_, textTag, sizeof textTag - 1) == 0)
        msg += " (this looks like plan text; compile it with 'collc compile')";
      return Status::error(ErrorCode::NotAPlan, msg);
    }
    if (size_ <= offVersion)
      return Status::error(ErrorCode::Corrupt,
                           "file truncated: " + num(size_) + " bytes, the header alone has " +
                               num(fixedHeaderSize));
    if (data_[offVersion] != version)
      return Status::error(ErrorCode::Unsupported,
                           "offset 0x4: format version " + num(data_[offVersion]) +
                               " is not supported: this loader reads version " +
                               num(version));
    if (size_ < fixedHeaderSize)
      return Status::error(ErrorCode::Corrupt,
                           "file truncated: " + num(size_) + " bytes, the header alone has " +
                               num(fixedHeaderSize));
    const uint32_t declared = readU32(data_ + offSize);
    if (declared < minFileSize)
      return fail(ErrorCode::Corrupt, offSize,
                  "file size field " + num(declared) +
                      " is smaller than the smallest plan (" + num(minFileSize) + " bytes)");
    if (declared > size_)
      return Status::error(ErrorCode::Corrupt, "file truncated: the header says " +
                                                   num(declared) + " bytes, got " +
                                                   num(size_));
    if (declared < size_)
      return fail(ErrorCode::Corrupt, declared,
                  num(size_ - declared) + " trailing bytes after the checksum (the header "
                                          "says " +
                      num(declared) + " bytes, got " + num(size_) + ")");
    const size_t sumAt = size_ - checksumSize;
    const uint32_t stored = readU32(data_ + sumAt);
    const uint32_t computed = crc32({data_, sumAt});
    if (stored != computed)
      return fail(ErrorCode::Corrupt, sumAt,
                  "checksum mismatch: stored " + hex(stored) + ", computed " + hex(computed));

    const uint8_t flags = data_[offFlags];
    if (flags & flagsReserved)
      return malformed(offFlags, "reserved flag bits " + hex(flags & flagsReserved) + " set");
    if ((flags & flagIdentical) && !(flags & flagVerified))
      return malformed(offFlags, "flag identical (0x08) set without flag verified (0x04)");
    if ((flags & flagPartial) && (flags & (flagVerified | flagIdentical)))
      return malformed(offFlags, "flag partial (0x10) set with a proof status (0x04/0x08): a "
                                 "partial plan records no proof");
    if (data_[offCollective] >= numCollectives)
      return malformed(offCollective,
                       "unknown collective code " + num(data_[offCollective]));
    if (data_[offReserved] != 0)
      return malformed(offReserved,
                       "reserved byte is " + hex(data_[offReserved]) + ", expected 0");
    plan_.shape.collective = static_cast<Collective>(data_[offCollective]);
    plan_.shape.commutative = flags & flagCommutative;
    plan_.shape.inPlace = flags & flagInPlace;
    plan_.proof.verified = flags & flagVerified;
    plan_.proof.identical = flags & flagIdentical;
    plan_.partial = flags & flagPartial;
    pos_ = fixedHeaderSize;
    end_ = sumAt;
    return {};
  }

  Status shapeAndName() {
    using namespace format;
    Shape &s = plan_.shape;
    const char *coll = name(s.collective);
    size_t at = pos_;
    COLLC_RT_TRY(leb(s.ranks, "ranks"));
    if (s.ranks < 1 || s.ranks > maxRanks)
      return invalid(at, "ranks " + num(s.ranks) + " out of range (1.." + num(maxRanks) + ")");
    at = pos_;
    COLLC_RT_TRY(leb(s.root, "root"));
    if (hasRoot(s.collective) && s.root >= s.ranks)
      return invalid(at, "root " + num(s.root) + " out of range (ranks = " + num(s.ranks) +
                             ")");
    if (!hasRoot(s.collective) && s.root != 0)
      return invalid(at, std::string(coll) + " has no root, but root is " + num(s.root));
    at = pos_;
    COLLC_RT_TRY(leb(s.chunks, "chunks"));
    if (s.chunks < 1 || s.chunks > maxChunks)
      return invalid(at,
                     "chunks " + num(s.chunks) + " out of range (1.." + num(maxChunks) + ")");
    if (blockCollective(s.collective) && s.chunks % s.ranks != 0)
      return invalid(at, std::string(coll) +
                             " needs chunks to be a multiple of ranks (chunks = " +
                             num(s.chunks) + ", ranks = " + num(s.ranks) + ")");
    at = pos_;
    COLLC_RT_TRY(leb(s.scratch, "scratch"));
    if (s.scratch > maxScratch)
      return invalid(at, "scratch " + num(s.scratch) + " out of range (0.." +
                             num(maxScratch) + ")");
    if (s.inPlace && !allowsInPlace(s.collective))
      return invalid(offFlags, std::string("in_place is not supported for ") + coll);

    at = pos_;
    uint32_t len = 0;
    COLLC_RT_TRY(leb(len, "algorithm name length"));
    if (len > end_ - pos_)
      return malformed(at, "algorithm name of " + num(len) +
                               " bytes runs past the end of the file");
    const std::span<const uint8_t> text(data_ + pos_, len);
    const size_t good = validUtf8Prefix(text);
    if (good != len)
      return malformed(pos_ + good, "algorithm name is not valid UTF-8");
    plan_.algorithm.assign(reinterpret_cast<const char *>(text.data()), len);
    pos_ += len;
    return {};
  }

  // --- partial plans -------------------------------------------------------------
  /// The own rank and the ranks of the sections (docs/bytecode.md, "Partial plans").
  Status partialHeader() {
    const uint32_t p = plan_.shape.ranks;
    size_t at = pos_;
    COLLC_RT_TRY(leb(plan_.own, "own rank"));
    if (plan_.own >= p)
      return invalid(at, "own rank " + num(plan_.own) + " out of range (ranks = " + num(p) +
                             ")");
    at = pos_;
    uint32_t m = 0;
    COLLC_RT_TRY(leb(m, "section count"));
    // Each section takes at least a one-byte rank, a 4-byte offset and a
    // one-byte op count.
    if (m < 1 || m > p)
      return invalid(at, "section count " + num(m) + " out of range (1.." + num(p) + ")");
    if (m > (end_ - pos_) / 6)
      return malformed(at, "section count " + num(m) + " does not fit in the file's " +
                               num(end_ - pos_) + " remaining bytes");
    plan_.sections.reserve(m);
    bool ownSeen = false;
    for (uint32_t i = 0; i < m; ++i) {
      at = pos_;
      uint32_t r = 0;
      COLLC_RT_TRY(leb(r, "section rank"));
      if (r >= p)
        return invalid(at, "section rank " + num(r) + " out of range (ranks = " + num(p) + ")");
      if (i > 0 && r <= plan_.sections.back())
        return invalid(at, "section rank " + num(r) + " after " + num(plan_.sections.back()) +
                               " (the ranks must increase)");
      ownSeen = ownSeen || r == plan_.own;
      plan_.sections.push_back(r);
    }
    if (!ownSeen)
      return invalid(at, "the own rank " + num(plan_.own) + " has no section");
    return {};
  }

  /// Every rank the own rank exchanges messages with has a section, so that
  /// every message of the own rank is paired below.
  Status ownPeersPresent() {
    const Program &prog = *plan_.programOf(plan_.own);
    for (uint32_t i = 0; i < prog.ops.size(); ++i) {
      const Op &o = prog.ops[i];
      if (isMessage(o.kind) && !plan_.programOf(o.peer)) {
        rank_ = plan_.own;
        op_ = i;
        return invalid(o.offset, "peer " + num(o.peer) +
                                     " has no section in this partial plan (every rank the "
                                     "own rank exchanges messages with needs one)");
      }
    }
    return {};
  }

  // --- sections ------------------------------------------------------------------
  Status sections() {
    const uint32_t p = plan_.partial ? uint32_t(plan_.sections.size()) : plan_.shape.ranks;
    const size_t tableAt = pos_;
    if (uint64_t(p) * 4 > end_ - pos_)
      return malformed(tableAt, "offset table of " + num(p) + " ranks (" + num(uint64_t(p) * 4) +
                                    " bytes) runs past the end of the file");
    const size_t codeEnd = end_;
    const size_t tableEnd = tableAt + size_t(p) * 4;
    std::vector<uint32_t> begin(p);
    for (uint32_t r = 0; r < p; ++r) {
      begin[r] = readU32(data_ + tableAt + 4 * size_t(r));
      const size_t at = tableAt + 4 * size_t(r);
      const uint32_t rank = plan_.rankOf(r);
      if (r == 0 && begin[r] != tableEnd)
        return malformed(at, "rank " + num(rank) + "'s section starts at " + hex(begin[r]) +
                                 ", expected " + hex(tableEnd) +
                                 " (right after the offset table)");
      if (r > 0 && begin[r] < begin[r - 1])
        return malformed(at, "rank " + num(rank) + "'s section starts at " + hex(begin[r]) +
                                 ", before rank " + num(plan_.rankOf(r - 1)) + "'s (" +
                                 hex(begin[r - 1]) + ")");
      if (begin[r] > codeEnd)
        return malformed(at, "rank " + num(rank) + "'s section starts at " + hex(begin[r]) +
                                 ", past the end of the code (" + hex(codeEnd) + ")");
    }
    plan_.programs.resize(p);
    for (uint32_t r = 0; r < p; ++r) {
      rank_ = plan_.rankOf(r);
      pos_ = begin[r];
      end_ = r + 1 < p ? begin[r + 1] : codeEnd;
      COLLC_RT_TRY(section(r));
      if (pos_ != end_)
        return malformed(pos_, num(end_ - pos_) + " unused bytes at the end of the section");
    }
    rank_ = -1;
    return {};
  }

  /// Section `index` (rank plan_.rankOf(index)).
  Status section(uint32_t index) {
    const uint32_t rank = plan_.rankOf(index);
    Program &prog = plan_.programs[index];
    const size_t at = pos_;
    uint32_t n = 0;
    COLLC_RT_TRY(leb(n, "op count"));
    // Every op takes at least two bytes (opcode and chunk).
    if (n > (end_ - pos_) / 2)
      return malformed(at, "op count " + num(n) + " does not fit in the section's " +
                               num(end_ - pos_) + " remaining bytes");
    prog.ops.reserve(n);
    lastStep_ = 0;
    marks_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      op_ = i;
      COLLC_RT_TRY(op(rank, i, prog));
    }
    op_ = -1;
    return {};
  }

  Status op(uint32_t rank, uint32_t index, Program &prog) {
    using namespace format;
    const Shape &s = plan_.shape;
    Op op;
    op.offset = static_cast<uint32_t>(pos_);
    const size_t opAt = pos_;
    uint8_t b = 0;
    COLLC_RT_TRY(byte(b, "opcode"));
    const OpcodeInfo &info = opcodeInfo(b & opcodeMask);
    if (!info.known)
      return malformed(opAt, "unknown opcode " + hex(b & opcodeMask) + " (reserved: " +
                                 info.mnemonic + ")");
    op.opcode = static_cast<Opcode>(b & opcodeMask);
    op.kind = info.kind;
    op.order = info.order;
    const char *kindName = name(op.kind);

    // Mode byte, or the defaults it stands for.
    uint8_t mode = (b & tmpBit) ? uint8_t(Buffer::Tmp) : uint8_t(Buffer::Out);
    if (b & modeBit) {
      if (b & tmpBit)
        return malformed(opAt, "opcode byte sets both the mode bit and the tmp bit");
      COLLC_RT_TRY(byte(mode, "mode byte"));
      const size_t modeAt = pos_ - 1;
      if (mode & modeReserved)
        return malformed(modeAt, "mode byte " + hex(mode) + ": reserved bits " +
                                     hex(mode & modeReserved) + " set");
      if ((mode & modeBufMask) == 3)
        return malformed(modeAt, "mode byte " + hex(mode) + ": buffer code 3 is reserved");
      if (!hasSrc(op.kind) && (mode & (modeSrcMask | modeSrcChunk)))
        return malformed(modeAt, "mode byte " + hex(mode) + " gives a source to " + kindName);
      if (hasSrc(op.kind) && ((mode & modeSrcMask) >> modeSrcShift) == 3)
        return malformed(modeAt,
                         "mode byte " + hex(mode) + ": source buffer code 3 is reserved");
      if (!isMessage(op.kind) && (mode & modeAbsPeer))
        return malformed(modeAt, "mode byte " + hex(mode) + " gives a peer to " + kindName);
    }
    op.buf = static_cast<Buffer>(mode & modeBufMask);
    if (hasSrc(op.kind))
      op.src = static_cast<Buffer>((mode & modeSrcMask) >> modeSrcShift);

    // Dependencies.
    switch (static_cast<DepForm>((b & depMask) >> depShift)) {
    case DepForm::None:
      break;
    case DepForm::SameStep:
      op.deps = DepKind::Step;
      op.step = static_cast<uint32_t>(lastStep_);
      break;
    case DepForm::NextStep:
      COLLC_RT_TRY(stepDelta(op, 1, opAt));
      break;
    case DepForm::Explicit: {
      const size_t wordAt = pos_;
      uint32_t word = 0;
      COLLC_RT_TRY(leb(word, "dependency word"));
      if (word == 0) { // step, any Δ: a leb Δ follows
        const size_t deltaAt = pos_;
        uint32_t delta = 0;
        COLLC_RT_TRY(leb(delta, "step delta"));
        COLLC_RT_TRY(stepDelta(op, delta, deltaAt));
        break;
      }
      if (word % 2 == 0) { // step, Δ = word/2 + 1
        COLLC_RT_TRY(stepDelta(op, word / 2 + 1, wordAt));
        break;
      }
      op.deps = DepKind::After;
      op.afterBegin = static_cast<uint32_t>(prog.after.size());
      if (marks_.empty())
        marks_.assign(prog.ops.capacity(), UINT32_MAX);
      if (word % 4 == 1) { // one back-reference, (word - 1)/4 + 1, inside the word
        const uint32_t back = word / 4 + 1;
        if (back > index)
          return invalid(wordAt, "after: back-reference " + num(back) +
                                     " reaches before the first op (op index " + num(index) +
                                     ")");
        op.afterCount = 1;
        marks_[index - back] = index;
        prog.after.push_back(index - back);
        break;
      }
      const uint32_t n = word / 4; // word 4n + 3: a list of n back-references follows
      if (n > end_ - pos_)
        return malformed(wordAt, "after list of " + num(n) +
                                     " entries runs past the end of the section");
      op.afterCount = n;
      for (uint32_t k = 0; k < n; ++k) {
        const size_t refAt = pos_;
        uint32_t back = 0;
        COLLC_RT_TRY(leb(back, "after back-reference"));
        if (back == 0 || back > index)
          return invalid(refAt, "after: back-reference " + num(back) +
                                    (back == 0 ? " names the op itself"
                                               : " reaches before the first op") +
                                    " (op index " + num(index) + ")");
        const uint32_t dep = index - back;
        if (marks_[dep] == index)
          return invalid(refAt, "after: op " + num(dep) + " is listed twice");
        marks_[dep] = index;
        prog.after.push_back(dep);
      }
      break;
    }
    }

    // Peer.
    if (isMessage(op.kind)) {
      const size_t peerAt = pos_;
      uint32_t code = 0;
      COLLC_RT_TRY(leb(code, "peer"));
      if (mode & modeAbsPeer) {
        if (code >= s.ranks)
          return invalid(peerAt, "peer " + num(code) + " out of range (ranks = " +
                                     num(s.ranks) + ")");
        if (code == rank)
          return invalid(peerAt, "peer " + num(code) + " is the rank itself");
        op.peer = code;
      } else {
        const int64_t d = unzigzag(code);
        auto rel = [d] { return (d < 0 ? "-" : "+") + num(uint64_t(d < 0 ? -d : d)); };
        if (d == 0)
          return invalid(peerAt, "relative peer " + rel() + " is the rank itself");
        if (d >= int64_t(s.ranks) || -d >= int64_t(s.ranks))
          return invalid(peerAt, "relative peer " + rel() + " out of range (ranks = " +
                                     num(s.ranks) + ")");
        op.peer = static_cast<uint32_t>((int64_t(rank) + d + s.ranks) % s.ranks);
      }
    }

    // Slots.
    const size_t chunkAt = pos_;
    uint32_t chunkWord = 0;
    COLLC_RT_TRY(leb(chunkWord, "chunk"));
    op.chunk = chunkWord >> 1;
    size_t countAt = chunkAt;
    if (chunkWord & chunkHasCount) {
      countAt = pos_;
      COLLC_RT_TRY(leb(op.count, "count"));
    }
    size_t srcAt = chunkAt;
    if (hasSrc(op.kind)) {
      op.srcChunk = op.chunk;
      if ((b & modeBit) && (mode & modeSrcChunk)) {
        srcAt = pos_;
        COLLC_RT_TRY(leb(op.srcChunk, "src_chunk"));
      }
    }

    size_t dstAt = chunkAt;
    if (info.hasDst) {
      dstAt = pos_;
      uint32_t word = 0;
      COLLC_RT_TRY(leb(word, "destination"));
      if ((word & dstBufMask) == 3)
        return malformed(dstAt, "destination buffer code 3 is reserved");
      op.hasDst = true;
      op.dst = static_cast<Buffer>(word & dstBufMask);
      op.dstChunk = word >> dstChunkShift;
    }

    // Meaning.
    if (combines(op.kind) && !reduces(s.collective)) {
      const std::string coll = name(s.collective); // "an allgather", "a bcast"
      return invalid(opAt, std::string(kindName) + " is not allowed in " +
                               (std::strchr("aeiou", coll[0]) ? "an " : "a ") + coll +
                               " plan (it does not reduce)");
    }
    if (op.count == 0)
      return invalid(countAt, "count must be at least 1");
    COLLC_RT_TRY(range(rank, op.buf, op.chunk, op.count, chunkAt, "slot"));
    if (hasSrc(op.kind)) {
      COLLC_RT_TRY(range(rank, op.src, op.srcChunk, op.count, srcAt, "source"));
      if (op.src == op.buf && op.srcChunk < uint64_t(op.chunk) + op.count &&
          op.chunk < uint64_t(op.srcChunk) + op.count)
        return invalid(srcAt, "source " + describeSlots(op.src, op.srcChunk, op.count) +
                                  (op.hasDst ? " overlaps operand " : " overlaps destination ") +
                                  describeSlots(op.buf, op.chunk, op.count));
    }
    if (op.hasDst) {
      COLLC_RT_TRY(range(rank, op.dst, op.dstChunk, op.count, dstAt, "destination"));
      auto overlaps = [&](Buffer b, uint32_t chunk) {
        return b == op.dst && chunk < uint64_t(op.dstChunk) + op.count &&
               op.dstChunk < uint64_t(chunk) + op.count;
      };
      const bool onBuf = overlaps(op.buf, op.chunk);
      if (onBuf || (hasSrc(op.kind) && overlaps(op.src, op.srcChunk)))
        return invalid(dstAt, "destination " + describeSlots(op.dst, op.dstChunk, op.count) +
                                  " overlaps " +
                                  (onBuf ? describeSlots(op.buf, op.chunk, op.count)
                                         : describeSlots(op.src, op.srcChunk, op.count)) +
                                  " (omit dst to combine in place)");
    }
    prog.ops.push_back(op);
    return {};
  }

  Status stepDelta(Op &op, uint32_t delta, size_t at) {
    const uint64_t step = lastStep_ + delta;
    if (step > UINT32_MAX)
      return invalid(at, "step " + num(lastStep_) + " + " + num(delta) +
                             " overflows 32 bits");
    lastStep_ = step;
    op.deps = DepKind::Step;
    op.step = static_cast<uint32_t>(step);
    return {};
  }

  Status range(uint32_t rank, Buffer buf, uint32_t chunk, uint32_t count, size_t at,
               const char *what) {
    const Shape &s = plan_.shape;
    const int64_t slots = bufferSlots(s, rank, buf);
    if (slots < 0) {
      if (buf == Buffer::Out || (buf == Buffer::In && s.collective == Collective::Scatter))
        return invalid(at, "rank " + num(rank) + " has no " + name(buf) + " buffer (in " +
                               name(s.collective) + " only the root has one)");
      return invalid(at, std::string(name(s.collective)) + " has no " + name(buf) +
                             " buffer");
    }
    if (uint64_t(chunk) + count > uint64_t(slots))
      return invalid(at, std::string(what) + " " + describeSlots(buf, chunk, count) +
                             " out of range (" + name(buf) + " has " + num(uint64_t(slots)) +
                             " slots)");
    return {};
  }

  // --- messages ------------------------------------------------------------------
  Status channels() {
    std::vector<MessageEnd> sends, recvs;
    // Channels are keyed by program index (the rank itself in a whole
    // plan); a partial plan pairs the channels whose two ends it holds (all
    // of the own rank's, ownPeersPresent) and leaves the others.
    const uint32_t n = static_cast<uint32_t>(plan_.programs.size());
    auto index = [&](uint32_t rank) -> uint32_t {
      if (!plan_.partial)
        return rank;
      auto it = std::lower_bound(plan_.sections.begin(), plan_.sections.end(), rank);
      return it != plan_.sections.end() && *it == rank ? uint32_t(it - plan_.sections.begin())
                                                       : UINT32_MAX;
    };
    for (uint32_t r = 0; r < n; ++r) {
      const std::vector<Op> &ops = plan_.programs[r].ops;
      const uint32_t rank = plan_.rankOf(r);
      for (uint32_t i = 0; i < ops.size(); ++i) {
        const Op &o = ops[i];
        if (!isMessage(o.kind))
          continue;
        const uint32_t q = index(o.peer);
        if (q == UINT32_MAX)
          continue; // the other end is not in this partial plan
        if (o.kind == OpKind::Send)
          sends.push_back({r, q, rank, i, o.count, o.offset, o.kind});
        else
          recvs.push_back({q, r, rank, i, o.count, o.offset, o.kind});
      }
    }
    // Group by channel (from, to) with a stable sort, so that within a
    // channel the ends stay in listing order (docs/plan-format.md, "Message matching").
    auto byChannel = [](const MessageEnd &a, const MessageEnd &b) {
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    };
    sortByChannel(sends, n);
    sortByChannel(recvs, n);

    size_t i = 0, j = 0;
    while (i < sends.size() || j < recvs.size()) {
      const MessageEnd &key = j >= recvs.size() || (i < sends.size() &&
                                                    byChannel(sends[i], recvs[j]))
                                  ? sends[i]
                                  : recvs[j];
      const uint32_t fromIndex = key.from, toIndex = key.to;
      const uint32_t from = plan_.rankOf(fromIndex), to = plan_.rankOf(toIndex);
      size_t ns = 0, nr = 0;
      while (i + ns < sends.size() && sends[i + ns].from == fromIndex &&
             sends[i + ns].to == toIndex)
        ++ns;
      while (j + nr < recvs.size() && recvs[j + nr].from == fromIndex &&
             recvs[j + nr].to == toIndex)
        ++nr;
      for (size_t k = 0; k < std::min(ns, nr); ++k) {
        const MessageEnd &snd = sends[i + k], &rcv = recvs[j + k];
        if (snd.count != rcv.count) {
          rank_ = rcv.rank;
          op_ = rcv.op;
          return fail(ErrorCode::Mismatch, rcv.offset,
                      std::string(name(rcv.kind)) + " from rank " + num(from) + " takes " +
                          num(rcv.count) + (rcv.count == 1 ? " slot" : " slots") +
                          ", but its matching send (rank " + num(from) + " op " +
                          num(snd.op) + ", offset " + hex(snd.offset) + ") sends " +
                          num(snd.count));
        }
      }
      if (ns != nr) {
        const std::string counts = "(rank " + num(from) + " sends " + num(ns) +
                                   (ns == 1 ? " message" : " messages") + " to rank " +
                                   num(to) + ", rank " + num(to) + " receives " + num(nr) +
                                   " from rank " + num(from) + ")";
        const MessageEnd &extra = ns > nr ? sends[i + nr] : recvs[j + ns];
        rank_ = extra.rank;
        op_ = extra.op;
        return fail(ErrorCode::Mismatch, extra.offset,
                    ns > nr ? "send to rank " + num(to) + " has no matching receive " + counts
                            : std::string(name(extra.kind)) + " from rank " + num(from) +
                                  " has no matching send " + counts);
      }
      i += ns;
      j += nr;
    }
    return {};
  }

  const uint8_t *data_;
  size_t size_;
  LoadedPlan &plan_;
  size_t pos_ = 0, end_ = 0; ///< cursor and the end of its scope
  int64_t rank_ = -1, op_ = -1; ///< where errors are, for their messages
  uint64_t lastStep_ = 0;       ///< step of the section's previous step op
  std::vector<uint32_t> marks_; ///< marks_[j] == i: op j already in op i's after list
};

} // namespace

Status load(std::span<const uint8_t> bytes, LoadedPlan &plan) {
  plan = LoadedPlan();
  Status s = Loader(bytes, plan).run();
  if (!s.ok())
    plan = LoadedPlan();
  return s;
}

} // namespace collc::rt
