// compute_inline and reverse_compute_inline (TensorIR §3.3 block transformations).
#include <sstream>

#include "../transform/fresh_copy.h"
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT

namespace {
std::string IndexStr(const Buffer& b, const std::vector<PrimExpr>& idx) {
  std::ostringstream os;
  os << b->name << "[";
  for (size_t i = 0; i < idx.size(); ++i) {
    os << (i ? ", " : "");
    if (auto* v = idx[i].as<VarNode>()) os << v->name_hint;
    else if (auto* c = idx[i].as<ir::IntImmNode>()) os << c->value;
    else os << "<expr>";
  }
  os << "]";
  return os.str();
}

bool IsParam(const PrimFunc& f, const Buffer& b) {
  for (const auto& p : f->params) {
    if (p.same_as(b)) return true;
  }
  return false;
}

/// Position of each iter var in `indices` when the indices are distinct iter vars of `b`.
bool IndicesAreIterVars(const BlockNode* b, const std::vector<PrimExpr>& indices, std::vector<int>* pos) {
  pos->clear();
  std::set<const VarNode*> seen;
  for (const auto& e : indices) {
    auto* v = e.as<VarNode>();
    if (!v || !seen.insert(v).second) return false;
    int found = -1;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (b->iter_vars[i].var.get_var() == v) found = static_cast<int>(i);
    }
    if (found < 0) return false;
    pos->push_back(found);
  }
  return true;
}

/// Whether `e` binds variables (expression Lets, as the storage-type conversions use).
bool HasLet(const PrimExpr& e) {
  struct Finder : StmtExprVisitor {
    bool found = false;
    void VisitExpr_(const ir::LetNode* op) override { found = true; }
  } f;
  f.VisitExpr(e);
  return f.found;
}

/// Replaces loads of `buffer` by `value` with the producer's iter vars bound to the load indices.
/// A value with expression Lets gets fresh let variables at every use after the first, since
/// flat TIR defines each variable once (VerifyFlat).
class LoadInliner : public StmtExprMutator {
 public:
  LoadInliner(Buffer buffer, std::vector<const VarNode*> vars, PrimExpr value)
      : buffer_(std::move(buffer)), vars_(std::move(vars)), value_(std::move(value)) {}

 protected:
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr n = StmtExprMutator::VisitExpr_(op, e);
    auto* load = n.as<BufferLoadNode>();
    if (!load->buffer.same_as(buffer_)) return n;
    std::map<const VarNode*, PrimExpr> vmap;
    for (size_t d = 0; d < vars_.size(); ++d) vmap[vars_[d]] = load->indices[d];
    PrimExpr v = Substitute(value_, vmap);
    if (uses_++ > 0 && HasLet(v)) v = transform::detail::FreshCopy(EvaluateNode::make(v)).as<EvaluateNode>()->value;
    return v;
  }

 private:
  int uses_ = 0;
  Buffer buffer_;
  std::vector<const VarNode*> vars_;
  PrimExpr value_;
};

void MarkRemovedLoops(Schedule& s, const BlockInfo& info, const Stmt& new_body, const char* prim) {
  for (const ForNode* f : info.loops) {
    if (!FindLoop(new_body, f->loop_var.get_var())) ScheduleAccess::RemoveLoop(s, f->loop_var, prim);
  }
}

std::vector<BufferRegion> PointRegions(const Buffer& b, const std::vector<PrimExpr>& idx) {
  BufferRegion r{b, {}};
  for (const auto& i : idx) r.region.emplace_back(Simplify(i), ir::make_const(i.dtype(), 1));
  return {r};
}
}  // namespace

