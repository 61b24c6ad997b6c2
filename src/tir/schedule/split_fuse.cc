// split and fuse (TensorIR §3.3 loop transformations).
#include <algorithm>
#include <numeric>
#include <sstream>

#include "tessera/tir/printer.h"
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::as_const_int;
using ir::make_const;

namespace {
std::string JoinInts(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

/// Simplifies the bindings, predicates and loop bounds of everything under s after a substitution.
class BindingSimplifier : public StmtExprMutator {
 public:
  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Stmt body = VisitStmt(op->body);
    return ForNode::make(op->loop_var, Simplify(op->min), Simplify(op->extent), op->for_kind, body,
                         op->annotations);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op, const Stmt& s) override {
    std::vector<PrimExpr> vals;
    for (const auto& v : op->iter_values) vals.push_back(Simplify(v));
    std::vector<PrimExpr> preds;
    for (const auto& p : SplitConjuncts(op->predicate)) preds.push_back(Simplify(p));
    return BlockRealizeNode::make(std::move(vals), Conjoin(preds), op->block);
  }
};

/// Adds `cond` to the predicate of every block realize under s.
class PredicateAdder : public StmtExprMutator {
 public:
  explicit PredicateAdder(PrimExpr cond) : cond_(std::move(cond)) {}
  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

 protected:
  Stmt VisitStmt_(const BlockRealizeNode* op, const Stmt& s) override {
    auto preds = SplitConjuncts(op->predicate);
    preds.push_back(cond_);
    return BlockRealizeNode::make(op->iter_values, Conjoin(preds), op->block);
  }

 private:
  PrimExpr cond_;
};
}  // namespace

Stmt sched::SimplifyBindings(const Stmt& s) { return BindingSimplifier().VisitStmt(s); }

// ------------------------------------------------------------------ split
std::vector<LoopRV> Schedule::split(const LoopRV& loop, const std::vector<int64_t>& factors) {
  LoopInfo info = ScheduleAccess::ResolveLoop(*this, loop, "split");
  const ForNode* f = info.loop;
  const std::string name = LoopName(f);
  int64_t n = 0;
  const bool symbolic = !as_const_int(f->extent, &n);
  if (f->for_kind != ForKind::kSerial) {
    TESSERA_THROW(ScheduleError, "split: loop ", name, " is ", ForKindName(f->for_kind),
                  "; split loops before marking them parallel / vectorized / unrolled");
  }
  if (factors.size() < 2) {
    TESSERA_THROW(ScheduleError, "split: needs at least 2 factors, got ", factors.size(), " (", JoinInts(factors), ")");
  }
  int inferred = -1;
  int64_t prod = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (factors[i] == -1) {
      if (inferred >= 0) {
        TESSERA_THROW(ScheduleError, "split: at most one factor may be -1 (inferred), got ", JoinInts(factors));
      }
      inferred = static_cast<int>(i);
    } else if (factors[i] <= 0) {
      TESSERA_THROW(ScheduleError, "split: factor ", factors[i], " at position ", i, " of ", JoinInts(factors),
                    " is not positive; use -1 for the one factor to infer");
    } else {
      prod *= factors[i];
    }
  }
  DataType t = f->loop_var.dtype();
  // The extent of each new loop: the factors, the inferred one ceil(extent / product of the
  // others), an expression when the extent is symbolic (dynamic shapes).
  std::vector<PrimExpr> extents;
  bool guard = false;
  if (symbolic) {
    if (inferred < 0) {
      TESSERA_THROW(ScheduleError, "split: loop ", name, " has the symbolic extent ", AsText(f->extent),
                    "; split it with one inferred factor (-1), got ", JoinInts(factors));
    }
    // A tail unless the extent is provably a multiple of prod (a row count the compute padded
    // to a multiple of the tile, floordiv(n + p - 1, p) * p).
    const bool exact = prod == 1 || ir::is_zero(Simplify(ir::floormod(f->extent, make_const(t, prod))));
    for (size_t i = 0; i < factors.size(); ++i) {
      PrimExpr e = exact ? f->extent : f->extent + make_const(t, prod - 1);
      extents.push_back(static_cast<int>(i) == inferred ? Simplify(ir::floordiv(e, make_const(t, prod)))
                                                        : make_const(t, factors[i]));
    }
    guard = !exact;
  } else {
    std::vector<int64_t> fs = factors;
    if (inferred >= 0) fs[inferred] = (n + prod - 1) / prod;
    const int64_t total = std::accumulate(fs.begin(), fs.end(), int64_t{1}, std::multiplies<>());
    if (total < n) {
      TESSERA_THROW(ScheduleError, "split: factors ", JoinInts(fs), " cover ", total, " iterations but loop ", name,
                    " has extent ", n);
    }
    for (int64_t x : fs) extents.push_back(make_const(t, x));
    guard = total > n;
  }
  std::vector<Var> vars;
  PrimExpr fused;
  for (size_t i = 0; i < extents.size(); ++i) {
    vars.emplace_back(name + "_" + std::to_string(i), t);
    fused = fused.defined() ? fused * extents[i] + vars.back() : PrimExpr(vars.back());
  }
  PrimExpr value = Simplify(f->min + fused);
  Stmt body = SimplifyBindings(Substitute(f->body, {{f->loop_var.get_var(), value}}));
  if (guard) body = PredicateAdder(Simplify(fused) < f->extent).VisitStmt(body);
  for (int i = static_cast<int>(extents.size()) - 1; i >= 0; --i) {
    body = ForNode::make(vars[i], make_const(t, 0), extents[i], ForKind::kSerial, body,
                         i == 0 ? f->annotations : std::map<std::string, PrimExpr>{});
  }
  Stmt new_body = ReplaceStmts(func_->body, {{f, body}});
  ScheduleAccess::RemoveLoop(*this, f->loop_var, "split");
  Instruction inst{"split", {RVRef{'l', loop.id}}, {{"factors", TraceAttr(factors)}}, {}};
  std::vector<LoopRV> out;
  for (const auto& v : vars) {
    out.push_back(NewLoopRV(v));
    inst.outputs.push_back(RVRef{'l', out.back().id});
  }
  ScheduleAccess::Commit(*this, new_body, std::move(inst));
  return out;
}

