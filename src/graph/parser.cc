#include "tessera/graph/parser.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <algorithm>
#include <unordered_map>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"
#include "text_format.h"
#include "text_lexer.h"

namespace tessera::graph {

namespace {

using text::FromChars;
using text::Token;
using text::TokenKind;

constexpr int kMaxDepth = 200;
constexpr std::string_view kMetadataHeader = "#[metadata]";

// Where the metadata section starts: a line that begins with "#[metadata]"; npos when none.
size_t FindMetadata(std::string_view text) {
  for (size_t pos = 0;;) {
    if (text.substr(pos, kMetadataHeader.size()) == kMetadataHeader) return pos;
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return pos;
    ++pos;
  }
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& source, bool type_check)
      : lex_(text, source), type_check_(type_check) {}

  IRModule Module() {
    ReadMetadata();
    while (lex_.Peek().kind != TokenKind::kEnd) {
      if (lex_.Peek().IsIdent("type")) {
        TypeDef();
        continue;
      }
      const Token def = Expect("def", "'def' or 'type'");
      const Token name = lex_.Next();
      if (name.kind != TokenKind::kGlobal) Fail(name, "expected a function name '@name' after 'def'");
      if (mod_.Contains(name.text)) lex_.Fail(name.offset, "function @" + name.text + " is defined twice");
      forward_globals_ = false;
      mod_.Add(name.text, FunctionRest(def.offset));
    }
    for (const auto& [at, name] : global_uses_)
      if (!mod_.Contains(name)) lex_.Fail(at, "unknown global function @" + name);
    try {
      return InferType(mod_);
    } catch (const UserError& e) {
      TESSERA_THROW(UserError, lex_.source(), ": ", e.what());
    }
  }

  // 'type' NAME ['[' IDENT {',' IDENT} ']'] '{' ctor {',' ctor} [','] '}', ctor := NAME ['(' type {',' type} ')']
  void TypeDef() {
    const Token start = lex_.Next();
    const Token name = lex_.Next();
    if (name.kind != TokenKind::kIdent) Fail(name, "expected a type name after 'type'");
    std::vector<std::string> params;
    if (Accept("[")) {
      do {
        const Token p = lex_.Next();
        if (p.kind != TokenKind::kIdent) Fail(p, "expected a type parameter name");
        params.push_back(p.text);
      } while (Accept(","));
      ExpectPunct("]");
    }
    defining_ = {name.text, params};
    std::vector<ConstructorDef> ctors;
    ExpectPunct("{");
    while (!lex_.Peek().IsPunct("}")) {
      const Token c = lex_.Next();
      if (c.kind != TokenKind::kIdent) Fail(c, "expected a constructor name");
      ConstructorDef def{c.text, {}};
      if (Accept("(")) {
        do {
          def.fields.push_back(ParseType());
        } while (Accept(","));
        ExpectPunct(")");
      }
      ctors.push_back(std::move(def));
      if (!Accept(",")) break;
    }
    ExpectPunct("}");
    defining_ = {};
    try {
      mod_.AddTypeDef(TypeDataNode::make(name.text, std::move(params), std::move(ctors)));
    } catch (const UserError& e) {
      lex_.Fail(start.offset, e.what());
    }
  }

  Expr Expression(const std::vector<Var>& free_vars) {
    ReadMetadata();
    scopes_.emplace_back();
    for (const Var& v : free_vars) scopes_.back()[text::LegalVarName(v->name_hint)] = {v, 0};
    Expr e = Block();
    if (lex_.Peek().kind != TokenKind::kEnd) Fail(lex_.Peek(), "expected end of input");
    return e;
  }

 private:
  struct Binding {
    Expr expr;
    size_t offset;
  };

