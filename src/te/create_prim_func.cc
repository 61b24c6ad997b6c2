// create_prim_func (te/tensor.h): TE graph -> TensorIR PrimFunc with one block per compute or extern.
#include <algorithm>
#include <set>

#include "tessera/arith/analyzer.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"

namespace tessera::te {

namespace {

using tir::BufferRegion;
using tir::Stmt;

// The BufferLoads of a block body, grouped by buffer in first-use order.
class LoadCollector : public tir::StmtExprVisitor {
 public:
  std::vector<std::pair<Buffer, std::vector<std::vector<PrimExpr>>>> loads;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op) override {
    auto it = std::find_if(loads.begin(), loads.end(), [&](const auto& p) { return p.first.same_as(op->buffer); });
    if (it == loads.end()) {
      loads.push_back({op->buffer, {}});
      it = std::prev(loads.end());
    }
    it->second.push_back(op->indices);
    tir::StmtExprVisitor::VisitExpr_(op);
  }
};

// A region covering every access: a point per dimension where all accesses agree,
// else the constant hull of the index's bounds (the whole dimension when unknown).
BufferRegion RegionOf(const Buffer& buf, const std::vector<std::vector<PrimExpr>>& accesses,
                      arith::Analyzer* an) {
  BufferRegion r;
  r.buffer = buf;
  for (int d = 0; d < buf.ndim(); ++d) {
    bool same = true;
    for (const auto& acc : accesses) same &= tir::StructuralEqual(acc[d], accesses[0][d]);
    DataType t = accesses[0][d].dtype();
    if (same) {
      r.region.emplace_back(accesses[0][d], ir::make_const(t, int64_t{1}));
      continue;
    }
    int64_t lo = arith::IntBound::kPosInf, hi = arith::IntBound::kNegInf;
    for (const auto& acc : accesses) {
      arith::IntBound b = an->ConstIntBound(acc[d]);
      lo = std::min(lo, b.min_value);
      hi = std::max(hi, b.max_value);
    }
    int64_t extent = 0;
    if (lo != arith::IntBound::kNegInf && hi != arith::IntBound::kPosInf && ir::as_const_int(buf->shape[d], &extent)) {
      lo = std::max<int64_t>(lo, 0);
      hi = std::min<int64_t>(hi, extent - 1);
      r.region.emplace_back(ir::make_const(t, lo), ir::make_const(t, hi - lo + 1));
    } else {
      r.region.emplace_back(ir::make_zero(buf->shape[d].dtype()), buf->shape[d]);
    }
  }
  return r;
}

Stmt LowerCompute(const Tensor& t) {
  const OperationNode* op = t.op();
  std::map<const ir::VarNode*, PrimExpr> to_block;
  std::vector<IterVar> block_ivs;
  std::vector<Var> loop_vars;
  std::vector<Range> loop_doms;
  arith::Analyzer an;
  auto add_axis = [&](const IterVar& iv) {
    Var bv("v" + iv.var->name_hint, iv.var.dtype());
    block_ivs.push_back(IterVar{bv, iv.dom, iv.iter_type});
    to_block[iv.var.get_var()] = bv;
    loop_vars.push_back(iv.var.copy_with_suffix(""));
    loop_doms.push_back(iv.dom);
    an.Bind(bv, iv.dom);
  };
  for (const auto& iv : op->axis) add_axis(iv);
  for (const auto& iv : op->reduce_axis) add_axis(iv);

  std::vector<PrimExpr> out_idx;
  for (size_t d = 0; d < op->axis.size(); ++d) out_idx.push_back(block_ivs[d].var);
  Stmt body, init;
  if (auto* r = op->body.as<ReduceNode>()) {
    PrimExpr src = tir::Substitute(r->source, to_block);
    PrimExpr cur = tir::BufferLoadNode::make(op->buffer, out_idx);
    body = tir::BufferStoreNode::make(op->buffer, ReduceNode::Combine(r->combiner, cur, src), out_idx);
    init = tir::BufferStoreNode::make(op->buffer, r->init, out_idx);
  } else {
    body = tir::BufferStoreNode::make(op->buffer, tir::Substitute(op->body, to_block), out_idx);
  }

  LoadCollector loads;
  loads.VisitStmt(body);
  std::vector<BufferRegion> reads;
  for (const auto& [buf, accesses] : loads.loads) reads.push_back(RegionOf(buf, accesses, &an));
  std::vector<BufferRegion> writes = {RegionOf(op->buffer, {out_idx}, &an)};

  Stmt block = tir::BlockNode::make(op->name, block_ivs, reads, writes, body, init, {},
                                    op->attrs);
  std::vector<PrimExpr> bindings(loop_vars.begin(), loop_vars.end());
  Stmt s = tir::BlockRealizeNode::make(bindings, PrimExpr(), block);
  for (size_t i = loop_vars.size(); i-- > 0;) {
    s = tir::ForNode::make(loop_vars[i], loop_doms[i].min, loop_doms[i].extent, tir::ForKind::kSerial, s);
  }
  return s;
}

// An extern stage: one block without iter vars around its statements, reading its inputs whole
// and writing its output whole; its scratch buffers are the block's.
Stmt LowerExtern(const Tensor& t) {
  const OperationNode* op = t.op();
  auto whole = [](const Buffer& b) {
    BufferRegion r;
    r.buffer = b;
    for (const PrimExpr& d : b->shape) r.region.emplace_back(ir::make_zero(d.dtype()), d);
    return r;
  };
  std::vector<BufferRegion> reads;
  for (const Tensor& in : op->inputs) reads.push_back(whole(in.buffer()));
  Stmt block = tir::BlockNode::make(op->name, {}, reads, {whole(op->buffer)}, op->extern_body, Stmt(), op->scratch,
                                    op->attrs);
  return tir::BlockRealizeNode::make({}, PrimExpr(), block);
}

}  // namespace

tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name) {
  std::set<const OperationNode*> in_args;
  for (const auto& t : args) {
    TESSERA_ICHECK(t.defined(), "create_prim_func '", name, "': undefined argument");
    TESSERA_ICHECK(in_args.insert(t.op()).second, "create_prim_func '", name, "': tensor ", t.name(),
                   " appears twice in args");
  }
  std::vector<Stmt> stages;
  std::vector<Buffer> allocs;
  for (const Tensor& t : PostOrder(args)) {
    if (t.op()->kind == OpKind::kPlaceholder) {
      TESSERA_ICHECK(in_args.count(t.op()), "create_prim_func '", name, "': placeholder ", t.name(),
                     " is read but missing from args");
      continue;
    }
    if (!in_args.count(t.op())) allocs.push_back(t.buffer());
    stages.push_back(t.op()->kind == OpKind::kExtern ? LowerExtern(t) : LowerCompute(t));
  }
  TESSERA_ICHECK(!stages.empty(), "create_prim_func '", name, "': nothing to compute");
  Stmt root = tir::BlockNode::make("root", {}, {}, {}, tir::SeqStmtNode::make(stages), Stmt(), allocs);
  std::vector<Buffer> params;
  std::vector<Var> shape_vars;
  std::set<const ir::VarNode*> seen;
  for (const auto& t : args) {
    params.push_back(t.buffer());
    for (const PrimExpr& d : t.shape()) {
      if (d.as<ir::IntImmNode>()) continue;
      if (auto* v = d.as<ir::VarNode>()) {
        if (seen.insert(v).second) shape_vars.push_back(ir::Var(std::static_pointer_cast<const ir::VarNode>(d.node())));
        continue;
      }
      TESSERA_THROW(UnsupportedError, "create_prim_func '", name, "': dimension ", tir::AsText(d), " of tensor ",
                    t.name(), " is an expression; a symbolic dimension of a parameter must be a single variable");
    }
  }
  return tir::PrimFunc::make(name, params, tir::BlockRealizeNode::make({}, PrimExpr(), root),
                             {{"global_symbol", name}}, shape_vars);
}

}  // namespace tessera::te
