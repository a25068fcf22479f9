// lang/Parser.h: reads an algorithm file into a Module.
#ifndef COLLC_LANG_PARSER_H
#define COLLC_LANG_PARSER_H

#include "lang/Ast.h"

namespace collc::lang {

/// Parses `text`; `fileName` labels error positions. Errors read
/// `file:line:col: error: message` with the line and a caret
/// (docs/language.md "Errors").
llvm::Expected<Module> parse(llvm::StringRef text, llvm::StringRef fileName);

/// Reads and parses a file.
llvm::Expected<Module> parseFile(llvm::StringRef path);

} // namespace collc::lang

#endif // COLLC_LANG_PARSER_H
