// lang/Lexer.h: the tokens of an algorithm file (docs/language.md).
//
// Newlines end statements, except inside parentheses and brackets, where an
// expression may continue on the next line. `#` starts a comment that runs to
// the end of the line.
#ifndef COLLC_LANG_LEXER_H
#define COLLC_LANG_LEXER_H

#include "lang/Source.h"

#include <vector>

namespace collc::lang {

/// A token kind: an identifier, a literal, the end of a line or of the file,
/// or one of lang/Tokens.def.
enum class Tok : uint8_t {
  Ident,
  Int,
  String,
  Newline,
  End,
#define COLLC_KEYWORD(Enum, Text) Enum,
#define COLLC_PUNCT(Enum, Text) Enum,
#include "lang/Tokens.def"
};

/// How a token kind is written in a message: "identifier", "'for'", "'..'".
std::string describe(Tok t);

struct Token {
  Tok kind = Tok::End;
  Loc loc;
  llvm::StringRef text; ///< the spelling (a string's contents without quotes)
  int64_t value = 0;    ///< Int
};

/// Splits `src` into tokens ending with one End token, or the first lexical
/// error (an unexpected character, an integer literal too large, an
/// unterminated string).
llvm::Expected<std::vector<Token>> lex(const Source &src);

} // namespace collc::lang

#endif // COLLC_LANG_LEXER_H
