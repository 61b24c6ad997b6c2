#include "tessera/graph/printer.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/support/error.h"
#include "text_format.h"

namespace tessera::graph {

namespace {

bool IsLeaf(const ExprNode* e) {
  return e->kind == ExprKind::kVar || e->kind == ExprKind::kConstant || e->kind == ExprKind::kOp ||
         e->kind == ExprKind::kGlobalVar || e->kind == ExprKind::kConstructor;
}

// The non-leaf nodes the scope whose result is `root` evaluates on every path: reachable from
// `root` without entering an If branch, a function body or a let in operand position. The let
// chain at the root (root, its body, that body's body...) is entered: its lets are lines of the scope.
std::unordered_set<const ExprNode*> ScopeNodes(const Expr& root) {
  std::unordered_set<const ExprNode*> tail_lets;
  for (const ExprNode* e = root.get(); e->kind == ExprKind::kLet; e = e->as<LetNode>()->body.get()) {
    tail_lets.insert(e);
  }
  std::unordered_set<const ExprNode*> seen;
  std::vector<const ExprNode*> stack;
  auto push = [&](const Expr& e) {
    if (!IsLeaf(e.get()) && seen.insert(e.get()).second) stack.push_back(e.get());
  };
  push(root);
  while (!stack.empty()) {
    const ExprNode* e = stack.back();
    stack.pop_back();
    if (auto* c = e->as<CallNode>()) {
      push(c->op);
      for (const Expr& a : c->args) push(a);
    } else if (auto* t = e->as<TupleNode>()) {
      for (const Expr& f : t->fields) push(f);
    } else if (auto* g = e->as<TupleGetItemNode>()) {
      push(g->tuple);
    } else if (auto* i = e->as<IfNode>()) {
      push(i->cond);
    } else if (auto* m = e->as<MatchNode>()) {
      push(m->data);  // each clause is a scope of its own
    } else if (auto* l = e->as<LetNode>(); l && tail_lets.count(e)) {
      push(l->value);
      push(l->body);
    }
  }
  return seen;
}

// `s` indented by two spaces, its embedded lines too.
std::string Indent(const std::string& s) {
  std::string out = "  ";
  for (char c : s) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

// One scope being printed: the nodes it binds when first printed, the names it bound, its lines.
struct Scope {
  std::unordered_set<const ExprNode*> owned;
  std::unordered_map<const ExprNode*, std::string> names;
  std::vector<std::string> lines;
};

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string FunctionDef(const std::string& name, const FunctionNode* f) { return "def @" + name + FunctionText(f); }

  // `e` at the top level: a function as `fn ...`, anything else as its lines and result, unindented.
  std::string Top(const Expr& e) {
    if (auto* f = e->as<FunctionNode>()) return "fn " + FunctionText(f);
    Scope s{ScopeNodes(e), {}, {}};
    scopes_.push_back(&s);
    std::string result = Result(e) + TypeComment(e);
    scopes_.pop_back();
    std::string out;
    for (const std::string& l : s.lines) out += l + "\n";
    return out + result;
  }

  // The `#[metadata]` section (printer.h), or "" when it is not asked for or empty.
  std::string Metadata() const {
    if (!options_.metadata || constants_.empty()) return "";
    std::string out = "#[metadata]\n";
    for (size_t i = 0; i < constants_.size(); ++i) {
      const runtime::NDArray& a = constants_[i]->data;
      out += "Constant[" + std::to_string(i) + "]: " + a.dtype().str() + " " + ShapeStr(MakeShape(a.shape()));
      if (a.NBytes() > 0) out += " " + text::HexEncode(a.raw_data(), a.NBytes());
      out += "\n";
    }
    return out;
  }

 private:
  static std::string TypeComment(const Expr& e) {
    return e->has_checked_type() ? " /* ty=" + e->checked_type()->str() + " */" : "";
  }

  // The name of `v` where it is defined (a parameter or a let): a fresh one when the same
  // variable was defined before in this print (a function printed twice), so names stay unique.
  std::string DefineVar(const VarNode* v) {
    if (!defined_vars_.insert(v).second) var_names_.erase(v);
    return VarName(v);
  }

  std::string VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    std::string base = text::LegalVarName(v->name_hint);
    std::string name = base;
    for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_.insert(name);
    return var_names_[v] = "%" + name;
  }

