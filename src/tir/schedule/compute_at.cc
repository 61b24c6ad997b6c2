// compute_at and reverse_compute_at (TensorIR §3.3): move a block under a loop of another
// loop nest, regenerating its loops so that it covers exactly the region needed there.
//
// Region analysis: the accesses of the blocks on the other side are mapped to loop
// variables through their bindings and bounded (utils.h EvalBound) with the loops inside
// the target loop relaxed over their ranges and the target loop and those above it held
// symbolic. A dimension that cannot be bounded, or whose extent is not constant, falls
// back to the moved block's full iteration domain.
#include <algorithm>
#include <optional>
#include <set>

#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::make_const;

namespace {
struct Span {
  PrimExpr lo;
  int64_t extent = 0;
};

/// The outermost statement of the block's own loop nest (loops that contain only it).
Stmt OwnNestRoot(const BlockInfo& info) {
  Stmt cur = info.realize_stmt;
  for (int k = static_cast<int>(info.loops.size()) - 1; k >= 0; --k) {
    if (info.loops[k]->body.get() != cur.get()) break;
    cur = info.loop_stmts[k];
  }
  return cur;
}

/// The SeqStmt holding `root` and root's index in it; false when root's parent is not a SeqStmt.
bool ParentSeq(const std::vector<Stmt>& path, const Stmt& root, const SeqStmtNode** seq, size_t* index) {
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i].get() != root.get()) continue;
    *seq = path[i - 1].as<SeqStmtNode>();
    if (!*seq) return false;
    for (size_t j = 0; j < (*seq)->seq.size(); ++j) {
      if ((*seq)->seq[j].get() == root.get()) *index = j;
    }
    return true;
  }
  return false;
}

/// Ranges of the loops strictly inside `loop` on a block's loop path.
std::map<const VarNode*, Range> InnerLoops(const BlockInfo& info, const ForNode* loop) {
  std::map<const VarNode*, Range> relax;
  bool inside = false;
  for (const ForNode* f : info.loops) {
    if (inside) relax[f->loop_var.get_var()] = Range(f->min, f->extent);
    if (f == loop) inside = true;
  }
  return relax;
}

/// Maps a block-local expression to loop variables through the realize's bindings.
PrimExpr ToLoopVars(const BlockInfo& info, const PrimExpr& e) {
  std::map<const VarNode*, PrimExpr> vmap;
  for (size_t i = 0; i < info.block->iter_vars.size(); ++i) {
    vmap[info.block->iter_vars[i].var.get_var()] = info.realize->iter_values[i];
  }
  return Substitute(e, vmap);
}

/// Union of [lo, hi] into *acc (per dimension); nullopt when not representable.
void Unite(std::optional<Bound>* acc, const Bound& b, bool* failed) {
  if (!b.ok) {
    *failed = true;
    return;
  }
  if (!acc->has_value()) {
    *acc = b;
    return;
  }
  int64_t dlo, dhi;
  if (!ConstDiff(b.lo, (*acc)->lo, &dlo) || !ConstDiff(b.hi, (*acc)->hi, &dhi)) {
    *failed = true;
    return;
  }
  if (dlo < 0) (*acc)->lo = b.lo;
  if (dhi > 0) (*acc)->hi = b.hi;
}

/// Whether the points a store writes while the `relax` loops run fill the bounding box of its
/// indices: the box's volume (clipped to the buffer where its bounds are constants: a guarded
/// tail writes nothing outside) is at most the number of iterations of the loops the indices
/// use. A larger box (e.g. [r / 3, r % 3] for r in [4, 8): a 2 x 3 box, 4 points) holds elements
/// the store does not write, and reverse_compute_at must not read them under the loop.
bool ProducesWholeBox(const Buffer& buf, const std::vector<PrimExpr>& indices,
                      const std::map<const VarNode*, Range>& relax) {
  int64_t volume = 1, points = 1;
  std::set<const VarNode*> used;
  for (size_t d = 0; d < indices.size(); ++d) {
    const PrimExpr& e = indices[d];
    Bound b = EvalBound(e, relax);
    int64_t diff;
    if (!b.ok || !ConstDiff(b.hi, b.lo, &diff)) return true;  // not bounded: refused by the caller
    int64_t lo, hi, ext;
    if (ir::as_const_int(Simplify(b.lo), &lo) && ir::as_const_int(Simplify(b.hi), &hi) &&
        ir::as_const_int(buf->shape[d], &ext))
      diff = std::min(hi, ext - 1) - std::max<int64_t>(lo, 0);
    volume *= std::max<int64_t>(diff + 1, 0);
    for (const VarNode* v : VarsIn(e))
      if (relax.count(v)) used.insert(v);
  }
  for (const VarNode* v : used) {
    int64_t ext;
    if (!ir::as_const_int(relax.at(v).extent, &ext)) return false;
    points *= ext;
  }
  return volume <= points;
}

