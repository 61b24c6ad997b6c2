// CompactBufferAllocation (tir/transform/compact_buffer_allocation.h).
#include "tessera/tir/transform/compact_buffer_allocation.h"

#include <algorithm>
#include <optional>

#include "../schedule/utils.h"

namespace tessera::tir::transform {

using namespace sched;  // NOLINT
using ir::make_const;

namespace {

/// One block's access to the buffer: its loop path and its regions mapped to loop vars.
struct Access {
  const BlockInfo* info;
  std::vector<Range> region;  ///< in loop variables
};

/// The compacted form of one buffer: its new buffer, per-dimension offsets, where it lives.
struct Plan {
  Buffer old_buffer, new_buffer;
  std::vector<PrimExpr> offsets;
  const ForNode* loop = nullptr;  ///< the allocation goes around this loop's body
};

PrimExpr ToLoopVars(const BlockInfo& info, const PrimExpr& e) {
  std::map<const VarNode*, PrimExpr> vmap;
  for (size_t i = 0; i < info.block->iter_vars.size(); ++i)
    vmap[info.block->iter_vars[i].var.get_var()] = info.realize->iter_values[i];
  return Substitute(e, vmap);
}

std::optional<Plan> PlanBuffer(const Buffer& buf, const BlockNode* root, const std::vector<BlockInfo>& blocks) {
  // -1: a symbolic extent (dynamic shapes). Such a dimension is compacted only to a constant
  // extent, and the buffer only when every dimension ends up constant (a stack slot per
  // iteration, not a heap allocation per iteration).
  std::vector<int64_t> shape;
  bool symbolic = false;
  for (const PrimExpr& d : buf->shape) {
    int64_t v;
    if (!ir::as_const_int(d, &v)) {
      v = -1;
      symbolic = true;
    }
    shape.push_back(v);
  }
  std::vector<Access> accesses;
  for (const BlockInfo& info : blocks) {
    if (info.scope == nullptr) continue;  // the root block itself
    for (const auto* regions : {&info.block->reads, &info.block->writes}) {
      for (const BufferRegion& r : *regions) {
        if (!r.buffer.same_as(buf)) continue;
        if (info.scope != root) return std::nullopt;  // blocks nested in other blocks are left alone
        Access a{&info, {}};
        for (const Range& rg : r.region) a.region.emplace_back(ToLoopVars(info, rg.min), ToLoopVars(info, rg.extent));
        accesses.push_back(std::move(a));
      }
    }
  }
  if (accesses.empty()) return std::nullopt;

  // L: the innermost loop on every access's path.
  size_t depth = accesses[0].info->loops.size();
  for (const Access& a : accesses) {
    size_t k = 0;
    while (k < depth && k < a.info->loops.size() && a.info->loops[k] == accesses[0].info->loops[k]) ++k;
    depth = k;
  }
  if (depth == 0) return std::nullopt;
  const std::vector<const ForNode*>& path = accesses[0].info->loops;
  for (const Access& a : accesses) {
    std::set<const VarNode*> red = ReductionLoopVars(a.info->realize);
    for (size_t k = 0; k < depth; ++k)
      if (red.count(path[k]->loop_var.get_var())) return std::nullopt;
  }

  Plan plan;
  plan.old_buffer = buf;
  plan.loop = path[depth - 1];
  std::vector<PrimExpr> new_shape;
  int64_t old_size = 1, new_size = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0) old_size *= shape[d];
    std::optional<Bound> u;
    bool failed = false;
    for (const Access& a : accesses) {
      std::map<const VarNode*, Range> relax;
      for (size_t k = depth; k < a.info->loops.size(); ++k)
        relax[a.info->loops[k]->loop_var.get_var()] = Range(a.info->loops[k]->min, a.info->loops[k]->extent);
      const Range& rg = a.region[d];
      Bound b = EvalBound(rg.min, relax);
      int64_t ext;
      if (!b.ok || !ir::as_const_int(Simplify(rg.extent), &ext)) {
        failed = true;
        break;
      }
      b.hi = Simplify(b.hi + make_const(b.hi.dtype(), ext - 1));
      if (!u) {
        u = b;
        continue;
      }
      int64_t dlo, dhi;
      if (!ConstDiff(b.lo, u->lo, &dlo) || !ConstDiff(b.hi, u->hi, &dhi)) {
        failed = true;
        break;
      }
      if (dlo < 0) u->lo = b.lo;
      if (dhi > 0) u->hi = b.hi;
    }
    int64_t extent = 0;
    if (!failed && ConstDiff(u->hi, u->lo, &extent) && (shape[d] < 0 || extent + 1 < shape[d])) {
      plan.offsets.push_back(Simplify(u->lo));
      new_shape.push_back(make_const(buf->shape[d].dtype(), extent + 1));
      new_size *= extent + 1;
    } else if (shape[d] < 0) {
      return std::nullopt;  // a symbolic dimension left whole: keep the buffer as it is
    } else {
      plan.offsets.push_back(make_const(buf->shape[d].dtype(), 0));
      new_shape.push_back(buf->shape[d]);
      new_size *= shape[d];
    }
  }
  if (!symbolic && new_size >= old_size) return std::nullopt;
  auto n = std::make_shared<BufferNode>(*buf.get());
  n->shape = std::move(new_shape);
  n->strides.clear();
  n->scope = "local";
  plan.new_buffer = Buffer(std::move(n));
  return plan;
}

