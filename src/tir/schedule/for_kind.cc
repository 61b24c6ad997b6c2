// parallel, vectorize, unroll: change a loop's ForKind after checking it is legal.
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT

namespace {
/// Throws unless every block under the loop binds its reduction and scan iter vars without the loop var.
void CheckDataParallel(const LoopInfo& info, const char* prim, const char* why) {
  const VarNode* v = info.loop->loop_var.get_var();
  for (const BlockRealizeNode* r : BlocksUnder(info.loop->body)) {
    const BlockNode* b = r->block_node();
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (b->iter_vars[i].iter_type != IterVarType::kDataPar && UsesAnyVar(r->iter_values[i], {v})) {
        const char* kind = b->iter_vars[i].iter_type == IterVarType::kOrdered ? "scan" : "reduction";
        TESSERA_THROW(ScheduleError, prim, ": loop ", LoopName(info.loop), " is bound to ", kind, " iter var '",
                      b->iter_vars[i].var->name_hint, "' of block '", b->name_hint, "'; ", why);
      }
    }
  }
}

Stmt WithKind(const ForNode* f, ForKind kind) {
  return ForNode::make(f->loop_var, f->min, f->extent, kind, f->body, f->annotations);
}

bool HasLoopOfKind(const Stmt& s, ForKind kind, const ForNode** found) {
  struct Finder : StmtExprVisitor {
    ForKind k;
    const ForNode* hit = nullptr;
    void VisitExpr(const PrimExpr&) override {}
    void VisitStmt_(const ForNode* op) override {
      if (!hit && op->for_kind == k) hit = op;
      StmtExprVisitor::VisitStmt_(op);
    }
  } finder;
  finder.k = kind;
  finder.VisitStmt(s);
  *found = finder.hit;
  return finder.hit != nullptr;
}

void CheckNotAlreadyMarked(const ForNode* f, ForKind want, const char* prim) {
  if (f->for_kind != ForKind::kSerial && f->for_kind != want) {
    TESSERA_THROW(ScheduleError, prim, ": loop ", LoopName(f), " is already ", ForKindName(f->for_kind));
  }
}
}  // namespace

void Schedule::parallel(const LoopRV& loop) {
  LoopInfo info = ScheduleAccess::ResolveLoop(*this, loop, "parallel");
  const ForNode* f = info.loop;
  CheckNotAlreadyMarked(f, ForKind::kParallel, "parallel");
  CheckDataParallel(info, "parallel", "only loops over spatial iter vars can run in parallel (iterations would race on the reduction's output)");
  for (size_t i = 0; i + 1 < info.path.size(); ++i) {
    if (auto* outer = info.path[i].as<ForNode>(); outer && outer->for_kind == ForKind::kParallel) {
      TESSERA_THROW(ScheduleError, "parallel: loop ", LoopName(f), " is nested inside parallel loop ", LoopName(outer),
                    "; nested parallel loops are not supported");
    }
  }
  const ForNode* inner = nullptr;
  if (HasLoopOfKind(f->body, ForKind::kParallel, &inner)) {
    TESSERA_THROW(ScheduleError, "parallel: loop ", LoopName(f), " contains parallel loop ", LoopName(inner),
                  "; nested parallel loops are not supported");
  }
  ScheduleAccess::Commit(*this, ReplaceStmts(func_->body, {{f, WithKind(f, ForKind::kParallel)}}),
                         Instruction{"parallel", {RVRef{'l', loop.id}}, {}, {}});
}

void Schedule::vectorize(const LoopRV& loop) {
  LoopInfo info = ScheduleAccess::ResolveLoop(*this, loop, "vectorize");
  const ForNode* f = info.loop;
  CheckNotAlreadyMarked(f, ForKind::kVectorized, "vectorize");
  int64_t n;
  if (!ir::as_const_int(f->extent, &n)) {
    TESSERA_THROW(ScheduleError, "vectorize: loop ", LoopName(f),
                  " has a non-constant extent; vector lanes must be a compile-time constant (split it by a constant first)");
  }
  if (n < 1) TESSERA_THROW(ScheduleError, "vectorize: loop ", LoopName(f), " has extent ", n);
  if (const ForNode* inner = nullptr; HasLoopOfKind(f->body, ForKind::kSerial, &inner) ||
                                      HasLoopOfKind(f->body, ForKind::kParallel, &inner) ||
                                      HasLoopOfKind(f->body, ForKind::kUnrolled, &inner) ||
                                      HasLoopOfKind(f->body, ForKind::kVectorized, &inner)) {
    TESSERA_THROW(ScheduleError, "vectorize: loop ", LoopName(f), " contains loop ", LoopName(inner),
                  "; only innermost loops can be vectorized (reorder it inward first)");
  }
  CheckDataParallel(info, "vectorize", "only loops over spatial iter vars can be vectorized");
  ScheduleAccess::Commit(*this, ReplaceStmts(func_->body, {{f, WithKind(f, ForKind::kVectorized)}}),
                         Instruction{"vectorize", {RVRef{'l', loop.id}}, {}, {}});
}

void Schedule::unroll(const LoopRV& loop) {
  LoopInfo info = ScheduleAccess::ResolveLoop(*this, loop, "unroll");
  const ForNode* f = info.loop;
  CheckNotAlreadyMarked(f, ForKind::kUnrolled, "unroll");
  int64_t n;
  if (!ir::as_const_int(f->extent, &n)) {
    TESSERA_THROW(ScheduleError, "unroll: loop ", LoopName(f), " has a non-constant extent; only constant-extent loops can be unrolled");
  }
  ScheduleAccess::Commit(*this, ReplaceStmts(func_->body, {{f, WithKind(f, ForKind::kUnrolled)}}),
                         Instruction{"unroll", {RVRef{'l', loop.id}}, {}, {}});
}

}  // namespace tessera::tir
