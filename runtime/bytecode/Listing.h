// runtime/bytecode/Listing.h: a byte-level listing of a loaded .cplan file
// (`collc disasm --listing`): every op with its offset, its bytes and its
// mnemonic from Opcodes.def.
#ifndef COLLC_RUNTIME_BYTECODE_LISTING_H
#define COLLC_RUNTIME_BYTECODE_LISTING_H

#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <span>
#include <string>

namespace collc::rt {

/// The listing of `bytes`. Precondition: load(bytes, plan) succeeded.
std::string listing(std::span<const uint8_t> bytes, const LoadedPlan &plan);

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_LISTING_H