/// Rewrites the accesses of the planned buffers (index - offset) and wraps each plan's loop
/// body in an opaque block that allocates the compacted buffer.
class Compactor : public StmtExprMutator {
 public:
  explicit Compactor(const std::vector<Plan>& plans) {
    for (const Plan& p : plans) {
      by_buffer_[p.old_buffer.get()] = &p;
      by_loop_[p.loop].push_back(&p);
    }
  }

 protected:
  std::vector<PrimExpr> Shift(const Plan& p, const std::vector<PrimExpr>& indices) {
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < indices.size(); ++d)
      out.push_back(ir::is_zero(p.offsets[d]) ? indices[d] : Simplify(indices[d] - p.offsets[d]));
    return out;
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr v = StmtExprMutator::VisitExpr_(op, e);
    auto* l = v.as<BufferLoadNode>();
    auto it = by_buffer_.find(l->buffer.get());
    if (it == by_buffer_.end()) return v;
    return BufferLoadNode::make(it->second->new_buffer, Shift(*it->second, l->indices));
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    Stmt v = StmtExprMutator::VisitStmt_(op, s);
    auto* st = v.as<BufferStoreNode>();
    auto it = by_buffer_.find(st->buffer.get());
    if (it == by_buffer_.end()) return v;
    return BufferStoreNode::make(it->second->new_buffer, st->value, Shift(*it->second, st->indices));
  }
  Stmt VisitStmt_(const BlockNode* op, const Stmt& s) override {
    Stmt v = StmtExprMutator::VisitStmt_(op, s);
    auto* b = v.as<BlockNode>();
    auto regions = [&](std::vector<BufferRegion> rs) {
      for (BufferRegion& r : rs) {
        auto it = by_buffer_.find(r.buffer.get());
        if (it == by_buffer_.end()) continue;
        for (size_t d = 0; d < r.region.size(); ++d)
          r.region[d] = Range(Simplify(r.region[d].min - it->second->offsets[d]), r.region[d].extent);
        r.buffer = it->second->new_buffer;
      }
      return rs;
    };
    std::vector<Buffer> allocs;
    for (const Buffer& a : b->alloc_buffers)
      if (!by_buffer_.count(a.get())) allocs.push_back(a);
    return BlockNode::make(b->name_hint, b->iter_vars, regions(b->reads), regions(b->writes), b->body, b->init,
                           std::move(allocs), b->annotations);
  }
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Stmt v = StmtExprMutator::VisitStmt_(op, s);
    auto it = by_loop_.find(op);
    if (it == by_loop_.end()) return v;
    auto* f = v.as<ForNode>();
    std::vector<Buffer> allocs;
    std::string name;
    for (const Plan* p : it->second) {
      allocs.push_back(p->new_buffer);
      name += (name.empty() ? "" : "_") + p->new_buffer->name;
    }
    Stmt block = BlockNode::make("compact_" + name, {}, {}, {}, f->body, Stmt(), std::move(allocs));
    Stmt realize = BlockRealizeNode::make({}, make_const(DataType::Bool(), 1), block);
    return ForNode::make(f->loop_var, f->min, f->extent, f->for_kind, realize, f->annotations);
  }

 private:
  std::map<const BufferNode*, const Plan*> by_buffer_;
  std::map<const ForNode*, std::vector<const Plan*>> by_loop_;
};

}  // namespace

PrimFunc CompactBufferAllocation(const PrimFunc& func) {
  auto* root_realize = func->body.as<BlockRealizeNode>();
  if (!root_realize) return func;
  const BlockNode* root = root_realize->block_node();
  std::vector<BlockInfo> blocks = CollectBlocks(func->body);
  std::vector<Plan> plans;
  for (const Buffer& buf : root->alloc_buffers)
    if (std::optional<Plan> p = PlanBuffer(buf, root, blocks)) plans.push_back(std::move(*p));
  if (plans.empty()) return func;
  return func.WithBody(Compactor(plans).VisitStmt(func->body));
}

}  // namespace tessera::tir::transform
