// lang/Lexer.cpp: a hand-written lexer tracking line and column.
#include "lang/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cctype>

namespace collc::lang {

std::string describe(Tok t) {
  switch (t) {
  case Tok::Ident:
    return "identifier";
  case Tok::Int:
    return "integer";
  case Tok::String:
    return "string";
  case Tok::Newline:
    return "end of line";
  case Tok::End:
    return "end of file";
#define COLLC_KEYWORD(Enum, Text)                                                          \
  case Tok::Enum:                                                                          \
    return "'" Text "'";
#define COLLC_PUNCT(Enum, Text)                                                            \
  case Tok::Enum:                                                                          \
    return "'" Text "'";
#include "lang/Tokens.def"
  }
  return "token";
}

namespace {

struct Punct {
  llvm::StringLiteral text;
  Tok kind;
};
constexpr Punct puncts[] = {
#define COLLC_PUNCT(Enum, Text) {Text, Tok::Enum},
#include "lang/Tokens.def"
};

Tok keywordOrIdent(llvm::StringRef word) {
  return llvm::StringSwitch<Tok>(word)
#define COLLC_KEYWORD(Enum, Text) .Case(Text, Tok::Enum)
#include "lang/Tokens.def"
      .Default(Tok::Ident);
}

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

} // namespace

llvm::Expected<std::vector<Token>> lex(const Source &src) {
  std::vector<Token> toks;
  llvm::StringRef text = src.text;
  size_t i = 0;
  uint32_t line = 1, col = 1;
  int nesting = 0; // open ( and [: newlines inside them do not end a statement
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n; ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto push = [&](Tok kind, Loc at, llvm::StringRef spelling) {
    if (kind == Tok::Newline && (toks.empty() || toks.back().kind == Tok::Newline))
      return; // blank lines and leading newlines carry nothing
    toks.push_back(Token{kind, at, spelling, 0});
  };
  while (i < text.size()) {
    const char c = text[i];
    const Loc at{line, col};
    if (c == '\n') {
      if (nesting == 0)
        push(Tok::Newline, at, "\n");
      advance(1);
    } else if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        advance(1);
    } else if (isIdentStart(c)) {
      size_t e = i;
      while (e < text.size() && isIdentChar(text[e]))
        ++e;
      llvm::StringRef word = text.slice(i, e);
      push(keywordOrIdent(word), at, word);
      advance(e - i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = i;
      while (e < text.size() && isIdentChar(text[e]))
        ++e;
      llvm::StringRef digits = text.slice(i, e);
      uint64_t v = 0;
      if (digits.getAsInteger(10, v) || v > uint64_t(INT64_MAX))
        return src.error(at, llvm::Twine("integer literal '") + digits +
                                 "' is not a decimal number below 2^63");
      push(Tok::Int, at, digits);
      toks.back().value = int64_t(v);
      advance(e - i);
    } else if (c == '"') {
      size_t e = i + 1;
      while (e < text.size() && text[e] != '"' && text[e] != '\n')
        ++e;
      if (e >= text.size() || text[e] != '"')
        return src.error(at, "unterminated string (a string ends on its line with '\"')");
      push(Tok::String, at, text.slice(i + 1, e));
      advance(e + 1 - i);
    } else {
      const Punct *match = nullptr;
      for (const Punct &p : puncts)
        if (text.substr(i).startswith(p.text)) {
          match = &p;
          break;
        }
      if (!match) {
        const bool printable = std::isprint(static_cast<unsigned char>(c));
        return src.error(at, printable ? llvm::Twine("unexpected character '") + llvm::Twine(c) + "'"
                                       : llvm::Twine("unexpected byte 0x") +
                                             llvm::utohexstr(static_cast<unsigned char>(c)));
      }
      if (match->kind == Tok::LParen || match->kind == Tok::LBracket)
        ++nesting;
      else if ((match->kind == Tok::RParen || match->kind == Tok::RBracket) && nesting > 0)
        --nesting;
      push(match->kind, at, match->text);
      advance(match->text.size());
    }
  }
  // The end of the file is reported just past its last token, on a line a
  // reader can see.
  Loc end{line, col};
  for (auto t = toks.rbegin(); t != toks.rend(); ++t)
    if (t->kind != Tok::Newline) {
      end = Loc{t->loc.line, t->loc.col + uint32_t(t->text.size()) +
                                 (t->kind == Tok::String ? 2u : 0u)};
      break;
    }
  push(Tok::Newline, end, "\n");
  toks.push_back(Token{Tok::End, end, "", 0});
  return toks;
}

} // namespace collc::lang