  // Counts the nesting of expressions and types: deeper than kMaxDepth is an error.
  class DepthGuard {
   public:
    DepthGuard(Parser* p, size_t offset) : p_(p) {
      if (++p_->depth_ > kMaxDepth) {
        p_->lex_.Fail(offset, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      }
    }
    ~DepthGuard() { --p_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser* p_;
  };

  [[noreturn]] void Fail(const Token& found, const std::string& expected) const {
    lex_.Fail(found.offset, expected + ", found " + text::Lexer::Describe(found));
  }

  Token Expect(std::string_view punct_or_keyword, const std::string& what) {
    const Token& t = lex_.Peek();
    const bool ok = (t.kind == TokenKind::kPunct || t.kind == TokenKind::kIdent) && t.text == punct_or_keyword;
    if (!ok) Fail(t, "expected " + what);
    return lex_.Next();
  }
  Token ExpectPunct(std::string_view p) { return Expect(p, "'" + std::string(p) + "'"); }
  bool Accept(std::string_view punct) {
    if (!lex_.Peek().IsPunct(punct)) return false;
    lex_.Next();
    return true;
  }

  // ---- names ----------------------------------------------------------------------------------

  void Define(const Token& name, Expr e) {
    auto [it, inserted] = scopes_.back().emplace(name.text, Binding{e, name.offset});
    if (!inserted) {
      lex_.Fail(name.offset,
                "%" + name.text + " is already defined in this block (at " + lex_.Where(it->second.offset) + ")");
    }
  }

  Expr Resolve(const Token& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = s->find(name.text);
      if (it != s->end()) return it->second.expr;
    }
    lex_.Fail(name.offset, "unknown variable %" + name.text);
  }

  // ---- type checking --------------------------------------------------------------------------

  // Types `e` (when type-checking) and reports a failure at `offset`. Not in a function that names
  // a global defined after it (or itself): ParseModule's InferType checks that one whole.
  Type Check(const Expr& e, size_t offset) {
    if (!type_check_ || forward_globals_) return nullptr;
    try {
      return InferExprType(e, &mod_);
    } catch (const UserError& err) {
      lex_.Fail(offset, err.what());
    } catch (const std::exception& err) {
      // A type relation read an attr of another kind than it expects (parser.h).
      lex_.Fail(offset, std::string("type check failed: ") + err.what());
    }
  }

  // ---- metadata -------------------------------------------------------------------------------

  // Reads the metadata section, if any, and leaves the lexer on the text before it.
  void ReadMetadata() {
    const size_t begin = FindMetadata(lex_.text());
    if (begin == std::string_view::npos) return;
    has_metadata_ = true;
    lex_.SetRange(begin, lex_.text().size());
    ExpectPunct("#");
    ExpectPunct("[");
    Expect("metadata", "'metadata'");
    ExpectPunct("]");
    while (lex_.Peek().kind != TokenKind::kEnd) MetadataEntry();
    lex_.SetRange(0, begin);
  }

  // Constant[i]: dtype (shape) hex
  void MetadataEntry() {
    const Token start = Expect("Constant", "'Constant[i]: dtype (shape) hex' in the metadata section");
    ExpectPunct("[");
    const Token index = lex_.Next();
    if (index.kind != TokenKind::kNumber || FromChars<size_t>(index.text + index.suffix) != constants_.size()) {
      Fail(index, "expected the index " + std::to_string(constants_.size()) + " (entries are numbered in order)");
    }
    ExpectPunct("]");
    ExpectPunct(":");
    const DataType dtype = DType();
    const size_t shape_at = lex_.Peek().offset;
    const Shape shape = ParseShape();
    auto dims = StaticShape(shape);
    if (!dims) lex_.Fail(shape_at, "a metadata constant needs a static shape");
    // The hex data: the rest of the line.
    std::string_view text = lex_.text();
    size_t p = lex_.pos();
    while (p < lex_.end() && (text[p] == ' ' || text[p] == '\t')) ++p;
    const size_t hex_begin = p;
    while (p < lex_.end() && text::HexDigit(text[p]) >= 0) ++p;
    if (p < lex_.end() && text[p] != '\n' && text[p] != '\r') {
      lex_.Fail(p, "expected hex digits (the constant's bytes) up to the end of the line");
    }
    uint64_t bytes = static_cast<uint64_t>(dtype.bytes());
    for (int64_t d : *dims) {
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) bytes = std::numeric_limits<uint64_t>::max();
    }
    const size_t hex_size = p - hex_begin;
    if (hex_size % 2 != 0 || hex_size / 2 != bytes) {
      lex_.Fail(hex_begin, "Constant[" + index.text + "]: " + dtype.str() + " " + ShapeStr(shape) + " holds " +
                               std::to_string(bytes) + " bytes, found " + std::to_string(hex_size) + " hex digits");
    }
    runtime::NDArray a;
    try {
      a = runtime::NDArray::Empty(*dims, dtype);
    } catch (const UserError& e) {
      lex_.Fail(start.offset, e.what());
    }
    text::HexDecode(text.substr(hex_begin, hex_size), a.raw_data(), a.NBytes());
    if (dtype.is_bool()) {
      const auto* b = static_cast<const uint8_t*>(a.raw_data());
      for (size_t i = 0; i < a.NBytes(); ++i)
        if (b[i] > 1) lex_.Fail(hex_begin + 2 * i, "a bool byte must be 00 or 01");
    }
    constants_.push_back(ConstantNode::make(a));
    lex_.Seek(p);
  }

