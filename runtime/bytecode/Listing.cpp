// runtime/bytecode/Listing.cpp: the byte-level listing of a loaded plan.
#include "runtime/bytecode/Listing.h"

#include <cassert>
#include <cstdio>

namespace collc::rt {

namespace {

void appendf(std::string &out, const char *fmt, auto... args) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, args...);
  out += buf;
}

std::string slots(Buffer b, uint32_t chunk, uint32_t count) {
  std::string s = std::string(name(b)) + "[" + std::to_string(chunk);
  if (count != 1)
    s += ".." + std::to_string(uint64_t(chunk) + count - 1);
  return s + "]";
}

} // namespace

std::string listing(std::span<const uint8_t> bytes, const LoadedPlan &plan) {
  assert(bytes.size() >= format::minFileSize && "listing of a plan that did not load");
  const Shape &s = plan.shape;
  std::string out;
  appendf(out, "; .cplan version %u, %zu bytes, crc32 0x%08x\n", unsigned(format::version),
          bytes.size(), readU32(bytes.data() + bytes.size() - format::checksumSize));
  appendf(out, "; %s '%s', ranks %u", name(s.collective), plan.algorithm.c_str(), s.ranks);
  if (hasRoot(s.collective))
    appendf(out, ", root %u", s.root);
  appendf(out, ", chunks %u, scratch %u%s%s\n", s.chunks, s.scratch,
          s.commutative ? ", commutative" : "", s.inPlace ? ", in_place" : "");
  if (plan.partial)
    appendf(out, "; partial plan: rank %u's program, %zu sections\n", plan.own,
            plan.sections.size());
  // LEB128 fields are minimal (the loader checks), so their sizes give the
  // offset table's position.
  size_t table = format::fixedHeaderSize + leb128Size(s.ranks) + leb128Size(s.root) +
                 leb128Size(s.chunks) + leb128Size(s.scratch) +
                 leb128Size(uint32_t(plan.algorithm.size())) + plan.algorithm.size();
  if (plan.partial) {
    table += leb128Size(plan.own) + leb128Size(uint32_t(plan.sections.size()));
    for (uint32_t r : plan.sections)
      table += leb128Size(r);
  }
  auto sectionEnd = [&](size_t r) -> size_t {
    return r + 1 < plan.programs.size() ? readU32(bytes.data() + table + 4 * (r + 1))
                                        : bytes.size() - format::checksumSize;
  };
  for (size_t r = 0; r < plan.programs.size(); ++r) {
    const Program &prog = plan.programs[r];
    appendf(out, "rank %u: section 0x%x, %zu ops%s\n", plan.rankOf(r),
            readU32(bytes.data() + table + 4 * r), prog.ops.size(),
            plan.partial && plan.rankOf(r) != plan.own ? " (context)" : "");
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      const Op &op = prog.ops[i];
      const size_t end = i + 1 < prog.ops.size() ? prog.ops[i + 1].offset : sectionEnd(r);
      std::string hexBytes;
      for (size_t k = op.offset; k < end && k < op.offset + 8; ++k)
        appendf(hexBytes, "%02x ", bytes[k]);
      if (end > op.offset + 8)
        hexBytes += "..";
      std::string text = opcodeInfo(uint8_t(op.opcode)).mnemonic;
      text += " " + slots(op.buf, op.chunk, op.count);
      if (op.kind == OpKind::Send)
        text += " to " + std::to_string(op.peer);
      else if (isMessage(op.kind))
        text += " from " + std::to_string(op.peer);
      else
        text += " from " + slots(op.src, op.srcChunk, op.count);
      if (op.hasDst)
        text += " into " + slots(op.dst, op.dstChunk, op.count);
      if (op.deps == DepKind::Step)
        text += "  step " + std::to_string(op.step);
      else if (op.deps == DepKind::After) {
        text += "  after [";
        for (size_t k = 0; k < op.afterCount; ++k)
          text += (k ? ", " : "") + std::to_string(prog.after[op.afterBegin + k]);
        text += "]";
      }
      appendf(out, "  0x%06x  %-26s %4zu  %s\n", op.offset, hexBytes.c_str(), i, text.c_str());
    }
  }
  return out;
}

} // namespace collc::rt
