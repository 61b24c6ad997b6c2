// decompose_padding (TVM's tir.Schedule.decompose_padding; TensorIR, arXiv 2207.04296,
// §3.3 schedule transformations): split a padding block
//   out[v] = select(in_bounds(v), f(v), pad_value)
// into a block filling pad_value everywhere (placed before a chosen loop) and a block
// computing f over the in-bound region only, without the condition.
#include <algorithm>

#include "tessera/tir/printer.h"
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::as_const_int;
using ir::make_const;

namespace {
constexpr const char* kPrim = "decompose_padding";

class LoadFinder : public StmtExprVisitor {
 public:
  std::vector<Buffer> buffers;

 protected:
  void VisitExpr_(const BufferLoadNode* op) override {
    buffers.push_back(op->buffer);
    StmtExprVisitor::VisitExpr_(op);
  }
};

std::vector<Buffer> LoadedBuffers(const PrimExpr& e) {
  LoadFinder f;
  f.VisitExpr(e);
  return f.buffers;
}

/// Removes min / max clamps that the ranges of `relax` make redundant, and simplifies
/// buffer indices.
class ClampRemover : public StmtExprMutator {
 public:
  explicit ClampRemover(std::map<const VarNode*, Range> relax) : relax_(std::move(relax)) {}

 protected:
  PrimExpr VisitBinary_(const ir::PrimExprNode* op, const PrimExpr& a, const PrimExpr& b, const PrimExpr& e) override {
    PrimExpr n = StmtExprMutator::VisitBinary_(op, a, b, e);
    bool is_min = n->kind == ir::ExprKind::kMin, is_max = n->kind == ir::ExprKind::kMax;
    PrimExpr x, y;
    if (!(is_min || is_max) || !n.dtype().is_int() || !ir::GetBinaryOperands(n, &x, &y)) return n;
    Bound d = EvalBound(Simplify(x - y), relax_);
    int64_t lo, hi;
    bool has_lo = d.ok && as_const_int(d.lo, &lo), has_hi = d.ok && as_const_int(d.hi, &hi);
    if (has_hi && hi <= 0) return is_min ? x : y;  // x <= y everywhere
    if (has_lo && lo >= 0) return is_min ? y : x;  // x >= y everywhere
    return n;
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> idx;
    for (const auto& i : op->indices) idx.push_back(Simplify(VisitExpr(i)));
    return BufferLoadNode::make(op->buffer, idx);
  }

 private:
  std::map<const VarNode*, Range> relax_;
};

/// Parses one conjunct `v OP c` / `c OP v` of the condition into [lo, hi) updates.
bool ApplyBound(const PrimExpr& term, const std::map<const VarNode*, int>& iv_index, std::vector<int64_t>* lo,
                std::vector<int64_t>* hi) {
  using K = ir::ExprKind;
  PrimExpr a, b;
  K k = term->kind;
  if (!(k == K::kGE || k == K::kGT || k == K::kLT || k == K::kLE) || !ir::GetBinaryOperands(term, &a, &b)) return false;
  int64_t c;
  const VarNode* v = a.as<VarNode>();
  if (v && as_const_int(b, &c)) {
  } else if ((v = b.as<VarNode>()) && as_const_int(a, &c)) {  // c OP v  ==  v OP' c
    k = k == K::kGE ? K::kLE : k == K::kGT ? K::kLT : k == K::kLT ? K::kGT : K::kGE;
  } else {
    return false;
  }
  auto it = iv_index.find(v);
  if (it == iv_index.end()) return false;
  int i = it->second;
  switch (k) {
    case K::kGE: (*lo)[i] = std::max((*lo)[i], c); break;
    case K::kGT: (*lo)[i] = std::max((*lo)[i], c + 1); break;
    case K::kLT: (*hi)[i] = std::min((*hi)[i], c); break;
    default: (*hi)[i] = std::min((*hi)[i], c + 1); break;
  }
  return true;
}
}  // namespace