// ------------------------------------------------------------------ compute_inline
void Schedule::compute_inline(const BlockRV& block) {
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, "compute_inline");
  const BlockNode* b = info.block;
  const std::string& name = b->name_hint;
  if (const char* kind = NonSpatialKind(b)) {
    TESSERA_THROW(ScheduleError, "compute_inline: block '", name, "' is ", kind,
                  "; only blocks that are a single BufferStore of a spatial expression can be inlined");
  }
  auto* store = b->body.as<BufferStoreNode>();
  if (!store) {
    TESSERA_THROW(ScheduleError, "compute_inline: the body of block '", name,
                  "' is not a single BufferStore; only blocks that are a single BufferStore of a spatial expression can be inlined");
  }
  const Buffer& buf = store->buffer;
  std::vector<int> pos;
  if (!IndicesAreIterVars(b, store->indices, &pos)) {
    TESSERA_THROW(ScheduleError, "compute_inline: block '", name, "' stores to ", IndexStr(buf, store->indices),
                  "; the store indices must be the block's iter vars, each once");
  }
  std::set<const VarNode*> indexed;
  std::vector<const VarNode*> vars;
  for (int p : pos) {
    indexed.insert(b->iter_vars[p].var.get_var());
    vars.push_back(b->iter_vars[p].var.get_var());
  }
  for (const auto& iv : b->iter_vars) {
    if (!indexed.count(iv.var.get_var()) && UsesAnyVar(store->value, {iv.var.get_var()})) {
      TESSERA_THROW(ScheduleError, "compute_inline: the value block '", name, "' stores depends on iter var '",
                    iv.var->name_hint, "', which is not a store index");
    }
  }
  if (ReadsBuffer(b, buf)) {
    TESSERA_THROW(ScheduleError, "compute_inline: block '", name, "' reads '", buf->name, "', the buffer it writes");
  }
  if (IsParam(func_, buf)) {
    TESSERA_THROW(ScheduleError, "compute_inline: block '", name, "' writes '", buf->name, "', a parameter of function '",
                  func_->name, "'; only blocks writing intermediate buffers can be inlined");
  }
  std::map<const StmtNode*, Stmt> repl{{info.realize, Stmt()}};
  LoadInliner inliner(buf, vars, store->value);
  for (const auto& other : CollectBlocks(func_->body)) {
    if (!other.scope || other.block == b) continue;
    if (WritesBuffer(other.block, buf)) {
      TESSERA_THROW(ScheduleError, "compute_inline: buffer '", buf->name, "' is also written by block '",
                    other.block->name_hint, "'");
    }
    if (!ReadsBuffer(other.block, buf)) continue;
    const BlockNode* c = other.block;
    Stmt body = inliner.VisitStmt(c->body);
    Stmt init = c->init.defined() ? inliner.VisitStmt(c->init) : Stmt();
    Stmt nb = WithRegions(c, body, init, c->writes);
    repl[other.realize] = BlockRealizeNode::make(other.realize->iter_values, other.realize->predicate, nb);
  }
  Stmt new_body = UpdateRootAllocs(ReplaceStmts(func_->body, repl), {}, buf);
  MarkRemovedLoops(*this, info, new_body, "compute_inline");
  ScheduleAccess::RemoveBlock(*this, name, "compute_inline");
  ScheduleAccess::Commit(*this, new_body, Instruction{"compute_inline", {RVRef{'b', block.id}}, {}, {}});
}

