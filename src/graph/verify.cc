// The graph IR verifier: see include/tessera/graph/verify.h.
#include "tessera/graph/verify.h"

#include <sstream>
#include <unordered_set>

#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph {
namespace {

class Verifier {
 public:
  Verifier(std::string fn_name, const IRModule& mod, const VerifyOptions& options)
      : fn_(std::move(fn_name)), mod_(mod), options_(options) {}

  void VerifyFunction(const FunctionNode* f, bool inside_primitive) {
    const bool primitive = f->attrs.GetInt("Primitive", 0) == 1;
    if (inside_primitive) Fail("a primitive function contains a nested function");
    for (const Var& p : f->params) {
      if (!p) {
        Fail("null function parameter");
        continue;
      }
      bound_.insert(p.get());
      CheckTyped(p.get(), "parameter %" + p->name_hint);
    }
    Visit(f->body, primitive);
  }

  std::vector<std::string> problems;

 private:
  void Fail(const std::string& msg) {
    if (problems.size() < 20) problems.push_back("@" + fn_ + ": " + msg);
  }

  void CheckTyped(const ExprNode* e, const std::string& what) {
    if (options_.require_types && !e->has_checked_type()) Fail(what + " has no checked type after InferType");
  }

  void Visit(const Expr& e, bool primitive) {
    if (!e) {
      Fail("null expression");
      return;
    }
    if (!visited_.insert(e.get()).second) return;
    switch (e->kind) {
      case ExprKind::kVar: {
        const auto* v = e->as<VarNode>();
        if (!bound_.count(v)) Fail("free variable %" + v->name_hint);
        CheckTyped(v, "variable %" + v->name_hint);
        return;
      }
      case ExprKind::kConstant:
        CheckTyped(e.get(), "a constant");
        return;
      case ExprKind::kOp:
        return;
      case ExprKind::kCall: {
        const auto* c = e->as<CallNode>();
        if (!c->op) {
          Fail("call of a null op");
          return;
        }
        if (const auto* op = c->op->as<OpNode>()) {
          const OpInfo* info = OpRegistry::Global().Find(op->name);
          if (!info) {
            Fail("call of the unregistered op " + op->name);
          } else if (info->num_inputs >= 0 && static_cast<int>(c->args.size()) != info->num_inputs) {
            Fail(op->name + " called with " + std::to_string(c->args.size()) + " arguments, registered with " +
                 std::to_string(info->num_inputs));
          }
        } else {
          if (primitive) Fail("a primitive function calls a non-op");
          if (const auto* ctor = c->op->as<ConstructorNode>();
              ctor && c->args.size() != ctor->def().fields.size()) {
            Fail("constructor " + ctor->name() + " called with " + std::to_string(c->args.size()) + " fields, defined with " +
                 std::to_string(ctor->def().fields.size()));
          }
          if (const auto* f = c->op->as<FunctionNode>()) {
            VerifyFunction(f, primitive);
            visited_.insert(c->op.get());
          } else {
            Visit(c->op, primitive);
          }
        }
        for (const auto& a : c->args) Visit(a, primitive);
        CheckTyped(e.get(), "a call of " + CalleeName(c));
        return;
      }
      case ExprKind::kTuple: {
        const auto* t = e->as<TupleNode>();
        for (const auto& f : t->fields) Visit(f, primitive);
        CheckTyped(e.get(), "a tuple");
        if (e->has_checked_type()) {
          const auto* tt = e->checked_type()->as<TupleTypeNode>();
          if (!tt || tt->fields.size() != t->fields.size())
            Fail("a tuple of " + std::to_string(t->fields.size()) + " fields has type " + e->checked_type()->str());
        }
        return;
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e->as<TupleGetItemNode>();
        Visit(g->tuple, primitive);
        if (!g->tuple) return;
        size_t arity = SIZE_MAX;
        if (const auto* t = g->tuple->as<TupleNode>()) arity = t->fields.size();
        else if (g->tuple->has_checked_type())
          if (const auto* tt = g->tuple->checked_type()->as<TupleTypeNode>()) arity = tt->fields.size();
        if (g->index < 0 || (arity != SIZE_MAX && static_cast<size_t>(g->index) >= arity))
          Fail("tuple access ." + std::to_string(g->index) + " of a tuple of " + std::to_string(arity) + " fields");
        CheckTyped(e.get(), "a tuple access");
        return;
      }
      case ExprKind::kLet: {
        const auto* l = e->as<LetNode>();
        if (primitive) Fail("a primitive function contains a let");
        // A let-bound function may call itself (a loop, Relay's recursive let): its var is bound
        // in its value too.
        if (l->value->as<FunctionNode>()) bound_.insert(l->var.get());
        Visit(l->value, primitive);
        bound_.insert(l->var.get());
        Visit(l->body, primitive);
        CheckTyped(e.get(), "let %" + l->var->name_hint);
        return;
      }
      case ExprKind::kIf: {
        const auto* i = e->as<IfNode>();
        if (primitive) Fail("a primitive function contains an if");
        Visit(i->cond, primitive);
        Visit(i->true_branch, primitive);
        Visit(i->false_branch, primitive);
        CheckTyped(e.get(), "an if");
        return;
      }
      case ExprKind::kFunction:
        VerifyFunction(e->as<FunctionNode>(), primitive);
        return;
      case ExprKind::kGlobalVar: {
        const std::string& name = e->as<GlobalVarNode>()->name;
        if (!mod_.Contains(name)) Fail("@" + name + " names no function of the module");
        if (primitive) Fail("a primitive function names the global @" + name);
        return;
      }
      case ExprKind::kConstructor: {
        const auto* c = e->as<ConstructorNode>();
        if (primitive) Fail("a primitive function uses the constructor " + c->name());
        if (mod_.FindTypeDef(c->type_data->name) != c->type_data)
          Fail("constructor " + c->name() + " of type " + c->type_data->name + ", which the module does not define");
        return;
      }
      case ExprKind::kMatch: {
        const auto* m = e->as<MatchNode>();
        if (primitive) Fail("a primitive function contains a match");
        Visit(m->data, primitive);
        for (const MatchClause& c : m->clauses) {
          std::unordered_set<const VarNode*> seen;
          for (const Var& v : c.pattern->BoundVars()) {
            if (!seen.insert(v.get()).second) Fail("pattern binds %" + v->name_hint + " twice");
            bound_.insert(v.get());
            CheckTyped(v.get(), "pattern variable %" + v->name_hint);
          }
          CheckPatternCtors(*c.pattern);
          Visit(c.rhs, primitive);
        }
        CheckTyped(e.get(), "a match");
        return;
      }
    }
  }