  std::string ConstantText(const ConstantNode* c) {
    auto it = constant_index_.find(c);
    if (it == constant_index_.end()) {
      if (c->data.ndim() == 0) {
        std::string literal = text::ScalarLiteral(c->data);
        if (!literal.empty()) return literal;
      }
      it = constant_index_.emplace(c, constants_.size()).first;
      constants_.push_back(c);
    }
    return "meta[Constant][" + std::to_string(it->second) + "] /* ty=" + c->tensor_type()->str() + " */";
  }

  std::string Leaf(const Expr& e) {
    if (auto* v = e->as<VarNode>()) return VarName(v);
    if (auto* o = e->as<OpNode>()) return o->name;
    if (auto* g = e->as<GlobalVarNode>()) return "@" + g->name;
    if (auto* c = e->as<ConstructorNode>()) return c->name();
    return ConstantText(e->as<ConstantNode>());
  }

  // The name `e` is bound to in a scope now open, or nullptr.
  const std::string* Lookup(const ExprNode* e) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = (*s)->names.find(e);
      if (it != (*s)->names.end()) return &it->second;
    }
    return nullptr;
  }

  // The index in scopes_ of the scope that binds `e`: the outermost that evaluates it on every
  // path, else the innermost.
  size_t OwnerIndex(const ExprNode* e) const {
    for (size_t i = 0; i < scopes_.size(); ++i)
      if (scopes_[i]->owned.count(e)) return i;
    return scopes_.size() - 1;
  }

  // The text of `e` as an operand: a leaf, or the %N it is bound to (binding it on first use,
  // in its owner scope: the scopes inside that one are closed while its definition is printed).
  std::string Operand(const Expr& e) {
    if (IsLeaf(e.get())) return Leaf(e);
    if (const std::string* name = Lookup(e.get())) return *name;
    const size_t owner = OwnerIndex(e.get());
    std::vector<Scope*> inner(scopes_.begin() + static_cast<std::ptrdiff_t>(owner) + 1, scopes_.end());
    scopes_.resize(owner + 1);
    std::string rhs = e->kind == ExprKind::kLet ? Block(e, /*write_root=*/true) : Define(e);
    std::string name = "%" + std::to_string(next_id_++);
    Scope* s = scopes_.back();
    s->lines.push_back(name + " = " + rhs + TypeComment(e) + ";");
    s->names[e.get()] = name;
    scopes_.insert(scopes_.end(), inner.begin(), inner.end());
    return name;
  }

  // The text of the current scope's result `e`: written out, unless an enclosing scope binds it.
  std::string Result(const Expr& e) {
    if (IsLeaf(e.get())) return Leaf(e);
    if (const std::string* name = Lookup(e.get())) return *name;
    if (OwnerIndex(e.get()) + 1 < scopes_.size()) return Operand(e);
    return Written(e);
  }

  // `e` written out in the current scope; a let becomes a line and its body the result.
  std::string Written(const Expr& e) {
    auto* l = e->as<LetNode>();
    if (!l) return Define(e);
    // A let-bound function is written in the let (`let %f = fn ...`), so that its body may name
    // %f (a recursive let, parser.h); any other value is an operand.
    const bool inline_fn = l->value->as<FunctionNode>() && !Lookup(l->value.get());
    std::string value = inline_fn ? Define(l->value) : Operand(l->value);
    std::string var = DefineVar(l->var.get());
    if (l->var->type_annotation) var += ": " + l->var->type_annotation->str();
    scopes_.back()->lines.push_back("let " + var + " = " + value + ";");
    return Result(l->body);
  }

  // "{\n  lines\n  result\n}": the scope whose result is `root`. With `write_root`, the root is
  // written out here even though an enclosing scope binds it (an operand let being defined).
  std::string Block(const Expr& root, bool write_root = false) {
    Scope s{ScopeNodes(root), {}, {}};
    scopes_.push_back(&s);
    std::string result = (write_root ? Written(root) : Result(root)) + TypeComment(root);
    scopes_.pop_back();
    std::string out = "{\n";
    for (const std::string& l : s.lines) out += Indent(l) + "\n";
    return out + Indent(result) + "\n}";
  }

  // "(%p: T, ...) -> R /* attrs: ... */ {...}": a function after its `def @name` or `fn `.
  std::string FunctionText(const FunctionNode* f) {
    std::string s = "(";
    for (size_t i = 0; i < f->params.size(); ++i) {
      s += (i ? ", " : "") + DefineVar(f->params[i].get()) + ": " + TypeStr(f->params[i]->type_annotation);
    }
    s += ")";
    Type ret = f->ret_type;
    if (!ret && f->body->has_checked_type()) ret = f->body->checked_type();
    if (ret) s += " -> " + ret->str();
    if (!f->attrs.empty()) s += " /* attrs: " + text::AttrsText(f->attrs) + " */";
    return s + " " + Block(f->body);
  }

  // A match clause's pattern: `_`, `%x` (with `: T` when annotated), `Cons(%h, _)`, `Nil`, `(%a, _)`.
  std::string PatternText(const ClausePatternNode& p) {
    auto fields = [&] {
      std::string out = "(";
      for (size_t i = 0; i < p.fields.size(); ++i) out += (i ? ", " : "") + PatternText(*p.fields[i]);
      return out + (p.kind == ClausePatternKind::kTuple && p.fields.size() == 1 ? ",)" : ")");
    };
    switch (p.kind) {
      case ClausePatternKind::kWildcard: return "_";
      case ClausePatternKind::kVar: {
        std::string s = DefineVar(p.var.get());
        if (p.var->type_annotation) s += ": " + p.var->type_annotation->str();
        return s;
      }
      case ClausePatternKind::kConstructor: return p.ctor->name() + (p.fields.empty() ? "" : fields());
      case ClausePatternKind::kTuple: return fields();
    }
    return "";
  }

  // The defining text of a call, tuple, tuple access, if, match or function.
  std::string Define(const Expr& e) {
    std::string s;
    if (auto* c = e->as<CallNode>()) {
      std::vector<std::string> args;
      for (const Expr& a : c->args) args.push_back(Operand(a));
      s = Operand(c->op) + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      if (!c->attrs.empty()) s += (args.empty() ? "" : ", ") + text::AttrsText(c->attrs);
      s += ")";
    } else if (auto* t = e->as<TupleNode>()) {
      std::vector<std::string> fields;
      for (const Expr& f : t->fields) fields.push_back(Operand(f));
      s = "(";
      for (size_t i = 0; i < fields.size(); ++i) s += (i ? ", " : "") + fields[i];
      s += fields.size() == 1 ? ",)" : ")";
    } else if (auto* g = e->as<TupleGetItemNode>()) {
      s = Operand(g->tuple) + "." + std::to_string(g->index);
    } else if (auto* i = e->as<IfNode>()) {
      std::string cond = Operand(i->cond);
      std::string then_block = Block(i->true_branch);
      s = "if (" + cond + ") " + then_block + " else " + Block(i->false_branch);
    } else if (auto* f = e->as<FunctionNode>()) {
      s = "fn " + FunctionText(f);
    } else if (auto* m = e->as<MatchNode>()) {
      s = "match (" + Operand(m->data) + ") {\n";
      for (const MatchClause& c : m->clauses) {
        const std::string pattern = PatternText(*c.pattern);  // defines its variables before the rhs
        s += Indent(pattern + " => " + Block(c.rhs)) + ",\n";
      }
      s += "}";
    } else {
      TESSERA_ICHECK(false, "printer: no definition for expression kind ", static_cast<int>(e->kind));
    }
    return s;
  }

  PrintOptions options_;
  std::vector<Scope*> scopes_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_set<const VarNode*> defined_vars_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<const ConstantNode*, size_t> constant_index_;
  std::vector<const ConstantNode*> constants_;
  int next_id_ = 0;
};

}  // namespace

std::string PrintModule(const IRModule& mod, const PrintOptions& options) {
  Printer p(options);
  std::string out;
  for (const auto& [name, data] : mod.type_defs()) {
    if (!out.empty()) out += "\n\n";
    out += data->str();
  }
  for (const auto& [name, f] : mod.functions()) {
    if (!out.empty()) out += "\n\n";
    out += p.FunctionDef(name, f.get());
  }
  out += "\n";
  std::string meta = p.Metadata();
  return meta.empty() ? out : out + "\n" + meta;
}

std::string PrintExpr(const Expr& e, const PrintOptions& options) {
  TESSERA_ICHECK(e != nullptr, "PrintExpr of a null expression");
  Printer p(options);
  std::string out = p.Top(e);
  std::string meta = p.Metadata();
  return meta.empty() ? out : out + "\n\n" + meta;
}

}  // namespace tessera::graph