BlockRV Schedule::decompose_padding(const BlockRV& block, const LoopRV& loop) {
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  LoopInfo linfo = ScheduleAccess::ResolveLoop(*this, loop, kPrim);
  const BlockNode* b = info.block;
  const std::string& name = b->name_hint;
  int k = -1;
  for (size_t i = 0; i < info.loops.size(); ++i) {
    if (info.loops[i] == linfo.loop) k = static_cast<int>(i);
  }
  if (k < 0) TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(linfo.loop), " is not an ancestor of block '", name, "'");
  auto not_padding = [&](auto&&... why) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is not a padding block out[v] = select(in_bounds, value, "
                  "pad_value): ", why...);
  };
  if (const char* kind = NonSpatialKind(b)) not_padding("it is ", kind);
  auto* store = b->body.as<BufferStoreNode>();
  if (!store) not_padding("its body is not a single BufferStore");
  // Store indices: distinct iter vars with constant domains.
  std::map<const VarNode*, int> iv_index;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) iv_index[b->iter_vars[i].var.get_var()] = static_cast<int>(i);
  const size_t n = b->iter_vars.size();
  std::vector<int64_t> dmin(n), dext(n);
  for (size_t i = 0; i < n; ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (!as_const_int(iv.dom.min, &dmin[i]) || !as_const_int(iv.dom.extent, &dext[i])) {
      not_padding("iter var '", iv.var->name_hint, "' has a non-constant domain");
    }
  }
  std::map<const VarNode*, int> indexing;
  for (size_t d = 0; d < store->indices.size(); ++d) {
    auto* v = store->indices[d].as<VarNode>();
    if (!v || !iv_index.count(v) || indexing.count(v)) {
      not_padding("store index ", d, " (", AsText(store->indices[d]), ") is not a distinct iter var of the block");
    }
    indexing[v] = iv_index[v];
  }
  auto* sel = store->value.as<ir::SelectNode>();
  if (!sel) not_padding("the stored value ", AsText(store->value), " is not a select");
  const PrimExpr& pad = sel->false_value;
  if (!VarsIn(pad).empty() || !LoadedBuffers(pad).empty()) {
    not_padding("the pad value ", AsText(pad), " is not a constant (it uses variables or reads a buffer)");
  }
  for (const auto& buf : LoadedBuffers(sel->true_value)) {
    if (buf.same_as(store->buffer)) not_padding("the in-bound value reads '", buf->name, "', the buffer it writes");
  }
  std::vector<int64_t> lo(n), hi(n);
  for (size_t i = 0; i < n; ++i) lo[i] = dmin[i], hi[i] = dmin[i] + dext[i];
  for (const auto& term : SplitConjuncts(sel->condition)) {
    if (!ApplyBound(term, indexing, &lo, &hi)) {
      not_padding("the condition term ", AsText(term),
                  " is not a bound v >= c, v > c, v < c or v <= c of a store index v by an integer constant c");
    }
  }
  bool restricted = false;
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] >= hi[i]) {
      TESSERA_THROW(ScheduleError, kPrim, ": the in-bound region of block '", name, "' is empty (iter var '",
                    b->iter_vars[i].var->name_hint, "' in [", lo[i], ", ", hi[i], ")); it only pads");
    }
    restricted |= lo[i] > dmin[i] || hi[i] < dmin[i] + dext[i];
  }
  if (!restricted) {
    TESSERA_THROW(ScheduleError, kPrim, ": the condition of block '", name,
                  "' holds on its whole domain; there is no padding to decompose");
  }

  // ---- the in-bound block: narrow directly bound loops, predicate the other bounds.
  const BlockRealizeNode* realize = info.realize;
  std::map<const VarNode*, Range> relax;
  for (size_t i = 0; i < n; ++i) {
    DataType t = b->iter_vars[i].var.dtype();
    relax[b->iter_vars[i].var.get_var()] = Range(make_const(t, lo[i]), make_const(t, hi[i] - lo[i]));
  }
  std::map<const ForNode*, int64_t> narrowed;  // loop -> new extent
  std::map<const VarNode*, PrimExpr> iv_sub;
  std::vector<IterVar> ivs = b->iter_vars;
  std::vector<PrimExpr> preds = SplitConjuncts(realize->predicate);
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] == dmin[i] && hi[i] == dmin[i] + dext[i]) continue;
    const PrimExpr& bind = realize->iter_values[i];
    DataType t = bind.dtype();
    int m = -1;
    if (auto* lv = bind.as<VarNode>()) {
      for (size_t j = k; j < info.loops.size(); ++j) {
        if (info.loops[j]->loop_var.get() == lv) m = static_cast<int>(j);
      }
      std::set<const VarNode*> self{lv};
      for (size_t j = 0; j < n && m >= 0; ++j) {
        if (j != i && UsesAnyVar(realize->iter_values[j], self)) m = -1;
      }
      if (m >= 0 && UsesAnyVar(realize->predicate, self)) m = -1;
    }
    int64_t lmin, lext;
    if (m >= 0 && dmin[i] == 0 && as_const_int(info.loops[m]->min, &lmin) && lmin == 0 &&
        as_const_int(info.loops[m]->extent, &lext) && lext == dext[i] && BlocksUnder(info.loop_stmts[m]).size() == 1) {
      narrowed[info.loops[m]] = hi[i] - lo[i];
      const Var& old = b->iter_vars[i].var;
      Var nv(old->name_hint, old.dtype());
      ivs[i] = IterVar{nv, Range(make_const(t, 0), make_const(t, hi[i] - lo[i])), IterVarType::kDataPar};
      iv_sub[old.get_var()] = lo[i] == 0 ? PrimExpr(nv) : PrimExpr(nv + make_const(t, lo[i]));
    } else {
      if (lo[i] > dmin[i]) preds.push_back(bind >= make_const(t, lo[i]));
      if (hi[i] < dmin[i] + dext[i]) preds.push_back(bind < make_const(t, hi[i]));
    }
  }
  PrimExpr value = ClampRemover(relax).VisitExpr(sel->true_value);
  value = ClampRemover({}).VisitExpr(Substitute(value, iv_sub));
  std::vector<PrimExpr> out_idx;
  for (const auto& x : store->indices) out_idx.push_back(Simplify(Substitute(x, iv_sub)));
  Stmt body = BufferStoreNode::make(store->buffer, value, out_idx);
  std::vector<BufferRegion> writes = b->writes;
  for (auto& w : writes) {
    for (auto& r : w.region) r = Range(Simplify(Substitute(r.min, iv_sub)), Simplify(Substitute(r.extent, iv_sub)));
  }
  Stmt tmp = BlockNode::make(name, ivs, {}, writes, body, Stmt(), b->alloc_buffers, b->annotations);
  Stmt copy_block = WithRegions(tmp.as<BlockNode>(), body, Stmt(), writes);
  Stmt cur = BlockRealizeNode::make(realize->iter_values, Conjoin(preds), copy_block);
  const StmtNode* child = info.realize;
  for (int m = static_cast<int>(info.loops.size()) - 1; m >= k; --m) {
    const ForNode* f = info.loops[m];
    Stmt fbody = ReplaceStmts(f->body, {{child, cur}});
    auto it = narrowed.find(f);
    PrimExpr extent = it == narrowed.end() ? f->extent : make_const(f->extent.dtype(), it->second);
    cur = ForNode::make(f->loop_var, f->min, extent, f->for_kind, fbody, f->annotations);
    child = f;
  }

  // ---- the pad block: fresh copies of the loops from `loop` down, the whole domain.
  std::map<const VarNode*, PrimExpr> loop_map, pad_iv;
  std::vector<Var> copies;
  for (size_t m = k; m < info.loops.size(); ++m) {
    const Var& v = info.loops[m]->loop_var;
    copies.emplace_back(v->name_hint, v.dtype());
    loop_map[v.get_var()] = copies.back();
  }
  std::vector<IterVar> pad_ivs;
  std::vector<PrimExpr> pad_bind;
  for (size_t i = 0; i < n; ++i) {
    const IterVar& iv = b->iter_vars[i];
    Var nv(iv.var->name_hint, iv.var.dtype());
    pad_iv[iv.var.get_var()] = nv;
    pad_ivs.push_back(IterVar{nv, iv.dom, IterVarType::kDataPar});
    pad_bind.push_back(Simplify(Substitute(realize->iter_values[i], loop_map)));
  }
  std::vector<BufferRegion> pad_writes = b->writes;
  for (auto& w : pad_writes) {
    for (auto& r : w.region) r = Range(Substitute(r.min, pad_iv), Substitute(r.extent, pad_iv));
  }
  std::vector<PrimExpr> pad_idx;
  for (const auto& x : store->indices) pad_idx.push_back(Substitute(x, pad_iv));
  std::string pad_name = ScheduleAccess::FreshBlockName(*this, name + "_pad_const");
  Stmt pad_block = BlockNode::make(pad_name, pad_ivs, {}, pad_writes, BufferStoreNode::make(store->buffer, pad, pad_idx));
  Stmt nest = BlockRealizeNode::make(pad_bind, Substitute(realize->predicate, loop_map), pad_block);
  for (int m = static_cast<int>(info.loops.size()) - 1; m >= k; --m) {
    const ForNode* f = info.loops[m];
    nest = ForNode::make(copies[m - k], Substitute(f->min, loop_map), Substitute(f->extent, loop_map), f->for_kind, nest,
                         f->annotations);
  }

  Stmt new_body = ReplaceStmts(func_->body, {{linfo.loop, SeqStmtNode::make({nest, cur})}});
  BlockRV out = NewBlockRV(pad_name);
  ScheduleAccess::Commit(*this, new_body,
                         Instruction{kPrim, {RVRef{'b', block.id}, RVRef{'l', loop.id}}, {}, {RVRef{'b', out.id}}});
  return out;
}

}  // namespace tessera::tir
