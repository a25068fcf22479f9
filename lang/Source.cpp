// lang/Source.cpp: positioned error text with the line and a caret.
#include "lang/Source.h"

namespace collc::lang {

llvm::StringRef Source::lineText(uint32_t line) const {
  llvm::StringRef rest = text;
  for (uint32_t l = 1; l < line && !rest.empty(); ++l)
    rest = rest.split('\n').second;
  return rest.split('\n').first.rtrim('\r');
}

std::string Source::format(Loc at, llvm::StringRef message, llvm::StringRef kind) const {
  std::string s = name + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": " +
                  kind.str() + ": " + message.str();
  if (at.line == 0)
    return s;
  llvm::StringRef line = lineText(at.line);
  s += "\n  " + line.str() + "\n  ";
  // Tabs stay tabs so the caret lines up under the same column.
  for (uint32_t c = 1; c < at.col && c <= line.size(); ++c)
    s += line[c - 1] == '\t' ? '\t' : ' ';
  s += '^';
  return s;
}

llvm::Error Source::error(Loc at, const llvm::Twine &message) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), format(at, message.str()));
}

} // namespace collc::lang