std::optional<Span> ToSpan(const std::optional<Bound>& b, bool failed) {
  if (failed || !b.has_value()) return std::nullopt;
  int64_t diff;
  if (!ConstDiff(b->hi, b->lo, &diff)) return std::nullopt;
  return Span{Simplify(b->lo), diff + 1};
}

/// Builds the loop nest that runs `realize`'s block over the given spans of its iter vars
/// (nullopt: the iter var's whole domain), with a predicate where the span may leave the
/// domain. `outer` are the ranges of the loops that will enclose the nest.
Stmt BuildNest(const BlockRealizeNode* realize, const std::vector<std::optional<Span>>& spans,
               std::map<const VarNode*, Range> outer) {
  const BlockNode* b = realize->block_node();
  std::vector<Var> loop_vars;
  std::vector<PrimExpr> extents;
  std::vector<PrimExpr> bindings;
  std::vector<PrimExpr> preds;
  int ax = 0;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    DataType t = iv.var.dtype();
    int64_t dom_ext = -1;
    ir::as_const_int(iv.dom.extent, &dom_ext);
    std::optional<Span> sp = spans[i];
    if (sp && dom_ext >= 0 && sp->extent >= dom_ext) sp.reset();  // no smaller than the whole domain
    PrimExpr lo = sp ? sp->lo : iv.dom.min;
    PrimExpr ext = sp ? make_const(t, sp->extent) : iv.dom.extent;
    PrimExpr binding = lo;
    if (!ir::is_one(ext)) {
      Var v("ax" + std::to_string(ax++), t);
      loop_vars.push_back(v);
      extents.push_back(ext);
      outer[v.get_var()] = Range(make_const(t, 0), ext);
      binding = Simplify(lo + v);
    }
    bindings.push_back(Simplify(binding));
    if (sp) {
      Bound bd = EvalBound(binding, outer);
      int64_t d;
      if (!bd.ok || !ConstDiff(bd.lo, iv.dom.min, &d) || d < 0) preds.push_back(binding >= iv.dom.min);
      if (!bd.ok || !ConstDiff(iv.dom.min + iv.dom.extent, bd.hi, &d) || d < 1) {
        preds.push_back(binding < Simplify(iv.dom.min + iv.dom.extent));
      }
    }
  }
  Stmt body = BlockRealizeNode::make(bindings, Conjoin(preds), realize->block);
  for (int i = static_cast<int>(loop_vars.size()) - 1; i >= 0; --i) {
    body = ForNode::make(loop_vars[i], make_const(loop_vars[i].dtype(), 0), extents[i], ForKind::kSerial, body);
  }
  return body;
}

std::map<const VarNode*, Range> EnclosingLoops(const LoopInfo& linfo) {
  std::map<const VarNode*, Range> out;
  for (const auto& s : linfo.path) {
    if (auto* f = s.as<ForNode>()) out[f->loop_var.get_var()] = Range(f->min, f->extent);
  }
  return out;
}

Stmt InsertInLoop(const ForNode* loop, const Stmt& nest, bool at_front) {
  Stmt body = at_front ? SeqStmtNode::make({nest, loop->body}) : SeqStmtNode::make({loop->body, nest});
  return ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->annotations);
}