  // ---- functions and blocks -------------------------------------------------------------------

  // function := '(' params ')' ['->' type] [fnattrs] '{' block '}', after 'def @name' or 'fn'.
  Function FunctionRest(size_t start) {
    ExpectPunct("(");
    scopes_.emplace_back();
    std::vector<Var> params;
    if (!Accept(")")) {
      do {
        const Token name = lex_.Next();
        if (name.kind != TokenKind::kLocal) Fail(name, "expected a parameter '%name: Type'");
        ExpectPunct(":");
        Var v = VarNode::make(name.text, ParseType());
        Define(name, v);
        params.push_back(v);
      } while (Accept(","));
      ExpectPunct(")");
    }
    Type ret = Accept("->") ? ParseType() : nullptr;
    // The let var this function is bound to (a recursive let) gets the signature's type, for the
    // calls of it in the body; without a return type it stays untyped (a recursive call is then a
    // type error asking for one).
    if (Var self = std::exchange(let_function_, nullptr); self && ret && !self->type_annotation) {
      std::vector<Type> types;
      for (const Var& p : params) types.push_back(p->type_annotation);
      self->set_checked_type(FuncTypeNode::make(std::move(types), ret));
    }
    Attrs attrs;
    if (lex_.Peek().IsPunct("/*")) {
      const Token open = lex_.Next();
      if (!lex_.Peek().IsIdent("attrs")) {
        lex_.Fail(open.offset, "expected '/* attrs: ... */' after a function's signature");
      }
      lex_.Next();
      ExpectPunct(":");
      do {
        AttrItem(&attrs);
      } while (Accept(","));
      ExpectPunct("*/");
    }
    ExpectPunct("{");
    Expr body = Block();
    ExpectPunct("}");
    scopes_.pop_back();
    Function f = FunctionNode::make(std::move(params), std::move(body), std::move(ret), std::move(attrs));
    Check(f, start);
    return f;
  }

  // block := {stmt ';'} expr; its own scope. Stops before the '}' (or the end) that follows.
  Expr Block() {
    scopes_.emplace_back();
    std::vector<std::pair<Var, Expr>> lets;
    for (;;) {
      const Token t = lex_.Peek();
      if (t.IsIdent("let")) {
        lex_.Next();
        const Token name = lex_.Next();
        if (name.kind != TokenKind::kLocal) Fail(name, "expected a variable '%name' after 'let'");
        Type annotation = Accept(":") ? ParseType() : nullptr;
        ExpectPunct("=");
        Var v = VarNode::make(name.text, annotation);
        // A let-bound function may call itself (Relay's recursive let: a loop or a recursive
        // closure): its name is defined before its value, and typed by its signature.
        const bool fn_value = lex_.Peek().IsIdent("fn");
        if (fn_value) {
          Define(name, v);
          let_function_ = v;
        }
        Expr value = ParseExpr();
        ExpectPunct(";");
        if (Type vt = Check(value, t.offset)) {
          if (annotation && !StructuralEqual(annotation, vt)) {
            lex_.Fail(t.offset, "let %" + name.text + " is annotated " + annotation->str() +
                                    " but bound to a value of type " + vt->str());
          }
          v->set_checked_type(vt);  // as InferType does for a let: later lines may use %name
        }
        if (!fn_value) Define(name, v);
        lets.emplace_back(v, value);
        continue;
      }
      if (t.kind == TokenKind::kLocal && lex_.PeekSecond().IsPunct("=")) {
        lex_.Next();
        lex_.Next();
        Expr e = ParseExpr();
        ExpectPunct(";");
        Check(e, t.offset);
        Define(t, e);
        continue;
      }
      break;
    }
    const size_t result_at = lex_.Peek().offset;
    Expr result = ParseExpr();
    Check(result, result_at);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) result = LetNode::make(it->first, it->second, result);
    scopes_.pop_back();
    return result;
  }

  // ---- expressions ----------------------------------------------------------------------------