// ------------------------------------------------------------------ reverse_compute_inline
void Schedule::reverse_compute_inline(const BlockRV& block) {
  static const char* kPrim = "reverse_compute_inline";
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  const BlockNode* c = info.block;
  const std::string& name = c->name_hint;
  if (const char* kind = NonSpatialKind(c)) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' is ", kind,
                  "; only consumer blocks that are a single BufferStore of a spatial expression can be inlined");
  }
  auto* cstore = c->body.as<BufferStoreNode>();
  if (!cstore) TESSERA_THROW(ScheduleError, kPrim, ": the body of block '", name, "' is not a single BufferStore");
  // The unique producer among the buffers the block reads.
  auto blocks = CollectBlocks(func_->body);
  std::vector<std::pair<Buffer, const BlockInfo*>> produced;
  for (const auto& r : DetectReadRegions(c)) {
    for (const auto& other : blocks) {
      if (other.scope && other.block != c && WritesBuffer(other.block, r.buffer)) {
        produced.push_back({r.buffer, &other});
        break;
      }
    }
  }
  if (produced.empty()) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' reads no buffer produced by another block");
  }
  if (produced.size() > 1) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' reads buffers produced by ", produced.size(),
                  " blocks ('", produced[0].second->block->name_hint, "', '", produced[1].second->block->name_hint,
                  "'); it can only be inlined into a single producer");
  }
  const Buffer buf = produced[0].first;
  const BlockInfo& pinfo = *produced[0].second;
  const BlockNode* p = pinfo.block;
  if (cstore->buffer.same_as(buf)) TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' writes the buffer it reads");
  // Every load of buf indexed by the same distinct iter vars, covering the whole buffer.
  struct LoadFinder : StmtExprVisitor {
    Buffer buf;
    std::vector<std::vector<PrimExpr>> idx;
    void VisitExpr_(const BufferLoadNode* op) override {
      if (op->buffer.same_as(buf)) idx.push_back(op->indices);
      StmtExprVisitor::VisitExpr_(op);
    }
  } lf;
  lf.buf = buf;
  lf.VisitStmt(c->body);
  // Each load index is a distinct iter var of the block, or 0 on a dimension of extent 1 (a
  // broadcast helper indexes a unit dimension by 0); every iter var not among them has extent 1.
  std::vector<int> pos;  // buffer dim -> the consumer's iter var, -1 for a 0 on a unit dimension
  std::set<int> used;
  bool iter_var_indices = lf.idx[0].size() == buf->shape.size();
  for (size_t d = 0; iter_var_indices && d < lf.idx[0].size(); ++d) {
    std::vector<int> one;
    if (IndicesAreIterVars(c, {lf.idx[0][d]}, &one) && used.insert(one[0]).second) {
      pos.push_back(one[0]);
    } else {
      iter_var_indices = ir::is_zero(lf.idx[0][d]) && ir::is_one(buf->shape[d]);
      pos.push_back(-1);
    }
  }
  if (!iter_var_indices) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' reads ", IndexStr(buf, lf.idx[0]),
                  "; the load indices must be the block's iter vars, each once (or 0 on a dimension of extent 1)");
  }
  for (const auto& other : lf.idx) {
    for (size_t d = 0; d < other.size(); ++d) {
      if (!other[d].same_as(lf.idx[0][d]) && !(pos[d] < 0 && ir::is_zero(other[d]))) {
        TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' reads '", buf->name,
                      "' at two different points; it must read it once per iteration");
      }
    }
  }
  for (size_t i = 0; i < c->iter_vars.size(); ++i) {
    if (!used.count(static_cast<int>(i)) && !ir::is_one(c->iter_vars[i].dom.extent)) {
      TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' has ", c->iter_vars.size(), " iter vars but reads ",
                    IndexStr(buf, lf.idx[0]), "; every iter var must index the producer's buffer");
    }
  }
  for (size_t d = 0; d < pos.size(); ++d) {
    if (pos[d] < 0) continue;
    const IterVar& iv = c->iter_vars[pos[d]];
    int64_t diff;
    if (!ir::is_zero(iv.dom.min) || !ConstDiff(iv.dom.extent, buf->shape[d], &diff) || diff != 0) {
      TESSERA_THROW(ScheduleError, kPrim, ": iter var '", iv.var->name_hint, "' of block '", name,
                    "' does not range over the whole dimension ", d, " of '", buf->name, "'");
    }
  }
  // The producer: a single spatial store.
  if (const char* kind = NonSpatialKind(p)) {
    TESSERA_THROW(ScheduleError, kPrim, ": producer block '", p->name_hint, "' of '", buf->name, "' is ", kind,
                  "; the consumer can only be inlined into a single spatial BufferStore");
  }
  auto* pstore = p->body.as<BufferStoreNode>();
  if (!pstore || !pstore->buffer.same_as(buf)) {
    TESSERA_THROW(ScheduleError, kPrim, ": the body of producer block '", p->name_hint, "' is not a single BufferStore to '",
                  buf->name, "'");
  }
  if (IsParam(func_, buf)) {
    TESSERA_THROW(ScheduleError, kPrim, ": '", buf->name, "' is a parameter of function '", func_->name,
                  "'; only intermediate buffers can be removed by inlining");
  }
  for (const auto& other : blocks) {
    if (other.scope && other.block != c && other.block != p && ReadsBuffer(other.block, buf)) {
      TESSERA_THROW(ScheduleError, kPrim, ": buffer '", buf->name, "' is also read by block '",
                    other.block->name_hint, "'");
    }
  }
  // Consumer var at buffer dim d := producer's store index d.
  // (an iter var of extent 1 that indexes no dimension := 0).
  std::map<const VarNode*, PrimExpr> vmap;
  for (const auto& iv : c->iter_vars) vmap[iv.var.get_var()] = ir::make_zero(iv.var.dtype());
  for (size_t d = 0; d < pos.size(); ++d)
    if (pos[d] >= 0) vmap[c->iter_vars[pos[d]].var.get_var()] = pstore->indices[d];
  struct Replace : StmtExprMutator {
    Buffer buf;
    PrimExpr value;
    PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
      if (op->buffer.same_as(buf)) return value;
      return StmtExprMutator::VisitExpr_(op, e);
    }
  } rep;
  rep.buf = buf;
  rep.value = pstore->value;
  PrimExpr value = rep.VisitExpr(Substitute(cstore->value, vmap));
  std::vector<PrimExpr> idx;
  for (const auto& i : cstore->indices) idx.push_back(Simplify(Substitute(i, vmap)));
  Stmt store = BufferStoreNode::make(cstore->buffer, value, idx);
  Stmt nb = WithRegions(p, store, Stmt(), PointRegions(cstore->buffer, idx));
  std::map<const StmtNode*, Stmt> repl{
      {info.realize, Stmt()},
      {pinfo.realize, BlockRealizeNode::make(pinfo.realize->iter_values, pinfo.realize->predicate, nb)}};
  Stmt new_body = UpdateRootAllocs(ReplaceStmts(func_->body, repl), {}, buf);
  MarkRemovedLoops(*this, info, new_body, kPrim);
  ScheduleAccess::RemoveBlock(*this, name, kPrim);
  ScheduleAccess::Commit(*this, new_body, Instruction{kPrim, {RVRef{'b', block.id}}, {}, {}});
}

}  // namespace tessera::tir
