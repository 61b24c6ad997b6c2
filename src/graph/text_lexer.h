// The lexer of the graph IR's text form (parser.h has the grammar). Tokens:
//
//   local    %name, name in [A-Za-z0-9_]+ (a %N binding or a variable); text = the name
//   global   @name, name in [A-Za-z0-9_.]+; text = the name
//   ident    [A-Za-z_][A-Za-z0-9_.]*: op names, keywords, dtypes, True / False, inff / nanf
//   number   -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)? then a suffix [A-Za-z0-9_]* (text = the number,
//            suffix apart): 3, 0.5f, 1e+20f64, 3i64. Right after a '.', only the digits: %3.0.1
//   string   "..." with the escapes \" \\ \n \t \r \xHH; text = the decoded bytes
//   punct    ( ) [ ] { } , ; : = . # - ? -> and "/*", "*/" around a structured comment
//
// Skipped: whitespace, // line comments and /* */ comments, except a /* whose text starts with
// "ty=" or "attrs:" (after spaces): that one is the punct "/*", and its content is lexed as
// tokens up to the punct "*/", so a string inside it may hold "*/".
//
// The lexer works on [begin, end) of the whole text, on demand, so the parser can read some
// spans raw (shapes, hex data) and jump past them with Seek. Errors are UserErrors that start
// with "source:line:column: " (1-based, columns in bytes) of the offending character.
#pragma once

#include <string>
#include <string_view>

namespace tessera::graph::text {

enum class TokenKind { kEnd, kLocal, kGlobal, kIdent, kNumber, kString, kPunct };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::string suffix;  ///< a number's suffix ("f", "i64", ...); empty otherwise
  size_t offset = 0;   ///< where the token starts in the whole text

  bool Is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool IsPunct(std::string_view p) const { return Is(TokenKind::kPunct, p); }
  bool IsIdent(std::string_view i) const { return Is(TokenKind::kIdent, i); }
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string source) : text_(text), source_(std::move(source)), end_(text.size()) {}

  /// Lexes [begin, end) from now on; drops a peeked token.
  void SetRange(size_t begin, size_t end);
  /// The next token (lexed once, kept until Next).
  const Token& Peek();
  /// The token after Peek(), leaving both unconsumed.
  Token PeekSecond();
  Token Next();

  /// Where lexing continues: the start of the peeked token, else the next unread character.
  size_t pos() const { return peeked_ ? peek_.offset : pos_; }
  /// Continues lexing at `offset`, dropping a peeked token (after a span the parser read raw).
  void Seek(size_t offset);
  std::string_view text() const { return text_; }
  const std::string& source() const { return source_; }
  size_t end() const { return end_; }

  /// "source:line:column" of `offset`.
  std::string Where(size_t offset) const;
  /// Throws UserError "source:line:column: message".
  [[noreturn]] void Fail(size_t offset, const std::string& message) const;
  /// A token as an error message names it: 'def', '%3', "string \"a\"", end of input.
  static std::string Describe(const Token& t);

 private:
  Token Lex();
  void SkipSpaceAndComments();
  bool StartsStructuredComment(size_t p) const;
  Token LexNumber(size_t start);
  Token LexString(size_t start);

  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  size_t end_;
  bool after_dot_ = false;  // the last token lexed was '.'
  bool peeked_ = false;
  Token peek_;
};

}  // namespace tessera::graph::text
