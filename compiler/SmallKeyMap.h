// compiler/SmallKeyMap.h: a map from uint32_t keys to uint32_t values for the
// handful of keys one access meets (the reader lists of the runs it covers),
// cleared for every access: up to 16 keys searched in place, hashed beyond.
#ifndef COLLC_COMPILER_SMALLKEYMAP_H
#define COLLC_COMPILER_SMALLKEYMAP_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace collc::compiler {

class SmallKeyMap {
public:
  static constexpr uint32_t none = ~0u;
  void clear() {
    few_.clear();
    many_.clear();
  }
  /// The value of key k, inserted as `none` if absent. The reference is
  /// valid until the next call.
  uint32_t &slot(uint32_t k) {
    if (many_.empty()) {
      for (auto &kv : few_)
        if (kv.first == k)
          return kv.second;
      if (few_.size() < 16) {
        few_.push_back({k, none});
        return few_.back().second;
      }
      for (const auto &kv : few_)
        many_.try_emplace(kv.first, kv.second);
    }
    return many_.try_emplace(k, none).first->second;
  }

private:
  llvm::SmallVector<std::pair<uint32_t, uint32_t>, 16> few_;
  llvm::DenseMap<uint32_t, uint32_t> many_;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_SMALLKEYMAP_H