// ------------------------------------------------------------------ fuse
LoopRV Schedule::fuse(const std::vector<LoopRV>& loops) {
  if (loops.size() < 2) TESSERA_THROW(ScheduleError, "fuse: needs at least 2 loops, got ", loops.size());
  std::vector<LoopInfo> infos;
  for (const auto& l : loops) infos.push_back(ScheduleAccess::ResolveLoop(*this, l, "fuse"));
  std::set<const VarNode*> outer;
  std::vector<PrimExpr> extents;
  for (size_t i = 0; i < infos.size(); ++i) {
    const ForNode* f = infos[i].loop;
    for (size_t j = 0; j < i; ++j) {
      if (infos[j].loop == f) TESSERA_THROW(ScheduleError, "fuse: loop ", LoopName(f), " appears twice");
    }
    if (i > 0 && infos[i - 1].loop->body.get() != f) {
      TESSERA_THROW(ScheduleError, "fuse: loop ", LoopName(f), " is not directly nested in loop ",
                    LoopName(infos[i - 1].loop), " (the body of ", LoopName(infos[i - 1].loop),
                    " must be exactly loop ", LoopName(f), "); fuse needs a perfectly nested chain, outermost first");
    }
    if (f->for_kind != ForKind::kSerial) {
      TESSERA_THROW(ScheduleError, "fuse: loop ", LoopName(f), " is ", ForKindName(f->for_kind),
                    "; only serial loops can be fused");
    }
    if (UsesAnyVar(f->min, outer) || UsesAnyVar(f->extent, outer)) {
      TESSERA_THROW(ScheduleError, "fuse: the start of loop ", LoopName(f),
                    " depends on an outer loop being fused; the fused iteration space is not rectangular");
    }
    if (infos[0].loop->loop_var.dtype() != f->loop_var.dtype()) {
      TESSERA_THROW(ScheduleError, "fuse: loops ", LoopName(infos[0].loop), " and ", LoopName(f),
                    " have different index types");
    }
    outer.insert(f->loop_var.get_var());
    extents.push_back(f->extent);  // symbolic extents (dynamic shapes) fuse too
  }
  PrimExpr total = extents[0];
  for (size_t i = 1; i < extents.size(); ++i) total = total * extents[i];
  DataType t = infos[0].loop->loop_var.dtype();
  std::string name;
  for (auto& in : infos) name += LoopName(in.loop) + "_";
  Var fused(name + "fused", t);
  std::map<const VarNode*, PrimExpr> vmap;
  PrimExpr inner = make_const(t, 1);
  for (int i = static_cast<int>(infos.size()) - 1; i >= 0; --i) {
    const ForNode* f = infos[i].loop;
    PrimExpr v = ir::is_one(inner) ? PrimExpr(fused) : ir::floordiv(fused, inner);
    if (i > 0) v = ir::floormod(v, extents[i]);
    vmap[f->loop_var.get_var()] = Simplify(f->min + v);
    inner = Simplify(inner * extents[i]);
  }
  Stmt body = SimplifyBindings(Substitute(infos.back().loop->body, vmap));
  Stmt nf = ForNode::make(fused, make_const(t, 0), Simplify(total), ForKind::kSerial, body,
                          infos[0].loop->annotations);
  Stmt new_body = ReplaceStmts(func_->body, {{infos[0].loop, nf}});
  Instruction inst{"fuse", {}, {}, {}};
  for (size_t i = 0; i < infos.size(); ++i) {
    ScheduleAccess::RemoveLoop(*this, infos[i].loop->loop_var, "fuse");
    inst.inputs.push_back(RVRef{'l', loops[i].id});
  }
  LoopRV out = NewLoopRV(fused);
  inst.outputs.push_back(RVRef{'l', out.id});
  ScheduleAccess::Commit(*this, new_body, std::move(inst));
  return out;
}

