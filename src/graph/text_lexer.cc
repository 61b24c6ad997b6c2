#include "text_lexer.h"

#include "tessera/support/error.h"
#include "text_format.h"

namespace tessera::graph::text {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsWord(char c) { return IsAlpha(c) || IsDigit(c); }

}  // namespace

void Lexer::SetRange(size_t begin, size_t end) {
  end_ = end;
  Seek(begin);
}

void Lexer::Seek(size_t offset) {
  pos_ = offset;
  peeked_ = false;
  after_dot_ = false;
}

const Token& Lexer::Peek() {
  if (!peeked_) {
    peek_ = Lex();
    peeked_ = true;
  }
  return peek_;
}

Token Lexer::PeekSecond() {
  Peek();
  const size_t saved_pos = pos_;
  const bool saved_dot = after_dot_;
  Token second = Lex();
  pos_ = saved_pos;
  after_dot_ = saved_dot;
  return second;
}

Token Lexer::Next() {
  Peek();
  peeked_ = false;
  return std::move(peek_);
}

std::string Lexer::Where(size_t offset) const {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return source_ + ":" + std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
}

void Lexer::Fail(size_t offset, const std::string& message) const {
  TESSERA_THROW(UserError, Where(offset), ": ", message);
}

std::string Lexer::Describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kLocal: return "'%" + t.text + "'";
    case TokenKind::kGlobal: return "'@" + t.text + "'";
    case TokenKind::kString: return "string \"" + (t.text.size() > 20 ? t.text.substr(0, 20) + "..." : t.text) + "\"";
    default: return "'" + t.text + t.suffix + "'";
  }
}

bool Lexer::StartsStructuredComment(size_t p) const {
  while (p < end_ && (text_[p] == ' ' || text_[p] == '\t')) ++p;
  std::string_view rest = text_.substr(p, end_ - p);
  return rest.substr(0, 3) == "ty=" || rest.substr(0, 6) == "attrs:";
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < end_) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < end_ && text_[pos_ + 1] == '/') {
      while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
    } else if (c == '/' && pos_ + 1 < end_ && text_[pos_ + 1] == '*' && !StartsStructuredComment(pos_ + 2)) {
      const size_t close = text_.substr(0, end_).find("*/", pos_ + 2);
      if (close == std::string_view::npos) Fail(pos_, "unterminated comment: expected '*/'");
      pos_ = close + 2;
    } else {
      return;
    }
  }
}

Token Lexer::Lex() {
  const bool after_dot = after_dot_;
  after_dot_ = false;
  SkipSpaceAndComments();
  Token t;
  t.offset = pos_;
  if (pos_ >= end_) return t;
  const char c = text_[pos_];
  const char next = pos_ + 1 < end_ ? text_[pos_ + 1] : '\0';
  if (IsDigit(c) && after_dot) {
    t.kind = TokenKind::kNumber;
    while (pos_ < end_ && IsDigit(text_[pos_])) t.text += text_[pos_++];
    return t;
  }
  if (IsDigit(c) || (c == '-' && IsDigit(next))) return LexNumber(pos_);
  if (c == '"') return LexString(pos_);
  if (c == '%' || c == '@') {
    t.kind = c == '%' ? TokenKind::kLocal : TokenKind::kGlobal;
    ++pos_;
    while (pos_ < end_ && (IsWord(text_[pos_]) || (c == '@' && text_[pos_] == '.'))) t.text += text_[pos_++];
    if (t.text.empty()) Fail(t.offset, std::string("expected a name after '") + c + "'");
    return t;
  }
  if (IsAlpha(c)) {
    t.kind = TokenKind::kIdent;
    while (pos_ < end_ && (IsWord(text_[pos_]) || text_[pos_] == '.')) t.text += text_[pos_++];
    return t;
  }
  t.kind = TokenKind::kPunct;
  for (std::string_view two : {"->", "=>", "/*", "*/"}) {
    if (c == two[0] && next == two[1]) {
      pos_ += 2;
      t.text = two;
      return t;
    }
  }
  if (std::string_view("()[]{},;:=.#-?").find(c) == std::string_view::npos) {
    Fail(pos_, std::string("unexpected character '") + c + "'");
  }
  t.text = std::string(1, c);
  ++pos_;
  after_dot_ = c == '.';
  return t;
}

Token Lexer::LexNumber(size_t start) {
  Token t;
  t.kind = TokenKind::kNumber;
  t.offset = start;
  size_t p = start;
  auto digits = [&] {
    while (p < end_ && IsDigit(text_[p])) ++p;
  };
  if (text_[p] == '-') ++p;
  digits();
  if (p + 1 < end_ && text_[p] == '.' && IsDigit(text_[p + 1])) {
    ++p;
    digits();
  }
  if (p < end_ && (text_[p] == 'e' || text_[p] == 'E')) {
    size_t q = p + 1;
    if (q < end_ && (text_[q] == '+' || text_[q] == '-')) ++q;
    if (q < end_ && IsDigit(text_[q])) {
      p = q;
      digits();
    }
  }
  t.text = std::string(text_.substr(start, p - start));
  while (p < end_ && IsWord(text_[p])) t.suffix += text_[p++];
  pos_ = p;
  return t;
}

Token Lexer::LexString(size_t start) {
  Token t;
  t.kind = TokenKind::kString;
  t.offset = start;
  size_t p = start + 1;
  for (;;) {
    if (p >= end_ || text_[p] == '\n') Fail(start, "unterminated string: expected '\"'");
    const char c = text_[p++];
    if (c == '"') break;
    if (c != '\\') {
      t.text += c;
      continue;
    }
    if (p >= end_) Fail(start, "unterminated string: expected '\"'");
    const char e = text_[p++];
    switch (e) {
      case '"': t.text += '"'; break;
      case '\\': t.text += '\\'; break;
      case 'n': t.text += '\n'; break;
      case 't': t.text += '\t'; break;
      case 'r': t.text += '\r'; break;
      case 'x': {
        const int hi = p < end_ ? HexDigit(text_[p]) : -1;
        const int lo = p + 1 < end_ ? HexDigit(text_[p + 1]) : -1;
        if (hi < 0 || lo < 0) Fail(p - 2, "expected two hex digits after '\\x'");
        t.text += static_cast<char>(hi << 4 | lo);
        p += 2;
        break;
      }
      default: Fail(p - 2, std::string("unknown escape '\\") + e + "' in a string");
    }
  }
  pos_ = p;
  return t;
}

}  // namespace tessera::graph::text
