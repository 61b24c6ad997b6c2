// IndexMap (index_map.h): construction, the lambda text form, and its parser.
#include "tessera/tir/schedule/index_map.h"

#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"

namespace tessera::tir {

using ir::ExprKind;

IndexMap IndexMap::FromFunc(const std::vector<std::string>& names,
                            const std::function<std::vector<PrimExpr>(const std::vector<Var>&)>& f) {
  IndexMap m;
  for (const auto& n : names) m.initial_indices.emplace_back(n, DataType::Int(32));
  m.final_indices = f(m.initial_indices);
  return m;
}

// ------------------------------------------------------------------ printing
namespace {
bool IsIdentifier(const std::string& s) {
  if (s.empty() || s == "lambda" || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

/// Precedence: 1 for + -, 2 for * // %, 3 for atoms.
int Prec(const PrimExpr& e) {
  switch (e->kind) {
    case ExprKind::kAdd:
    case ExprKind::kSub: return 1;
    case ExprKind::kMul:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: return 2;
    default: return 3;
  }
}

class LambdaPrinter {
 public:
  explicit LambdaPrinter(const std::map<const ir::VarNode*, std::string>& names) : names_(names) {}

  std::string Print(const PrimExpr& e) {
    if (auto* imm = e.as<ir::IntImmNode>()) {
      return imm->value < 0 ? "(" + std::to_string(imm->value) + ")" : std::to_string(imm->value);
    }
    if (auto* v = e.as<ir::VarNode>()) {
      auto it = names_.find(v);
      return it != names_.end() ? it->second : "<free variable " + v->name_hint + ">";
    }
    const char* op = nullptr;
    switch (e->kind) {
      case ExprKind::kAdd: op = " + "; break;
      case ExprKind::kSub: op = " - "; break;
      case ExprKind::kMul: op = " * "; break;
      case ExprKind::kFloorDiv: op = " // "; break;
      case ExprKind::kFloorMod: op = " % "; break;
      default: break;
    }
    PrimExpr a, b;
    if (op && ir::GetBinaryOperands(e, &a, &b)) {
      // Left-associative: parenthesize a left operand of lower precedence, a right one of lower or equal.
      std::string l = Print(a), r = Print(b);
      if (Prec(a) < Prec(e)) l = "(" + l + ")";
      if (Prec(b) <= Prec(e)) r = "(" + r + ")";
      return l + op + r;
    }
    return "<unsupported expression>";
  }

 private:
  const std::map<const ir::VarNode*, std::string>& names_;
};
}  // namespace

std::string IndexMap::str() const {
  std::map<const ir::VarNode*, std::string> names;
  std::set<std::string> used;
  for (size_t i = 0; i < initial_indices.size(); ++i) {
    std::string n = initial_indices[i]->name_hint;
    if (!IsIdentifier(n) || used.count(n)) n = "i" + std::to_string(i);
    while (used.count(n)) n += "_";
    used.insert(n);
    names[initial_indices[i].get_var()] = n;
  }
  std::ostringstream os;
  os << "lambda ";
  for (size_t i = 0; i < initial_indices.size(); ++i) os << (i ? ", " : "") << names[initial_indices[i].get_var()];
  os << ": (";
  LambdaPrinter p(names);
  for (size_t i = 0; i < final_indices.size(); ++i) os << (i ? ", " : "") << p.Print(final_indices[i]);
  if (final_indices.size() == 1) os << ",";
  os << ")";
  return os.str();
}

// ------------------------------------------------------------------ parsing
namespace {
class LambdaParser {
 public:
  explicit LambdaParser(const std::string& text) : s_(text) {}

  IndexMap Parse() {
    IndexMap m;
    if (Ident() != "lambda") Fail("expected 'lambda'");
    while (true) {
      std::string name = Ident();
      if (name.empty()) Fail("expected a variable name");
      if (vars_.count(name)) Fail("variable '" + name + "' is listed twice");
      m.initial_indices.emplace_back(name, DataType::Int(32));
      vars_[name] = m.initial_indices.back();
      if (Eat(':')) break;
      if (!Eat(',')) Fail("expected ',' or ':'");
    }
    if (!Eat('(')) Fail("expected '(' before the output indices");
    while (true) {
      if (Eat(')')) break;
      m.final_indices.push_back(Sum());
      if (Eat(')')) break;
      if (!Eat(',')) Fail("expected ',' or ')'");
    }
    Skip();
    if (pos_ != s_.size()) Fail("unexpected text after the closing ')'");
    if (m.final_indices.empty()) Fail("no output indices");
    return m;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) {
    TESSERA_THROW(UserError, "IndexMap::Parse: ", why, " at position ", pos_, " of \"", s_, "\"");
  }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool EatStr(const char* t) {
    Skip();
    if (s_.compare(pos_, std::char_traits<char>::length(t), t) == 0) {
      pos_ += std::char_traits<char>::length(t);
      return true;
    }
    return false;
  }
  std::string Ident() {
    Skip();
    size_t b = pos_;
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    }
    return s_.substr(b, pos_ - b);
  }
  PrimExpr Sum() {
    PrimExpr e = Product();
    while (true) {
      if (EatStr("+")) e = e + Product();
      else if (EatStr("-")) e = e - Product();
      else return e;
    }
  }
  PrimExpr Product() {
    PrimExpr e = Unary();
    while (true) {
      if (EatStr("//")) e = ir::floordiv(e, Unary());
      else if (EatStr("*")) e = e * Unary();
      else if (EatStr("%")) e = ir::floormod(e, Unary());
      else return e;
    }
  }
  PrimExpr Unary() {
    if (EatStr("-")) return ir::make_const(DataType::Int(32), 0) - Unary();
    return Atom();
  }
  PrimExpr Atom() {
    if (Eat('(')) {
      PrimExpr e = Sum();
      if (!Eat(')')) Fail("expected ')'");
      return e;
    }
    Skip();
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      size_t b = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ - b > 12) Fail("integer literal too large");
      return ir::make_const(DataType::Int(32), static_cast<int64_t>(std::stoll(s_.substr(b, pos_ - b))));
    }
    std::string name = Ident();
    if (name.empty()) Fail("expected an integer, a variable or '('");
    auto it = vars_.find(name);
    if (it == vars_.end()) {
      pos_ -= name.size();
      Fail("'" + name + "' is not one of the lambda's variables");
    }
    return it->second;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::map<std::string, Var> vars_;
};
}  // namespace

IndexMap IndexMap::Parse(const std::string& text) { return LambdaParser(text).Parse(); }

}  // namespace tessera::tir