// ------------------------------------------------------------------ reorder
void Schedule::reorder(const std::vector<LoopRV>& loops) {
  if (loops.empty()) TESSERA_THROW(ScheduleError, "reorder: needs at least one loop");
  std::vector<LoopInfo> infos;
  for (const auto& l : loops) infos.push_back(ScheduleAccess::ResolveLoop(*this, l, "reorder"));
  for (size_t i = 0; i < infos.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (infos[i].loop == infos[j].loop) TESSERA_THROW(ScheduleError, "reorder: loop ", LoopName(infos[i].loop), " appears twice");
    }
  }
  // Sort by depth; each must be an ancestor of the next.
  std::vector<LoopInfo> by_depth = infos;
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [](const LoopInfo& a, const LoopInfo& b) { return a.path.size() < b.path.size(); });
  for (size_t i = 1; i < by_depth.size(); ++i) {
    const auto& p = by_depth[i].path;
    bool anc = std::any_of(p.begin(), p.end(), [&](const Stmt& s) { return s.get() == by_depth[i - 1].loop; });
    if (!anc) {
      TESSERA_THROW(ScheduleError, "reorder: loops ", LoopName(by_depth[i - 1].loop), " and ", LoopName(by_depth[i].loop),
                    " are not in the same loop nest");
    }
  }
  // The chain from the outermost to the innermost listed loop must be perfectly nested.
  std::vector<const ForNode*> chain{by_depth.front().loop};
  while (chain.back() != by_depth.back().loop) {
    const ForNode* next = chain.back()->body.as<ForNode>();
    if (!next) {
      TESSERA_THROW(ScheduleError, "reorder: loops ", LoopName(by_depth.front().loop), " and ",
                    LoopName(by_depth.back().loop), " are not perfectly nested: the body of loop ",
                    LoopName(chain.back()), " is not a single loop");
    }
    chain.push_back(next);
  }
  std::vector<const ForNode*> order = chain;
  size_t k = 0;
  for (auto& slot : order) {
    bool listed = std::any_of(infos.begin(), infos.end(), [&](const LoopInfo& in) { return in.loop == slot; });
    if (listed) slot = infos[k++].loop;
  }
  std::set<const VarNode*> later;
  for (auto it = order.rbegin(); it != order.rend(); ++it) later.insert((*it)->loop_var.get_var());
  for (const ForNode* f : order) {
    later.erase(f->loop_var.get_var());
    if (UsesAnyVar(f->min, later) || UsesAnyVar(f->extent, later)) {
      TESSERA_THROW(ScheduleError, "reorder: the range of loop ", LoopName(f),
                    " depends on a loop that would move inside it");
    }
  }
  Stmt body = chain.back()->body;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ForNode* f = *it;
    body = ForNode::make(f->loop_var, f->min, f->extent, f->for_kind, body, f->annotations);
  }
  Stmt new_body = ReplaceStmts(func_->body, {{chain.front(), body}});
  Instruction inst{"reorder", {}, {}, {}};
  for (const auto& l : loops) inst.inputs.push_back(RVRef{'l', l.id});
  ScheduleAccess::Commit(*this, new_body, std::move(inst));
}

}  // namespace tessera::tir