  void CheckPatternCtors(const ClausePatternNode& p) {
    if (p.kind == ClausePatternKind::kConstructor && mod_.FindTypeDef(p.ctor->type_data->name) != p.ctor->type_data)
      Fail("pattern " + p.ctor->name() + " of type " + p.ctor->type_data->name + ", which the module does not define");
    for (const auto& f : p.fields) CheckPatternCtors(*f);
  }

  static std::string CalleeName(const CallNode* c) {
    if (const auto* op = c->op->as<OpNode>()) return op->name;
    if (const auto* g = c->op->as<GlobalVarNode>()) return "@" + g->name;
    if (const auto* ctor = c->op->as<ConstructorNode>()) return ctor->name();
    return "a function";
  }

  std::string fn_;
  const IRModule& mod_;
  const VerifyOptions& options_;
  std::unordered_set<const ExprNode*> bound_;
  std::unordered_set<const ExprNode*> visited_;
};

}  // namespace

std::vector<std::string> VerifyModule(const IRModule& mod, const VerifyOptions& options) {
  std::vector<std::string> problems;
  for (const auto& [name, fn] : mod.functions()) {
    if (!fn) {
      problems.push_back("@" + name + ": null function");
      continue;
    }
    Verifier v(name, mod, options);
    v.VerifyFunction(fn.get(), false);
    problems.insert(problems.end(), v.problems.begin(), v.problems.end());
  }
  return problems;
}

void CheckModule(const IRModule& mod, const VerifyOptions& options, const std::string& where) {
  std::vector<std::string> problems = VerifyModule(mod, options);
  if (problems.empty()) return;
  std::ostringstream os;
  os << "IR verifier: the graph IR after " << where << " is malformed:";
  for (const auto& p : problems) os << "\n  " << p;
  throw InternalError(os.str());
}

void VerifierInstrument::RunAfterPass(const ir::PassInfo& info, const ir::IRView& ir) {
  const IRModule* mod = ir.as<IRModule>();
  if (!mod) return;
  VerifyOptions options;
  options.require_types = info.name == "InferType";
  CheckModule(*mod, options, "pass " + info.name);
}

}  // namespace tessera::graph