/// Checks the block's nest root and the loop are siblings in one sequence, returns their indices.
void LocateSiblings(const char* prim, const BlockInfo& binfo, const Stmt& root, const LoopInfo& linfo,
                    size_t* block_index, size_t* loop_index) {
  const std::string& name = binfo.block->name_hint;
  const SeqStmtNode* seq = nullptr;
  if (!ParentSeq(binfo.path, root, &seq, block_index)) {
    TESSERA_THROW(ScheduleError, prim, ": loop ", LoopName(linfo.loop), " is not in the same scope as block '", name, "'");
  }
  for (size_t j = 0; j < seq->seq.size(); ++j) {
    if (Contains(seq->seq[j], linfo.loop)) {
      *loop_index = j;
      return;
    }
  }
  TESSERA_THROW(ScheduleError, prim, ": loop ", LoopName(linfo.loop), " is not in the same scope as block '", name, "'");
}
}  // namespace

// ------------------------------------------------------------------ compute_at
void Schedule::compute_at(const BlockRV& block, const LoopRV& loop) {
  static const char* kPrim = "compute_at";
  BlockInfo pinfo = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  LoopInfo linfo = ScheduleAccess::ResolveLoop(*this, loop, kPrim);
  const BlockNode* p = pinfo.block;
  const std::string& name = p->name_hint;
  const std::string lname = LoopName(linfo.loop);
  if (Contains(linfo.stmt, pinfo.realize)) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is already under loop ", lname);
  }
  if (p->writes.size() != 1) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' writes ", p->writes.size(),
                  " buffers; only blocks with a single output can be moved");
  }
  const Buffer buf = p->writes[0].buffer;
  // The stores must be indexed by distinct spatial iter vars: dim d <-> iter var.
  std::vector<int> dim_of_iter(p->iter_vars.size(), -1);
  std::vector<const BufferStoreNode*> stores = CollectStores(p->body);
  if (p->init.defined()) {
    auto more = CollectStores(p->init);
    stores.insert(stores.end(), more.begin(), more.end());
  }
  for (const auto* st : stores) {
    bool ok = st->buffer.same_as(buf);
    for (size_t d = 0; ok && d < st->indices.size(); ++d) {
      auto* v = st->indices[d].as<VarNode>();
      ok = false;
      for (size_t i = 0; v && i < p->iter_vars.size(); ++i) {
        if (p->iter_vars[i].var.get_var() == v && p->iter_vars[i].iter_type == IterVarType::kDataPar &&
            (dim_of_iter[i] == -1 || dim_of_iter[i] == static_cast<int>(d))) {
          dim_of_iter[i] = static_cast<int>(d);
          ok = true;
        }
      }
    }
    if (!ok) {
      TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' stores to '", st->buffer->name,
                    "' at indices that are not its spatial iter vars; only such blocks can be moved");
    }
  }
  Stmt root = OwnNestRoot(pinfo);
  size_t pidx = 0, lidx = 0;
  LocateSiblings(kPrim, pinfo, root, linfo, &pidx, &lidx);
  if (lidx < pidx) {
    TESSERA_THROW(ScheduleError, kPrim, ": loop ", lname, " comes before block '", name,
                  "'; a producer can only move into a loop of its consumers, which follow it");
  }
  if (lidx == pidx) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' shares its loop nest with loop ", lname);
  }
  // Consumers: all under the loop.
  std::vector<std::optional<Bound>> region(buf.ndim());
  std::vector<bool> failed(buf.ndim(), false);
  int consumers = 0;
  for (const auto& other : CollectBlocks(func_->body)) {
    if (!other.scope || other.block == p) continue;
    if (WritesBuffer(other.block, buf)) {
      TESSERA_THROW(ScheduleError, kPrim, ": buffer '", buf->name, "' is also written by block '", other.block->name_hint, "'");
    }
    if (!ReadsBuffer(other.block, buf)) continue;
    if (!Contains(linfo.stmt, other.realize)) {
      TESSERA_THROW(ScheduleError, kPrim, ": block '", other.block->name_hint, "' reads '", buf->name,
                    "' but is not under loop ", lname, "; every consumer of '", buf->name, "' must be inside the target loop");
    }
    ++consumers;
    auto relax = InnerLoops(other, linfo.loop);
    struct Loads : StmtExprVisitor {
      Buffer buf;
      std::vector<std::vector<PrimExpr>> idx;
      void VisitExpr_(const BufferLoadNode* op) override {
        if (op->buffer.same_as(buf)) idx.push_back(op->indices);
        StmtExprVisitor::VisitExpr_(op);
      }
    } loads;
    loads.buf = buf;
    if (other.block->init.defined()) loads.VisitStmt(other.block->init);
    loads.VisitStmt(other.block->body);
    for (const auto& idx : loads.idx) {
      for (int d = 0; d < buf.ndim(); ++d) {
        bool f = failed[d];
        Unite(&region[d], EvalBound(ToLoopVars(other, idx[d]), relax), &f);
        failed[d] = f;
      }
    }
  }
  if (consumers == 0) {
    TESSERA_THROW(ScheduleError, kPrim, ": no block under loop ", lname, " reads '", buf->name, "', which block '",
                  name, "' writes");
  }
  std::vector<std::optional<Span>> spans(p->iter_vars.size());
  for (size_t i = 0; i < p->iter_vars.size(); ++i) {
    if (dim_of_iter[i] >= 0) spans[i] = ToSpan(region[dim_of_iter[i]], failed[dim_of_iter[i]]);
  }
  Stmt nest = BuildNest(pinfo.realize, spans, EnclosingLoops(linfo));
  Stmt new_body = ReplaceStmts(func_->body, {{root.get(), Stmt()}, {linfo.loop, InsertInLoop(linfo.loop, nest, true)}});
  for (const ForNode* f : pinfo.loops) {
    if (Contains(root, f)) ScheduleAccess::RemoveLoop(*this, f->loop_var, kPrim);
  }
  ScheduleAccess::Commit(*this, new_body, Instruction{kPrim, {RVRef{'b', block.id}, RVRef{'l', loop.id}}, {}, {}});
}

