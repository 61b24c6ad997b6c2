// cache_read and cache_write (TensorIR §3.3): stage a buffer through a copy in another
// storage scope. The copy covers the whole buffer and sits just before (cache_read) or
// just after (cache_write) the loop nest of the block, at the top level of its scope.
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::make_const;

namespace {
void CheckScope(const char* prim, const std::string& scope) {
  if (scope != "global" && scope != "local" && scope != "shared") {
    TESSERA_THROW(ScheduleError, prim, ": storage scope '", scope, "' is not one of \"global\", \"local\", \"shared\"");
  }
}

/// A block `name` copying src to dst elementwise over the whole shape, under its own loops.
Stmt CopyNest(const std::string& name, const Buffer& src, const Buffer& dst) {
  std::vector<IterVar> ivs;
  std::vector<PrimExpr> idx, bindings;
  std::vector<Var> loops;
  std::vector<Range> point;
  for (int d = 0; d < src.ndim(); ++d) {
    DataType t = src->shape[d].dtype();
    Var v("v" + std::to_string(d), t);
    ivs.push_back(IterVar{v, Range(make_const(t, 0), src->shape[d]), IterVarType::kDataPar});
    idx.push_back(v);
    loops.emplace_back("ax" + std::to_string(d), t);
    bindings.push_back(loops.back());
    point.emplace_back(v, make_const(t, 1));
  }
  Stmt store = BufferStoreNode::make(dst, BufferLoadNode::make(src, idx), idx);
  Stmt block = BlockNode::make(name, ivs, {BufferRegion{src, point}}, {BufferRegion{dst, point}}, store);
  Stmt body = BlockRealizeNode::make(bindings, PrimExpr(), block);
  for (int d = src.ndim() - 1; d >= 0; --d) {
    body = ForNode::make(loops[d], make_const(loops[d].dtype(), 0), src->shape[d], ForKind::kSerial, body);
  }
  return body;
}

/// Rewrites every access (load, store, region) of `from` to `to`.
class BufferSwap : public StmtExprMutator {
 public:
  BufferSwap(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}
  std::vector<BufferRegion> Regions(std::vector<BufferRegion> rs) const {
    for (auto& r : rs) {
      if (r.buffer.same_as(from_)) r.buffer = to_;
    }
    return rs;
  }

 protected:
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr n = StmtExprMutator::VisitExpr_(op, e);
    auto* l = n.as<BufferLoadNode>();
    return l->buffer.same_as(from_) ? BufferLoadNode::make(to_, l->indices) : n;
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    Stmt n = StmtExprMutator::VisitStmt_(op, s);
    auto* st = n.as<BufferStoreNode>();
    return st->buffer.same_as(from_) ? BufferStoreNode::make(to_, st->value, st->indices) : n;
  }

 private:
  Buffer from_, to_;
};

/// The top-level statement of the root block's body that contains `node`, and the root body.
size_t TopIndex(const Stmt& root_body, const StmtNode* node) {
  if (auto* seq = root_body.as<SeqStmtNode>()) {
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      if (Contains(seq->seq[i], node)) return i;
    }
  }
  return 0;
}

std::vector<Stmt> TopLevel(const Stmt& root_body) {
  if (auto* seq = root_body.as<SeqStmtNode>()) return seq->seq;
  return {root_body};
}

/// Rebuilds the root realize with a new body and one more allocated buffer.
Stmt RebuildRoot(const BlockRealizeNode* realize, const Stmt& body, const Buffer& alloc) {
  const BlockNode* r = realize->block_node();
  auto allocs = r->alloc_buffers;
  allocs.push_back(alloc);
  Stmt blk = BlockNode::make(r->name_hint, r->iter_vars, r->reads, r->writes, body, r->init, allocs, r->annotations);
  return BlockRealizeNode::make(realize->iter_values, realize->predicate, blk);
}

Buffer CacheBuffer(const Buffer& b, const std::string& scope) {
  return Buffer::make(b->name + "_" + scope, b->dtype, b->shape, scope);
}
}  // namespace