  // expr := primary {'.' INT | '(' args ')' | tycomment}
  Expr ParseExpr() {
    const Token start = lex_.Peek();
    DepthGuard guard(this, start.offset);
    Expr e = Primary();
    for (;;) {
      const Token& t = lex_.Peek();
      if (t.IsPunct("/*")) {
        TypeComment();
      } else if (t.IsPunct(".")) {
        lex_.Next();
        const Token index = lex_.Next();
        auto i = index.kind == TokenKind::kNumber ? FromChars<int>(index.text) : std::nullopt;
        if (!i || *i < 0) Fail(index, "expected a tuple field index after '.'");
        e = TupleGetItemNode::make(e, *i);
      } else if (t.IsPunct("(") && e->kind != ExprKind::kOp) {
        Attrs attrs;
        std::vector<Expr> args = Args(&attrs);
        e = CallNode::make(e, std::move(args), std::move(attrs));
      } else {
        return e;
      }
    }
  }

  Expr Primary() {
    const Token t = lex_.Peek();
    switch (t.kind) {
      case TokenKind::kLocal: lex_.Next(); return Resolve(t);
      case TokenKind::kGlobal: {
        lex_.Next();
        if (!mod_.Contains(t.text)) forward_globals_ = true;
        global_uses_.emplace_back(t.offset, t.text);
        return GlobalVarNode::make(t.text);
      }
      case TokenKind::kNumber: {
        lex_.Next();
        auto a = text::ParseScalarLiteral(t.text, t.suffix);
        if (!a) Fail(t, "expected a scalar literal (1f, 1.5f, 1f64, 3i64, 3) in range");
        return ConstantNode::make(*a);
      }
      case TokenKind::kIdent: return IdentPrimary();
      case TokenKind::kPunct:
        if (t.IsPunct("(")) return TupleOrParens();
        if (t.IsPunct("{")) {
          lex_.Next();
          Expr e = Block();
          ExpectPunct("}");
          return e;
        }
        break;
      default: break;
    }
    Fail(t, "expected an expression");
  }

  Expr IdentPrimary() {
    const Token t = lex_.Next();
    if (t.text == "True" || t.text == "False") return ConstantNode::make(*text::ParseScalarLiteral(t.text, ""));
    if (t.text == "meta") return MetaConstant(t);
    if (t.text == "fn") return FunctionRest(t.offset);
    if (t.text == "if") {
      ExpectPunct("(");
      Expr cond = ParseExpr();
      ExpectPunct(")");
      Expr then_branch = Braced();
      Expect("else", "'else'");
      return IfNode::make(std::move(cond), std::move(then_branch), Braced());
    }
    if (t.text == "let") lex_.Fail(t.offset, "'let' starts a line of a block ('let %x = value;'), not an operand");
    if (t.text == "match") return MatchRest();
    if (Constructor ctor = mod_.FindConstructor(t.text)) return ctor;
    const OpInfo* info = OpRegistry::Global().Find(t.text);
    if (!info) lex_.Fail(t.offset, "unknown operator '" + t.text + "'");
    Op op = OpNode::Get(t.text);
    if (!lex_.Peek().IsPunct("(")) return op;
    Attrs attrs;
    std::vector<Expr> args = Args(&attrs);
    if (info->num_inputs >= 0 && static_cast<size_t>(info->num_inputs) != args.size()) {
      lex_.Fail(t.offset, "operator " + t.text + " takes " + std::to_string(info->num_inputs) + " argument(s), got " +
                              std::to_string(args.size()));
    }
    return CallNode::make(op, std::move(args), std::move(attrs));
  }

  // '(' expr ')' '{' clause {',' clause} [','] '}', clause := pattern '=>' expr, after 'match'.
  Expr MatchRest() {
    ExpectPunct("(");
    const size_t data_at = lex_.Peek().offset;
    Expr data = ParseExpr();
    const Type data_type = Check(data, data_at);
    ExpectPunct(")");
    ExpectPunct("{");
    std::vector<MatchClause> clauses;
    while (!lex_.Peek().IsPunct("}")) {
      scopes_.emplace_back();  // the pattern's variables, seen by the clause's result only
      const size_t pattern_at = lex_.Peek().offset;
      ClausePattern pattern = Pattern();
      if (data_type) {  // the variables' types, for the checks of the clause's bindings
        try {
          InferPatternTypes(*pattern, data_type);
        } catch (const UserError& err) {
          lex_.Fail(pattern_at, err.what());
        }
      }
      ExpectPunct("=>");
      Expr rhs = ParseExpr();
      scopes_.pop_back();
      clauses.push_back({std::move(pattern), std::move(rhs)});
      if (!Accept(",")) break;
    }
    const Token close = ExpectPunct("}");
    if (clauses.empty()) lex_.Fail(close.offset, "a match needs at least one clause");
    return MatchNode::make(std::move(data), std::move(clauses));
  }

