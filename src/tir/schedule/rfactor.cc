// rfactor (TensorIR §3.3; TVM's Schedule.rfactor): factor a reduction over one of its loops
// into a partial reduction that keeps that loop as a data-parallel axis of a new buffer,
// and a write-back block that reduces the partial results.
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::ExprKind;

namespace {

/// The reduction `out[idx] = combine(out[idx], rhs)` of a block: the combiner's kind
/// (add, mul, min, max) and its right-hand side.
struct Reducer {
  const BufferStoreNode* store = nullptr;
  ExprKind kind = ExprKind::kAdd;
  PrimExpr rhs;
};

Reducer MatchReducer(const char* prim, const BlockNode* b) {
  const auto* st = b->body.as<BufferStoreNode>();
  const auto* init = b->init.defined() ? b->init.as<BufferStoreNode>() : nullptr;
  if (!st || !init || !init->buffer.same_as(st->buffer)) {
    TESSERA_THROW(ScheduleError, prim, ": block '", b->name_hint,
                  "' is not a reduction out[i] = combine(out[i], x) with an init storing out[i]");
  }
  Reducer r;
  r.store = st;
  PrimExpr lhs;
  auto take = [&](const auto* n) {
    if (!n) return false;
    lhs = n->a;
    r.rhs = n->b;
    r.kind = n->kKind;
    return true;
  };
  if (!take(st->value.as<ir::AddNode>()) && !take(st->value.as<ir::MulNode>()) &&
      !take(st->value.as<ir::MinNode>()) && !take(st->value.as<ir::MaxNode>())) {
    TESSERA_THROW(ScheduleError, prim, ": block '", b->name_hint,
                  "' does not combine with +, *, min or max (the commutative reducers rfactor supports)");
  }
  const auto* cur = lhs.as<BufferLoadNode>();
  bool same = cur && cur->buffer.same_as(st->buffer) && cur->indices.size() == st->indices.size();
  for (size_t d = 0; same && d < st->indices.size(); ++d) same = ExprDeepEqual(cur->indices[d], st->indices[d]);
  if (!same) {
    TESSERA_THROW(ScheduleError, prim, ": block '", b->name_hint,
                  "' does not read its own output at the stored index as the combiner's first operand");
  }
  struct ReadsOut : public StmtExprVisitor {
    const BufferNode* out;
    bool found = false;
    void VisitExpr_(const BufferLoadNode* op) override {
      found |= op->buffer.get() == out;
      StmtExprVisitor::VisitExpr_(op);
    }
  } reads;
  reads.out = st->buffer.get();
  reads.VisitExpr(r.rhs);
  if (reads.found) {
    TESSERA_THROW(ScheduleError, prim, ": block '", b->name_hint, "' reads its output outside the combiner");
  }
  return r;
}

PrimExpr Combine(ExprKind kind, PrimExpr a, PrimExpr b) {
  switch (kind) {
    case ExprKind::kMul: return ir::MulNode::make(std::move(a), std::move(b));
    case ExprKind::kMin: return ir::MinNode::make(std::move(a), std::move(b));
    case ExprKind::kMax: return ir::MaxNode::make(std::move(a), std::move(b));
    default: return ir::AddNode::make(std::move(a), std::move(b));
  }
}

std::vector<Range> PointRegion(const std::vector<PrimExpr>& idx) {
  std::vector<Range> r;
  for (const auto& x : idx) r.emplace_back(x, ir::make_const(x.dtype(), 1));
  return r;
}

/// A block with the given iter vars, `out[idx] = combine(out[idx], rhs)` and `out[idx] = init`,
/// with the annotations of `like` and, when `allocs`, its alloc_buffers.
Stmt ReductionBlock(const std::string& name, std::vector<IterVar> ivs, const Buffer& out,
                    const std::vector<PrimExpr>& idx, ExprKind kind, const PrimExpr& rhs, const PrimExpr& init,
                    const BlockNode* like, bool allocs) {
  Stmt body = BufferStoreNode::make(out, Combine(kind, BufferLoadNode::make(out, idx), rhs), idx);
  Stmt init_stmt = BufferStoreNode::make(out, init, idx);
  std::vector<BufferRegion> writes{BufferRegion{out, PointRegion(idx)}};
  Stmt tmp = BlockNode::make(name, std::move(ivs), {}, writes, body, init_stmt,
                             allocs ? like->alloc_buffers : std::vector<Buffer>{}, like->annotations);
  return WithRegions(tmp.as<BlockNode>(), body, init_stmt, writes);
}

}  // namespace

