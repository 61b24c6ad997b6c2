#include "tessera/graph/printer.h"

#include <charconv>
#include <sstream>
#include <unordered_map>

#include "tessera/support/error.h"

namespace tessera::graph {

namespace {

std::string ScalarConstantStr(const runtime::NDArray& a) {
  DataType t = a.dtype();
  char buf[64];
  auto fmt_double = [&](double d) { return std::string(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr); };
  if (t == DataType::Float(32)) return fmt_double(*a.data<float>()) + "f";
  if (t == DataType::Float(64)) return fmt_double(*a.data<double>()) + "f64";
  if (t == DataType::Int(64)) return std::to_string(*a.data<int64_t>()) + "i64";
  if (t == DataType::Int(32)) return std::to_string(*a.data<int32_t>());
  if (t.is_bool()) return *a.data<bool>() ? "True" : "False";
  return "";
}

class Printer {
 public:
  std::string PrintFunctionDef(const std::string& name, const FunctionNode* f) {
    std::ostringstream os;
    os << "def @" << name;
    PrintFunctionRest(os, f, 0);
    return os.str();
  }

  std::string PrintTop(const Expr& e) {
    if (auto* f = e->as<FunctionNode>()) {
      std::ostringstream os;
      os << "fn ";
      PrintFunctionRest(os, f, 0);
      return os.str();
    }
    std::vector<std::string> lines;
    std::swap(lines, lines_);
    std::string result = PrintResult(e);
    std::swap(lines, lines_);
    std::ostringstream os;
    for (const std::string& l : lines) os << l << "\n";
    os << result << TypeComment(e);
    return os.str();
  }

 private:
  static std::string TypeComment(const Expr& e) {
    return e->has_checked_type() ? " /* ty=" + e->checked_type()->str() + " */" : "";
  }

  std::string VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    std::string base = v->name_hint.empty() ? "v" : v->name_hint;
    std::string name = base;
    for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_[name] = true;
    return var_names_[v] = "%" + name;
  }

  void PrintFunctionRest(std::ostringstream& os, const FunctionNode* f, int indent) {
    os << "(";
    for (size_t i = 0; i < f->params.size(); ++i) {
      os << (i ? ", " : "") << VarName(f->params[i].get()) << ": " << TypeStr(f->params[i]->type_annotation);
    }
    os << ")";
    Type ret = f->ret_type;
    if (!ret && f->body->has_checked_type()) ret = f->body->checked_type();
    if (ret) os << " -> " << ret->str();
    if (!f->attrs.empty()) os << " /* attrs: " << f->attrs.str() << " */";
    os << " {\n";
    // A function body is its own scope: its bindings do not leak to the enclosing one.
    auto saved_memo = memo_;
    std::vector<std::string> saved_lines;
    std::swap(saved_lines, lines_);
    std::string result = PrintResult(f->body);
    std::string pad(indent + 2, ' ');
    for (const std::string& l : lines_) os << pad << l << "\n";
    os << pad << result << TypeComment(f->body) << "\n" << std::string(indent, ' ') << "}";
    std::swap(saved_lines, lines_);
    memo_ = std::move(saved_memo);
  }

  // The text of a scope's result: like Print, but a call/tuple/... is written out, not bound.
  std::string PrintResult(const Expr& e) {
    if (memo_.count(e.get())) return memo_[e.get()];
    if (auto* l = e->as<LetNode>()) {
      std::string value = Print(l->value);
      lines_.push_back("let " + VarName(l->var.get()) + " = " + value + ";");
      return PrintResult(l->body);
    }
    switch (e->kind) {
      case ExprKind::kCall:
      case ExprKind::kTuple:
      case ExprKind::kTupleGetItem:
      case ExprKind::kIf:
      case ExprKind::kFunction: return Define(e);
      default: return Print(e);
    }
  }

  // The text of `e` as an operand: a %name, a literal or meta reference.
  std::string Print(const Expr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    std::string s;
    switch (e->kind) {
      case ExprKind::kVar: s = VarName(e->as<VarNode>()); break;
      case ExprKind::kOp: s = e->as<OpNode>()->name; break;
      case ExprKind::kConstant: {
        const runtime::NDArray& a = e->as<ConstantNode>()->data;
        s = a.ndim() == 0 ? ScalarConstantStr(a) : "";
        if (s.empty()) {
          s = "meta[Constant][" + std::to_string(num_constants_++) + "] /* ty=" +
              e->as<ConstantNode>()->tensor_type()->str() + " */";
        }
        break;
      }
      case ExprKind::kLet: {
        auto* l = e->as<LetNode>();
        std::string value = Print(l->value);
        lines_.push_back("let " + VarName(l->var.get()) + " = " + value + ";");
        s = Print(l->body);
        break;
      }
      default: s = Bind(e, Define(e)); break;
    }
    memo_[e.get()] = s;
    return s;
  }

  std::string Bind(const Expr& e, const std::string& rhs) {
    std::string name = "%" + std::to_string(next_id_++);
    lines_.push_back(name + " = " + rhs + TypeComment(e) + ";");
    return name;
  }

  // The defining text of a call, tuple, tuple access, if or nested function.
  std::string Define(const Expr& e) {
    std::ostringstream os;
    if (auto* c = e->as<CallNode>()) {
      std::vector<std::string> args;
      for (const Expr& a : c->args) args.push_back(Print(a));
      os << Print(c->op) << "(";
      for (size_t i = 0; i < args.size(); ++i) os << (i ? ", " : "") << args[i];
      if (!c->attrs.empty()) os << (args.empty() ? "" : ", ") << c->attrs.str();
      os << ")";
    } else if (auto* t = e->as<TupleNode>()) {
      std::vector<std::string> fields;
      for (const Expr& f : t->fields) fields.push_back(Print(f));
      os << "(";
      for (size_t i = 0; i < fields.size(); ++i) os << (i ? ", " : "") << fields[i];
      if (fields.size() == 1) os << ",";
      os << ")";
    } else if (auto* g = e->as<TupleGetItemNode>()) {
      os << Print(g->tuple) << "." << g->index;
    } else if (auto* i = e->as<IfNode>()) {
      os << "if (" << Print(i->cond) << ") { " << Print(i->true_branch) << " } else { " << Print(i->false_branch)
         << " }";
    } else if (auto* f = e->as<FunctionNode>()) {
      os << "fn ";
      PrintFunctionRest(os, f, 2);
    }
    return os.str();
  }

  std::unordered_map<const ExprNode*, std::string> memo_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_map<std::string, bool> used_names_;
  std::vector<std::string> lines_;
  int next_id_ = 0;
  int num_constants_ = 0;
};

}  // namespace

std::string PrintModule(const IRModule& mod) {
  Printer p;
  std::string out;
  for (const auto& [name, f] : mod.functions()) {
    if (!out.empty()) out += "\n\n";
    out += p.PrintFunctionDef(name, f.get());
  }
  return out + "\n";
}

std::string PrintExpr(const Expr& e) {
  TESSERA_ICHECK(e != nullptr, "PrintExpr of a null expression");
  return Printer().PrintTop(e);
}

}  // namespace tessera::graph