  // '_' | LOCAL [':' type] | CTOR ['(' pattern {',' pattern} ')'] | '(' [pattern {',' pattern} [',']] ')'
  ClausePattern Pattern() {
    const Token t = lex_.Next();
    DepthGuard guard(this, t.offset);
    if (t.IsIdent("_")) return ClausePatternNode::Wildcard();
    if (t.kind == TokenKind::kLocal) {
      Var v = VarNode::make(t.text, Accept(":") ? ParseType() : nullptr);
      Define(t, v);
      return ClausePatternNode::Bind(v);
    }
    if (t.IsPunct("(")) {
      std::vector<ClausePattern> fields;
      while (!lex_.Peek().IsPunct(")")) {
        fields.push_back(Pattern());
        if (!Accept(",")) break;
      }
      ExpectPunct(")");
      return ClausePatternNode::Tuple(std::move(fields));
    }
    Constructor ctor = t.kind == TokenKind::kIdent ? mod_.FindConstructor(t.text) : nullptr;
    if (!ctor) Fail(t, "expected a pattern ('_', '%x', a constructor such as Cons(%h, %t), or a tuple '(%a, %b)')");
    std::vector<ClausePattern> fields;
    if (Accept("(")) {
      do {
        fields.push_back(Pattern());
      } while (Accept(","));
      ExpectPunct(")");
    }
    if (fields.size() != ctor->def().fields.size()) {
      lex_.Fail(t.offset, "pattern " + ctor->name() + " has " + std::to_string(fields.size()) +
                              " sub-pattern(s); the constructor has " + std::to_string(ctor->def().fields.size()) +
                              " field(s)");
    }
    return ClausePatternNode::Ctor(ctor, std::move(fields));
  }

  Expr Braced() {
    ExpectPunct("{");
    Expr e = Block();
    ExpectPunct("}");
    return e;
  }

  // '(' ')' | '(' expr ')' | '(' expr ',' ... ')'
  Expr TupleOrParens() {
    ExpectPunct("(");
    if (Accept(")")) return TupleNode::make({});
    std::vector<Expr> fields{ParseExpr()};
    if (Accept(")")) return fields[0];
    ExpectPunct(",");
    while (!lex_.Peek().IsPunct(")")) {
      fields.push_back(ParseExpr());
      if (!Accept(",")) break;
    }
    ExpectPunct(")");
    return TupleNode::make(std::move(fields));
  }

  // meta '[' 'Constant' ']' '[' INT ']', after 'meta'.
  Expr MetaConstant(const Token& meta) {
    ExpectPunct("[");
    Expect("Constant", "'Constant'");
    ExpectPunct("]");
    ExpectPunct("[");
    const Token index = lex_.Next();
    auto i = index.kind == TokenKind::kNumber && index.suffix.empty() ? FromChars<size_t>(index.text) : std::nullopt;
    if (!i) Fail(index, "expected a constant index");
    ExpectPunct("]");
    if (!has_metadata_) {
      lex_.Fail(meta.offset, "meta[Constant][" + index.text +
                                 "] needs the #[metadata] section, and the text has none (print it with "
                                 "PrintOptions{.metadata = true})");
    }
    if (*i >= constants_.size()) {
      lex_.Fail(meta.offset, "meta[Constant][" + index.text + "]: the metadata section has " +
                                 std::to_string(constants_.size()) + " constants");
    }
    return constants_[*i];
  }

  // '(' [arg {',' arg}] ')': positional arguments, then k=v attrs into `attrs`.
  std::vector<Expr> Args(Attrs* attrs) {
    ExpectPunct("(");
    std::vector<Expr> args;
    if (Accept(")")) return args;
    do {
      const Token& t = lex_.Peek();
      if (t.kind == TokenKind::kIdent && lex_.PeekSecond().IsPunct("=")) {
        AttrItem(attrs);
      } else if (!attrs->empty()) {
        Fail(t, "expected an attribute 'name=value' (positional arguments come first)");
      } else {
        args.push_back(ParseExpr());
      }
    } while (Accept(","));
    ExpectPunct(")");
    return args;
  }