BlockRV Schedule::cache_read(const BlockRV& block, int read_buffer_index, const std::string& scope) {
  static const char* kPrim = "cache_read";
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  const BlockNode* b = info.block;
  if (read_buffer_index < 0 || read_buffer_index >= static_cast<int>(b->reads.size())) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' reads ", b->reads.size(),
                  " buffers; read_buffer_index ", read_buffer_index, " is out of range");
  }
  CheckScope(kPrim, scope);
  if (info.scope != func_->body.as<BlockRealizeNode>()->block_node()) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' is not directly under the root block");
  }
  const Buffer src = b->reads[read_buffer_index].buffer;
  const auto* root_realize = func_->body.as<BlockRealizeNode>();
  const Stmt& root_body = root_realize->block_node()->body;
  std::vector<Stmt> top = TopLevel(root_body);
  size_t ti = TopIndex(root_body, info.realize);
  for (const BlockRealizeNode* r : BlocksUnder(top[ti])) {
    if (r != info.realize && WritesBuffer(r->block_node(), src)) {
      TESSERA_THROW(ScheduleError, kPrim, ": buffer '", src->name, "' is produced by block '", r->block_node()->name_hint,
                    "' inside the same loop nest as block '", b->name_hint, "'; call cache_read before compute_at");
    }
  }
  if (WritesBuffer(b, src)) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' also writes '", src->name,
                  "'; use cache_write for a buffer the block updates");
  }
  Buffer dst = CacheBuffer(src, scope);
  std::string name = ScheduleAccess::FreshBlockName(*this, dst->name);
  BufferSwap swap(src, dst);
  Stmt nb = BlockNode::make(b->name_hint, b->iter_vars, swap.Regions(b->reads), b->writes, swap.VisitStmt(b->body),
                            b->init.defined() ? swap.VisitStmt(b->init) : Stmt(), b->alloc_buffers, b->annotations);
  top[ti] = ReplaceStmts(top[ti], {{info.realize, BlockRealizeNode::make(info.realize->iter_values, info.realize->predicate, nb)}});
  top.insert(top.begin() + static_cast<long>(ti), CopyNest(name, src, dst));
  Stmt new_body = RebuildRoot(root_realize, SeqStmtNode::make(top), dst);
  BlockRV out = NewBlockRV(name);
  ScheduleAccess::Commit(*this, new_body,
                         Instruction{kPrim, {RVRef{'b', block.id}},
                                     {{"read_buffer_index", int64_t{read_buffer_index}}, {"storage_scope", scope}},
                                     {RVRef{'b', out.id}}});
  return out;
}

BlockRV Schedule::cache_write(const BlockRV& block, int write_buffer_index, const std::string& scope) {
  static const char* kPrim = "cache_write";
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  const BlockNode* b = info.block;
  if (write_buffer_index < 0 || write_buffer_index >= static_cast<int>(b->writes.size())) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' writes ", b->writes.size(),
                  " buffers; write_buffer_index ", write_buffer_index, " is out of range");
  }
  CheckScope(kPrim, scope);
  if (info.scope != func_->body.as<BlockRealizeNode>()->block_node()) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' is not directly under the root block");
  }
  const Buffer buf = b->writes[write_buffer_index].buffer;
  // The block must write the whole buffer: its stores are indexed by iter vars spanning each dimension.
  for (const auto* st : CollectStores(b->body)) {
    if (!st->buffer.same_as(buf)) continue;
    for (int d = 0; d < buf.ndim(); ++d) {
      bool ok = false;
      for (const auto& iv : b->iter_vars) {
        int64_t diff;
        if (st->indices[d].same_as(iv.var) && ir::is_zero(iv.dom.min) && ConstDiff(iv.dom.extent, buf->shape[d], &diff) &&
            diff == 0) {
          ok = true;
        }
      }
      if (!ok) {
        TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' does not write the whole of '", buf->name,
                      "' (dimension ", d, " is not indexed by an iter var over its full extent); the copy back would clobber it");
      }
    }
  }
  const auto* root_realize = func_->body.as<BlockRealizeNode>();
  const Stmt& root_body = root_realize->block_node()->body;
  std::vector<Stmt> top = TopLevel(root_body);
  size_t ti = TopIndex(root_body, info.realize);
  for (const BlockRealizeNode* r : BlocksUnder(top[ti])) {
    if (r != info.realize && (WritesBuffer(r->block_node(), buf) || ReadsBuffer(r->block_node(), buf))) {
      TESSERA_THROW(ScheduleError, kPrim, ": block '", r->block_node()->name_hint, "' in the same loop nest as block '",
                    b->name_hint, "' accesses '", buf->name,
                    "'; call cache_write before compute_at / reverse_compute_at");
    }
  }
  Buffer dst = CacheBuffer(buf, scope);
  std::string name = ScheduleAccess::FreshBlockName(*this, dst->name);
  BufferSwap swap(buf, dst);
  Stmt nb = BlockNode::make(b->name_hint, b->iter_vars, swap.Regions(b->reads), swap.Regions(b->writes),
                            swap.VisitStmt(b->body), b->init.defined() ? swap.VisitStmt(b->init) : Stmt(),
                            b->alloc_buffers, b->annotations);
  top[ti] = ReplaceStmts(top[ti], {{info.realize, BlockRealizeNode::make(info.realize->iter_values, info.realize->predicate, nb)}});
  top.insert(top.begin() + static_cast<long>(ti) + 1, CopyNest(name, dst, buf));
  Stmt new_body = RebuildRoot(root_realize, SeqStmtNode::make(top), dst);
  BlockRV out = NewBlockRV(name);
  ScheduleAccess::Commit(*this, new_body,
                         Instruction{kPrim, {RVRef{'b', block.id}},
                                     {{"write_buffer_index", int64_t{write_buffer_index}}, {"storage_scope", scope}},
                                     {RVRef{'b', out.id}}});
  return out;
}

}  // namespace tessera::tir
