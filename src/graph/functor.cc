#include "tessera/graph/functor.h"

#include "tessera/support/error.h"

namespace tessera::graph {

void ExprVisitor::VisitExpr(const Expr& e) {
  TESSERA_ICHECK(e != nullptr, "visiting a null expression");
  if (!visited_.insert(e.get()).second) return;
  switch (e->kind) {
    case ExprKind::kVar: return VisitVar_(e->as<VarNode>());
    case ExprKind::kConstant: return VisitConstant_(e->as<ConstantNode>());
    case ExprKind::kOp: return VisitOp_(e->as<OpNode>());
    case ExprKind::kCall: return VisitCall_(e->as<CallNode>());
    case ExprKind::kTuple: return VisitTuple_(e->as<TupleNode>());
    case ExprKind::kTupleGetItem: return VisitTupleGetItem_(e->as<TupleGetItemNode>());
    case ExprKind::kLet: return VisitLet_(e->as<LetNode>());
    case ExprKind::kIf: return VisitIf_(e->as<IfNode>());
    case ExprKind::kFunction: return VisitFunction_(e->as<FunctionNode>());
    case ExprKind::kGlobalVar: return VisitGlobalVar_(e->as<GlobalVarNode>());
    case ExprKind::kConstructor: return VisitConstructor_(e->as<ConstructorNode>());
    case ExprKind::kMatch: return VisitMatch_(e->as<MatchNode>());
  }
}

void ExprVisitor::VisitMatch_(const MatchNode* op) {
  VisitExpr(op->data);
  for (const MatchClause& c : op->clauses) {
    for (const Var& v : c.pattern->BoundVars()) VisitExpr(v);
    VisitExpr(c.rhs);
  }
}

void ExprVisitor::VisitCall_(const CallNode* op) {
  VisitExpr(op->op);
  for (const Expr& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitTuple_(const TupleNode* op) {
  for (const Expr& f : op->fields) VisitExpr(f);
}
void ExprVisitor::VisitTupleGetItem_(const TupleGetItemNode* op) { VisitExpr(op->tuple); }
void ExprVisitor::VisitLet_(const LetNode* op) {
  VisitExpr(op->var);
  VisitExpr(op->value);
  VisitExpr(op->body);
}
void ExprVisitor::VisitIf_(const IfNode* op) {
  VisitExpr(op->cond);
  VisitExpr(op->true_branch);
  VisitExpr(op->false_branch);
}
bool IsExternalFunction(const FunctionNode& fn) { return fn.attrs.Has("Compiler"); }

void ExprVisitor::VisitFunction_(const FunctionNode* op) {
  if (IsExternalFunction(*op)) return;  // opaque (functor.h)
  for (const Var& p : op->params) VisitExpr(p);
  VisitExpr(op->body);
}

Expr ExprMutator::Mutate(const Expr& e) {
  TESSERA_ICHECK(e != nullptr, "mutating a null expression");
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  Expr out;
  switch (e->kind) {
    case ExprKind::kVar: out = MutateVar_(Downcast<VarNode>(e)); break;
    case ExprKind::kConstant: out = MutateConstant_(Downcast<ConstantNode>(e)); break;
    case ExprKind::kOp: out = MutateOp_(Downcast<OpNode>(e)); break;
    case ExprKind::kCall: out = MutateCall_(Downcast<CallNode>(e)); break;
    case ExprKind::kTuple: out = MutateTuple_(Downcast<TupleNode>(e)); break;
    case ExprKind::kTupleGetItem: out = MutateTupleGetItem_(Downcast<TupleGetItemNode>(e)); break;
    case ExprKind::kLet: out = MutateLet_(Downcast<LetNode>(e)); break;
    case ExprKind::kIf: out = MutateIf_(Downcast<IfNode>(e)); break;
    case ExprKind::kFunction: out = MutateFunction_(Downcast<FunctionNode>(e)); break;
    case ExprKind::kGlobalVar: out = MutateGlobalVar_(Downcast<GlobalVarNode>(e)); break;
    case ExprKind::kConstructor: out = MutateConstructor_(Downcast<ConstructorNode>(e)); break;
    case ExprKind::kMatch: out = MutateMatch_(Downcast<MatchNode>(e)); break;
  }
  memo_[e.get()] = out;
  return out;
}

Expr ExprMutator::MutateCall_(const Call& op) {
  Expr callee = Mutate(op->op);
  bool changed = callee != op->op;
  std::vector<Expr> args;
  args.reserve(op->args.size());
  for (const Expr& a : op->args) {
    args.push_back(Mutate(a));
    changed |= args.back() != a;
  }
  if (!changed) return op;
  return CallNode::make(callee, std::move(args), op->attrs);
}

Expr ExprMutator::MutateTuple_(const Tuple& op) {
  bool changed = false;
  std::vector<Expr> fields;
  for (const Expr& f : op->fields) {
    fields.push_back(Mutate(f));
    changed |= fields.back() != f;
  }
  return changed ? TupleNode::make(std::move(fields)) : op;
}

Expr ExprMutator::MutateTupleGetItem_(const TupleGetItem& op) {
  Expr t = Mutate(op->tuple);
  return t == op->tuple ? op : TupleGetItemNode::make(t, op->index);
}

Expr ExprMutator::MutateLet_(const Let& op) {
  Expr var = Mutate(op->var);
  Expr value = Mutate(op->value);
  Expr body = Mutate(op->body);
  if (var == op->var && value == op->value && body == op->body) return op;
  Var v = Downcast<VarNode>(var);
  TESSERA_ICHECK(v != nullptr, "a Let variable was mutated into a non-Var");
  return LetNode::make(v, value, body);
}

Expr ExprMutator::MutateIf_(const If& op) {
  Expr c = Mutate(op->cond), t = Mutate(op->true_branch), f = Mutate(op->false_branch);
  if (c == op->cond && t == op->true_branch && f == op->false_branch) return op;
  return IfNode::make(c, t, f);
}

Expr ExprMutator::MutateFunction_(const Function& op) {
  if (IsExternalFunction(*op)) return op;  // opaque (functor.h)
  bool changed = false;
  std::vector<Var> params;
  for (const Var& p : op->params) {
    Var np = Downcast<VarNode>(Mutate(p));
    TESSERA_ICHECK(np != nullptr, "a Function parameter was mutated into a non-Var");
    changed |= np != p;
    params.push_back(np);
  }
  Expr body = Mutate(op->body);
  changed |= body != op->body;
  if (!changed) return op;
  // The return type may change with the body: InferType recomputes it.
  return FunctionNode::make(std::move(params), body, nullptr, op->attrs);
}

namespace {
/// `p` with its variables mutated by `mutate`; `changed` is set when one is replaced.
ClausePattern MutatePattern(const ClausePattern& p, const std::function<Expr(const Expr&)>& mutate, bool* changed) {
  switch (p->kind) {
    case ClausePatternKind::kWildcard: return p;
    case ClausePatternKind::kVar: {
      Var v = Downcast<VarNode>(mutate(p->var));
      TESSERA_ICHECK(v != nullptr, "a pattern variable was mutated into a non-Var");
      if (v == p->var) return p;
      *changed = true;
      return ClausePatternNode::Bind(v);
    }
    case ClausePatternKind::kConstructor:
    case ClausePatternKind::kTuple: {
      bool inner = false;
      std::vector<ClausePattern> fields;
      for (const auto& f : p->fields) fields.push_back(MutatePattern(f, mutate, &inner));
      if (!inner) return p;
      *changed = true;
      return p->kind == ClausePatternKind::kTuple ? ClausePatternNode::Tuple(std::move(fields))
                                            : ClausePatternNode::Ctor(p->ctor, std::move(fields));
    }
  }
  return p;
}
}  // namespace

Expr ExprMutator::MutateMatch_(const Match& op) {
  Expr data = Mutate(op->data);
  bool changed = data != op->data;
  std::vector<MatchClause> clauses;
  for (const MatchClause& c : op->clauses) {
    ClausePattern p = MutatePattern(c.pattern, [this](const Expr& e) { return Mutate(e); }, &changed);
    Expr rhs = Mutate(c.rhs);
    changed |= rhs != c.rhs;
    clauses.push_back({p, rhs});
  }
  return changed ? MatchNode::make(data, std::move(clauses)) : op;
}

namespace {
class PostOrderVisitor : public ExprVisitor {
 public:
  explicit PostOrderVisitor(const std::function<void(const Expr&)>& f) : f_(f) {}
  void VisitExpr(const Expr& e) override {
    if (seen_.count(e.get())) return;
    ExprVisitor::VisitExpr(e);
    seen_.insert(e.get());
    f_(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
  std::unordered_set<const ExprNode*> seen_;
};
}  // namespace

void PostOrderVisit(const Expr& e, const std::function<void(const Expr&)>& fvisit) {
  PostOrderVisitor v(fvisit);
  v.VisitExpr(e);
}

}  // namespace tessera::graph