  // '/*' 'ty' '=' type '*/': read to check its syntax, then dropped.
  void TypeComment() {
    const Token open = lex_.Next();
    if (!lex_.Peek().IsIdent("ty")) lex_.Fail(open.offset, "expected a type comment '/* ty=... */' here");
    lex_.Next();
    ExpectPunct("=");
    ParseType();
    ExpectPunct("*/");
  }

  // ---- attrs ----------------------------------------------------------------------------------

  // IDENT '=' value
  void AttrItem(Attrs* attrs) {
    const Token name = lex_.Next();
    if (name.kind != TokenKind::kIdent) Fail(name, "expected an attribute 'name=value'");
    ExpectPunct("=");
    if (attrs->Has(name.text)) lex_.Fail(name.offset, "attribute '" + name.text + "' is given twice");
    attrs->SetValue(name.text, AttrValueOf());
  }

  AttrValue AttrValueOf() {
    const Token& t = lex_.Peek();
    if (t.kind == TokenKind::kString) return lex_.Next().text;
    if (!t.IsPunct("[")) return AttrScalar();
    lex_.Next();
    std::vector<int64_t> ints;
    std::vector<double> doubles;
    if (!Accept("]")) {
      do {
        const Token item = lex_.Peek();
        AttrValue v = AttrScalar();
        if (auto* i = std::get_if<int64_t>(&v)) ints.push_back(*i);
        else doubles.push_back(std::get<double>(v));
        if (!ints.empty() && !doubles.empty()) Fail(item, "expected a list of only ints or only doubles");
      } while (Accept(","));
      ExpectPunct("]");
    }
    if (!doubles.empty()) return doubles;
    return ints;
  }

  // An int64 (3), a double (0.5f, 1e+20f, inff, -nanf).
  AttrValue AttrScalar() {
    const Token t = lex_.Next();
    if (t.kind == TokenKind::kNumber) {
      const bool integral = t.text.find_first_of(".eE") == std::string::npos;
      if (t.suffix.empty() && integral) {
        if (auto i = FromChars<int64_t>(t.text)) return *i;
      } else if (t.suffix == "f" || t.suffix.empty()) {
        if (auto d = FromChars<double>(t.text)) return *d;
      }
      Fail(t, "expected an int64 or a double such as 0.5f");
    }
    const bool negative = t.IsPunct("-");
    const Token word = negative ? lex_.Next() : t;
    if (word.IsIdent("inff")) return negative ? -HUGE_VAL : HUGE_VAL;
    if (word.IsIdent("nanf")) return negative ? -std::nan("") : std::nan("");
    Fail(word, "expected an attribute value (3, 0.5f, \"text\", [1, 2])");
  }

  // ---- types ----------------------------------------------------------------------------------

  Type ParseType() {
    const Token t = lex_.Next();
    DepthGuard guard(this, t.offset);
    if (t.IsIdent("Tensor")) {
      ExpectPunct("[");
      Shape shape = ParseShape();
      ExpectPunct(",");
      DataType dtype = DType();
      ExpectPunct("]");
      return TensorTypeNode::make(std::move(shape), dtype);
    }
    if (t.IsIdent("TensorArray")) {
      ExpectPunct("[");
      const Token at = lex_.Peek();
      Type element = ParseType();
      if (!element->as<TensorTypeNode>()) Fail(at, "a TensorArray's element type must be a tensor type");
      ExpectPunct("]");
      return ListTypeNode::make(std::move(element));
    }
    if (t.IsIdent("_")) return IncompleteTypeNode::make();
    if (t.kind == TokenKind::kIdent && t.text != "fn") {
      const auto& params = defining_.second;
      if (std::find(params.begin(), params.end(), t.text) != params.end()) return TypeVarNode::make(t.text);
      size_t arity = 0;
      if (t.text == defining_.first) arity = params.size();
      else if (TypeData data = mod_.FindTypeDef(t.text)) arity = data->type_params.size();
      else lex_.Fail(t.offset, "unknown type '" + t.text + "' (define it first: type " + t.text + " { ... })");
      std::vector<Type> args;
      if (arity > 0 && lex_.Peek().IsPunct("[")) {
        ExpectPunct("[");
        do {
          args.push_back(ParseType());
        } while (Accept(","));
        ExpectPunct("]");
      }
      if (args.size() != arity) {
        lex_.Fail(t.offset, "type " + t.text + " takes " + std::to_string(arity) + " type argument(s), got " +
                                std::to_string(args.size()));
      }
      return ADTTypeNode::make(t.text, std::move(args));
    }
    if (t.IsPunct("(")) {
      std::vector<Type> fields;
      bool comma = false;
      while (!lex_.Peek().IsPunct(")")) {
        fields.push_back(ParseType());
        comma = Accept(",");
        if (!comma) break;
      }
      ExpectPunct(")");
      if (fields.size() == 1 && !comma) return fields[0];
      return TupleTypeNode::make(std::move(fields));
    }
    if (t.IsIdent("fn")) {
      ExpectPunct("(");
      std::vector<Type> args;
      if (!Accept(")")) {
        do {
          args.push_back(ParseType());
        } while (Accept(","));
        ExpectPunct(")");
      }
      ExpectPunct("->");
      Type ret = ParseType();
      return FuncTypeNode::make(std::move(args), std::move(ret));
    }
    Fail(t, "expected a type (Tensor[(1, 3), float32], TensorArray[Tensor[...]], a tuple type, fn (...) -> ..., an "
            "ADT such as List[T], or _)");
  }