// ------------------------------------------------------------------ reverse_compute_at
void Schedule::reverse_compute_at(const BlockRV& block, const LoopRV& loop) {
  static const char* kPrim = "reverse_compute_at";
  BlockInfo cinfo = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  LoopInfo linfo = ScheduleAccess::ResolveLoop(*this, loop, kPrim);
  const BlockNode* c = cinfo.block;
  const std::string& name = c->name_hint;
  const std::string lname = LoopName(linfo.loop);
  if (Contains(linfo.stmt, cinfo.realize)) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is already under loop ", lname);
  }
  if (const char* kind = NonSpatialKind(c)) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is ", kind,
                  "; only spatial consumer blocks can be moved under a producer's loop");
  }
  Stmt root = OwnNestRoot(cinfo);
  size_t cidx = 0, lidx = 0;
  LocateSiblings(kPrim, cinfo, root, linfo, &cidx, &lidx);
  if (lidx > cidx) {
    TESSERA_THROW(ScheduleError, kPrim, ": loop ", lname, " comes after block '", name,
                  "'; a consumer can only move into a loop of its producers, which precede it");
  }
  if (lidx == cidx) TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' shares its loop nest with loop ", lname);
  // Blocks between the loop's nest and the block must not conflict with it.
  const SeqStmtNode* seq = nullptr;
  size_t dummy;
  ParentSeq(cinfo.path, root, &seq, &dummy);
  auto creads = DetectReadRegions(c);
  for (size_t j = lidx + 1; j < cidx; ++j) {
    for (const BlockRealizeNode* r : BlocksUnder(seq->seq[j])) {
      for (const auto& rr : creads) {
        if (WritesBuffer(r->block_node(), rr.buffer)) {
          TESSERA_THROW(ScheduleError, kPrim, ": block '", r->block_node()->name_hint, "' between loop ", lname,
                        " and block '", name, "' writes '", rr.buffer->name, "', which '", name, "' reads");
        }
      }
      for (const auto& w : c->writes) {
        if (ReadsBuffer(r->block_node(), w.buffer)) {
          TESSERA_THROW(ScheduleError, kPrim, ": block '", r->block_node()->name_hint, "' between loop ", lname,
                        " and block '", name, "' reads '", w.buffer->name, "', which '", name, "' writes");
        }
      }
    }
  }
  // Regions that the producers under the loop write, per buffer the block reads.
  std::vector<std::optional<Span>> spans(c->iter_vars.size());
  std::vector<bool> constrained(c->iter_vars.size(), false);
  int producers = 0;
  for (const auto& rr : creads) {
    const Buffer& buf = rr.buffer;
    std::vector<std::optional<Bound>> region(buf.ndim());
    std::vector<bool> failed(buf.ndim(), false);
    bool any = false;
    for (const auto& other : CollectBlocks(func_->body)) {
      if (!other.scope || !Contains(linfo.stmt, other.realize)) continue;
      bool writes = false;
      auto relax = InnerLoops(other, linfo.loop);
      for (const auto* st : CollectStores(other.block->body)) {
        if (!st->buffer.same_as(buf)) continue;
        writes = true;
        std::vector<PrimExpr> idx;
        for (int d = 0; d < buf.ndim(); ++d) {
          idx.push_back(ToLoopVars(other, st->indices[d]));
          bool f = failed[d];
          Unite(&region[d], EvalBound(idx.back(), relax), &f);
          failed[d] = f;
        }
        if (!ProducesWholeBox(buf, idx, relax)) {
          TESSERA_THROW(ScheduleError, kPrim, ": block '", other.block->name_hint, "' under loop ", lname,
                        " writes a part of '", buf->name, "' that is not a box (its indices mix the inner loops, ",
                        "e.g. rows fused across dimensions), so block '", name,
                        "' would read elements a later iteration produces");
        }
      }
      any |= writes;
    }
    if (!any) continue;
    ++producers;
    struct Loads : StmtExprVisitor {
      Buffer buf;
      std::vector<std::vector<PrimExpr>> idx;
      void VisitExpr_(const BufferLoadNode* op) override {
        if (op->buffer.same_as(buf)) idx.push_back(op->indices);
        StmtExprVisitor::VisitExpr_(op);
      }
    } loads;
    loads.buf = buf;
    loads.VisitStmt(c->body);
    for (const auto& idx : loads.idx) {
      for (int d = 0; d < buf.ndim(); ++d) {
        std::optional<Span> sp = ToSpan(region[d], failed[d]);
        if (!sp) {
          TESSERA_THROW(ScheduleError, kPrim, ": cannot bound the region of '", buf->name, "' (dimension ", d,
                        ") that loop ", lname, " produces");
        }
        int iter = -1;
        for (size_t i = 0; i < c->iter_vars.size(); ++i) {
          if (idx[d].same_as(c->iter_vars[i].var)) iter = static_cast<int>(i);
        }
        if (iter < 0) {
          int64_t dl, de;
          bool full = ConstDiff(sp->lo, make_const(sp->lo.dtype(), 0), &dl) && dl == 0 &&
                      ConstDiff(buf->shape[d], make_const(sp->lo.dtype(), sp->extent), &de) && de == 0;
          // A dimension of extent 1 that the loop produces (one point, necessarily index 0) is
          // produced whole, whatever expression names its index (e.g. a loop var of extent 1).
          full |= sp->extent == 1 && ConstDiff(buf->shape[d], make_const(sp->lo.dtype(), 1), &de) && de == 0;
          if (!full) {
            TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' reads '", buf->name, "' in dimension ", d,
                          " at an index that is not one of its iter vars, while loop ", lname,
                          " produces only part of that dimension");
          }
          continue;
        }
        if (constrained[iter]) {
          int64_t dl;
          if (!ConstDiff(spans[iter]->lo, sp->lo, &dl) || dl != 0 || spans[iter]->extent != sp->extent) {
            TESSERA_THROW(ScheduleError, kPrim, ": iter var '", c->iter_vars[iter].var->name_hint, "' of block '", name,
                          "' indexes two produced regions that differ");
          }
        }
        constrained[iter] = true;
        spans[iter] = sp;
      }
    }
  }
  if (producers == 0) {
    TESSERA_THROW(ScheduleError, kPrim, ": no block under loop ", lname, " writes a buffer that block '", name, "' reads");
  }
  Stmt nest = BuildNest(cinfo.realize, spans, EnclosingLoops(linfo));
  Stmt new_body = ReplaceStmts(func_->body, {{root.get(), Stmt()}, {linfo.loop, InsertInLoop(linfo.loop, nest, false)}});
  for (const ForNode* f : cinfo.loops) {
    if (Contains(root, f)) ScheduleAccess::RemoveLoop(*this, f->loop_var, kPrim);
  }
  ScheduleAccess::Commit(*this, new_body, Instruction{kPrim, {RVRef{'b', block.id}, RVRef{'l', loop.id}}, {}, {}});
}

}  // namespace tessera::tir