BlockRV Schedule::rfactor(const LoopRV& loop, int factor_axis) {
  static const char* kPrim = "rfactor";
  LoopInfo linfo = ScheduleAccess::ResolveLoop(*this, loop, kPrim);
  std::vector<const BlockRealizeNode*> under = BlocksUnder(linfo.stmt);
  if (under.size() != 1) {
    TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(linfo.loop), " has ", under.size(),
                  " blocks under it; rfactor needs exactly one reduction block");
  }
  BlockInfo info = *FindBlock(func_->body, under[0]->block_node()->name_hint);
  const BlockNode* b = info.block;
  const std::string name = b->name_hint;
  for (const IterVar& iv : b->iter_vars) {
    if (iv.iter_type == IterVarType::kOrdered) {
      TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is a scan (iter var '", iv.var->name_hint,
                    "' is ordered); its partial results would read points of itself not yet computed");
    }
  }
  Reducer red = MatchReducer(kPrim, b);
  const Buffer out = red.store->buffer;
  const VarNode* lv = linfo.loop->loop_var.get_var();
  std::set<const VarNode*> red_vars = ReductionLoopVars(info.realize);
  std::set<const VarNode*> sp_vars = SpatialLoopVars(info.realize);
  if (!red_vars.count(lv)) {
    TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(linfo.loop), " is not bound to a reduction iter var of block '",
                  name, "'");
  }
  const int ndim = out.ndim();
  if (factor_axis < 0) factor_axis += ndim + 1;
  if (factor_axis < 0 || factor_axis > ndim) {
    TESSERA_THROW(ScheduleError, kPrim, ": factor_axis is out of range for '", out->name, "' of rank ", ndim,
                  " (expected -", ndim + 1, " .. ", ndim, ")");
  }
  // The loops bound to reduction iter vars, and the outermost of them.
  std::set<const VarNode*> loop_vars;
  for (const ForNode* f : info.loops) loop_vars.insert(f->loop_var.get_var());
  int top = -1;
  for (size_t i = 0; i < info.loops.size(); ++i) {
    const ForNode* f = info.loops[i];
    const VarNode* v = f->loop_var.get_var();
    if (!red_vars.count(v)) continue;
    if (sp_vars.count(v)) {
      TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(f), " is bound to both spatial and reduction iter vars of block '",
                    name, "'");
    }
    if (UsesAnyVar(f->min, loop_vars) || UsesAnyVar(f->extent, loop_vars)) {
      TESSERA_THROW(ScheduleError, kPrim, ": the range of loop ", LoopName(f), " depends on an enclosing loop");
    }
    if (top < 0) top = static_cast<int>(i);
  }
  for (const auto& x : red.store->indices) {
    for (const auto& iv : b->iter_vars) {
      if (iv.iter_type != IterVarType::kDataPar && UsesAnyVar(x, {iv.var.get_var()})) {
        TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' stores at an index that uses reduction iter var '",
                      iv.var->name_hint, "'");
      }
    }
  }

  // ---- The rfactor block: one iter var per loop bound to a reduction iter var; `loop`'s is
  // data-parallel and indexes the new dimension of <out>_rf.
  IterVarCopies rf_sp = CopySpatialIterVars(info.realize, {});
  std::vector<IterVar> rf_ivs = rf_sp.ivs;
  std::vector<PrimExpr> rf_bind = rf_sp.bindings;
  std::map<const VarNode*, PrimExpr> loop_to_iv, iv_map = rf_sp.map;
  PrimExpr rf_index;
  for (int i = top; i < static_cast<int>(info.loops.size()); ++i) {
    const ForNode* f = info.loops[i];
    const VarNode* v = f->loop_var.get_var();
    if (!red_vars.count(v)) continue;
    Var nv("v" + v->name_hint, v->dtype);
    loop_to_iv[v] = nv;
    const bool is_rf = v == lv;
    rf_ivs.push_back(IterVar{nv, Range(f->min, f->extent), is_rf ? IterVarType::kDataPar : IterVarType::kCommReduce});
    rf_bind.push_back(f->loop_var);
    if (is_rf) rf_index = Simplify(nv - f->min);
  }
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (iv.iter_type == IterVarType::kDataPar) continue;
    iv_map[iv.var.get_var()] = Simplify(Substitute(info.realize->iter_values[i], loop_to_iv));
  }
  std::vector<PrimExpr> rf_shape = out->shape;
  rf_shape.insert(rf_shape.begin() + factor_axis, linfo.loop->extent);
  Buffer rf_buf = Buffer::make(out->name + "_rf", out->dtype, rf_shape, out->scope);
  std::vector<PrimExpr> rf_idx;
  for (const auto& x : red.store->indices) rf_idx.push_back(Substitute(x, iv_map));
  rf_idx.insert(rf_idx.begin() + factor_axis, rf_index);
  const PrimExpr init_value = b->init.as<BufferStoreNode>()->value;
  const std::string rf_name = ScheduleAccess::FreshBlockName(*this, name + "_rf");
  Stmt rf_block = ReductionBlock(rf_name, rf_ivs, rf_buf, rf_idx, red.kind, Substitute(red.rhs, iv_map),
                                 Substitute(init_value, iv_map), b, /*allocs=*/true);
  Stmt rf_realize = BlockRealizeNode::make(rf_bind, info.realize->predicate, rf_block);

  // ---- The write-back block, after the outermost reduction loop: copies of the spatial loops
  // inside it, then a loop over the factored axis.
  const LoopCopies wb_loops = CopySpatialLoops(info, top, sp_vars, "_wb");
  Var rf_loop(lv->name_hint + "_wb", lv->dtype);
  Var rv("v" + lv->name_hint, lv->dtype);
  IterVarCopies wb_sp = CopySpatialIterVars(info.realize, wb_loops.map);
  std::vector<IterVar> wb_ivs = wb_sp.ivs;
  std::vector<PrimExpr> wb_bind = wb_sp.bindings;
  const std::map<const VarNode*, PrimExpr>& wb_map = wb_sp.map;
  wb_ivs.push_back(IterVar{rv, Range(ir::make_zero(lv->dtype), linfo.loop->extent), IterVarType::kCommReduce});
  wb_bind.push_back(rf_loop);
  std::vector<PrimExpr> wb_idx, wb_rf_idx;
  for (const auto& x : red.store->indices) wb_idx.push_back(Substitute(x, wb_map));
  wb_rf_idx = wb_idx;
  wb_rf_idx.insert(wb_rf_idx.begin() + factor_axis, rv);
  Stmt wb_block = ReductionBlock(name, wb_ivs, out, wb_idx, red.kind, BufferLoadNode::make(rf_buf, wb_rf_idx),
                                 Substitute(init_value, wb_map), b, /*allocs=*/false);
  // Predicate terms over loops the write-back keeps (those outside `top`, and the spatial copies).
  Stmt wb = BlockRealizeNode::make(wb_bind, wb_loops.Predicate(info), wb_block);
  wb = wb_loops.Wrap(ForNode::make(rf_loop, ir::make_zero(lv->dtype), linfo.loop->extent, ForKind::kSerial, wb));

  const Stmt& top_loop = info.loop_stmts[top];
  Stmt new_top = ReplaceStmts(top_loop, {{info.realize, rf_realize}});
  Stmt new_body = ReplaceStmts(func_->body, {{top_loop.get(), SeqStmtNode::make({new_top, wb})}});
  new_body = UpdateRootAllocs(new_body, {rf_buf}, Buffer());
  BlockRV out_rv = NewBlockRV(rf_name);
  ScheduleAccess::Commit(*this, new_body,
                         Instruction{kPrim, {RVRef{'l', loop.id}}, {{"factor_axis", int64_t{factor_axis}}},
                                     {RVRef{'b', out_rv.id}}});
  return out_rv;
}

}  // namespace tessera::tir