  DataType DType() {
    const Token t = lex_.Next();
    if (t.kind != TokenKind::kIdent) Fail(t, "expected a dtype such as float32");
    try {
      return DataType::Parse(t.text);
    } catch (const UserError& e) {
      lex_.Fail(t.offset, e.what());
    }
  }

  // '(' [dim {',' dim} [',']] ')', read raw: a symbolic dim is any text up to the next ',' or
  // ')' outside brackets.
  Shape ParseShape() {
    const Token open = lex_.Peek();
    if (!open.IsPunct("(")) Fail(open, "expected a shape '(d0, d1, ...)'");
    std::string_view text = lex_.text();
    const size_t end = lex_.end();
    size_t p = open.offset + 1;
    Shape shape;
    for (;;) {
      const size_t start = p;
      int depth = 0;
      while (p < end && text[p] != '\n' && !(depth == 0 && (text[p] == ',' || text[p] == ')'))) {
        if (text[p] == '(' || text[p] == '[') ++depth;
        if (text[p] == ')' || text[p] == ']') --depth;
        ++p;
      }
      if (p >= end || text[p] == '\n') lex_.Fail(open.offset, "unterminated shape: expected ')'");
      std::string_view item = text.substr(start, p - start);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      const bool close = text[p] == ')';
      ++p;
      if (item.empty()) {
        if (close) break;  // "()", or the trailing comma of "(4,)"
        lex_.Fail(start, "expected a dimension");
      }
      shape.push_back(DimOf(item, start));
      if (close) break;
    }
    lex_.Seek(p);
    return shape;
  }

  Dim DimOf(std::string_view item, size_t offset) const {
    const bool digits = item.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) {
      auto v = FromChars<int64_t>(item);
      if (!v) lex_.Fail(offset, "dimension " + std::string(item) + " is out of range");
      return Dim(*v);
    }
    if (item[0] == '-' || item[0] == '+' || (item[0] >= '0' && item[0] <= '9')) {
      lex_.Fail(offset, "expected a dimension >= 0 or a symbolic name, found '" + std::string(item) + "'");
    }
    return Dim::Symbolic(std::string(item));
  }

  text::Lexer lex_;
  bool type_check_;
  IRModule mod_;                                        // the types and functions read so far
  std::pair<std::string, std::vector<std::string>> defining_;  // the type being defined and its params
  Var let_function_;  // the var of the let whose value, a fn, is being read (recursive let)
  bool forward_globals_ = false;                        // the current def names a global not yet defined
  std::vector<std::pair<size_t, std::string>> global_uses_;  // every @name used, where
  bool has_metadata_ = false;
  std::vector<Constant> constants_;
  std::vector<std::unordered_map<std::string, Binding>> scopes_;
  int depth_ = 0;
};

}  // namespace

IRModule ParseModule(std::string_view text, const std::string& source) {
  return Parser(text, source, /*type_check=*/true).Module();
}

Expr ParseExpr(std::string_view text, const std::string& source, const std::vector<Var>& free_vars) {
  return Parser(text, source, /*type_check=*/false).Expression(free_vars);
}

}  // namespace tessera::graph
