// ir/Wording.h: small helpers that word counts and names in messages ("1 chunk", "an allreduce").
#ifndef COLLC_IR_WORDING_H
#define COLLC_IR_WORDING_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace collc::ir {

/// `n` and `noun`, the noun in the plural unless n is 1: "1 chunk", "3 chunks".
/// Precondition: the plural of `noun` adds an s (chunk, rank, op, slot, message).
inline std::string counted(uint64_t n, llvm::StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// The indefinite article for `word` as it is spelled: "an" before a vowel
/// ("an allreduce", "an exscan"), else "a" ("a reduce", "a bcast").
inline llvm::StringRef article(llvm::StringRef word) {
  return !word.empty() && llvm::StringRef("aeiouAEIOU").contains(word.front()) ? "an" : "a";
}

/// A byte count as messages and pictures word it: "8 B", "64 KiB", "3 MiB"
/// (whole binary units only, else bytes: "1000 B").
inline std::string bytesText(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

} // namespace collc::ir

#endif // COLLC_IR_WORDING_H
