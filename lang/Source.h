// lang/Source.h: an algorithm file's text and positioned errors.
//
// Every error the front end reports reads
//   file:line:col: error: message
//     the source line
//     ^
// so a user sees the spot; the instantiator adds the values of the program's
// variables at that moment to the message.
#ifndef COLLC_LANG_SOURCE_H
#define COLLC_LANG_SOURCE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace collc::lang {

/// A 1-based line and column in a source file; line 0 is "no position".
struct Loc {
  uint32_t line = 0;
  uint32_t col = 0;
};

/// A source file: its name (as errors print it) and text.
struct Source {
  std::string name;
  std::string text;

  /// The text of 1-based line `line`, without its newline.
  llvm::StringRef lineText(uint32_t line) const;
  /// `name:line:col: KIND: message`, the line and a caret under `col`
  /// (KIND is "error" or "note").
  std::string format(Loc at, llvm::StringRef message, llvm::StringRef kind = "error") const;
  /// format() wrapped in an llvm::Error.
  llvm::Error error(Loc at, const llvm::Twine &message) const;
};

} // namespace collc::lang

#endif // COLLC_LANG_SOURCE_H
