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

} // namespace collc::ir

#endif // COLLC_IR_WORDING_H
