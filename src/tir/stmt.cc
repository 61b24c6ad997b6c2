// Statement constructors (tir/stmt.h) with their argument checks.
#include "tessera/tir/stmt.h"

#include "tessera/support/error.h"

namespace tessera::tir {

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
  }
  return "unknown";
}

Stmt BufferStoreNode::make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  TESSERA_ICHECK(buffer.defined() && value.defined(), "BufferStore: undefined buffer or value");
  TESSERA_ICHECK(static_cast<int>(indices.size()) == buffer.ndim() || indices.size() == 1,
                 "BufferStore ", buffer->name, ": ", indices.size(), " indices for a ", buffer.ndim(),
                 "-d buffer");
  int lanes = 1;
  for (const auto& i : indices) {
    TESSERA_ICHECK(i.defined() && (i.dtype().is_int() || i.dtype().is_uint()),
                   "BufferStore ", buffer->name, ": indices must be integers");
    if (i.dtype().lanes() > 1) lanes = i.dtype().lanes();
  }
  TESSERA_ICHECK(value.dtype() == buffer->dtype.with_lanes(lanes), "BufferStore ", buffer->name,
                 ": value dtype ", value.dtype().str(), " does not match ",
                 buffer->dtype.with_lanes(lanes).str());
  return Stmt(std::make_shared<const BufferStoreNode>(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt ForNode::make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
                   std::map<std::string, PrimExpr> annotations) {
  TESSERA_ICHECK(loop_var.defined() && min.defined() && extent.defined() && body.defined(),
                 "For: undefined operand");
  TESSERA_ICHECK(loop_var.dtype().is_int() && loop_var.dtype().is_scalar(), "For ",
                 loop_var->name_hint, ": loop variable must be a scalar int");
  TESSERA_ICHECK(min.dtype() == loop_var.dtype() && extent.dtype() == loop_var.dtype(), "For ",
                 loop_var->name_hint, ": min / extent dtype must equal the loop variable's (",
                 loop_var.dtype().str(), ")");
  return Stmt(std::make_shared<const ForNode>(std::move(loop_var), std::move(min), std::move(extent),
                                              kind, std::move(body), std::move(annotations)));
}

Stmt SeqStmtNode::make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (auto& s : seq) {
    TESSERA_ICHECK(s.defined(), "SeqStmt: undefined statement");
    if (auto* inner = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<const SeqStmtNode>(std::move(flat)));
}

Stmt IfThenElseNode::make(PrimExpr condition, Stmt then_case, Stmt else_case) {
  TESSERA_ICHECK(condition.defined() && then_case.defined(), "IfThenElse: undefined operand");
  TESSERA_ICHECK(condition.dtype() == DataType::Bool(), "IfThenElse condition must be a scalar bool, got ",
                 condition.dtype().str());
  return Stmt(std::make_shared<const IfThenElseNode>(std::move(condition), std::move(then_case),
                                                     std::move(else_case)));
}

Stmt LetStmtNode::make(Var var, PrimExpr value, Stmt body) {
  TESSERA_ICHECK(var.defined() && value.defined() && body.defined(), "LetStmt: undefined operand");
  TESSERA_ICHECK(var.dtype() == value.dtype(), "LetStmt ", var->name_hint, ": value dtype ",
                 value.dtype().str(), " differs from ", var.dtype().str());
  return Stmt(std::make_shared<const LetStmtNode>(std::move(var), std::move(value), std::move(body)));
}

Stmt EvaluateNode::make(PrimExpr value) {
  TESSERA_ICHECK(value.defined(), "Evaluate: undefined value");
  return Stmt(std::make_shared<const EvaluateNode>(std::move(value)));
}

Stmt AllocateNode::make(Buffer buffer, Stmt body) {
  TESSERA_ICHECK(buffer.defined() && body.defined(), "Allocate: undefined operand");
  return Stmt(std::make_shared<const AllocateNode>(std::move(buffer), std::move(body)));
}

Stmt BlockNode::make(std::string name_hint, std::vector<IterVar> iter_vars,
                     std::vector<BufferRegion> reads, std::vector<BufferRegion> writes, Stmt body,
                     Stmt init, std::vector<Buffer> alloc_buffers,
                     std::map<std::string, PrimExpr> annotations) {
  TESSERA_ICHECK(body.defined(), "Block ", name_hint, ": undefined body");
  for (const auto& iv : iter_vars) {
    TESSERA_ICHECK(iv.var.defined() && iv.dom.min.defined() && iv.dom.extent.defined(), "Block ",
                   name_hint, ": iter var without a domain");
  }
  for (const auto* regions : {&reads, &writes}) {
    for (const auto& r : *regions) {
      TESSERA_ICHECK(r.buffer.defined() && static_cast<int>(r.region.size()) == r.buffer.ndim(),
                     "Block ", name_hint, ": a read / write region does not match its buffer's rank");
    }
  }
  auto n = std::make_shared<BlockNode>();
  n->name_hint = std::move(name_hint);
  n->iter_vars = std::move(iter_vars);
  n->reads = std::move(reads);
  n->writes = std::move(writes);
  n->body = std::move(body);
  n->init = std::move(init);
  n->alloc_buffers = std::move(alloc_buffers);
  n->annotations = std::move(annotations);
  return Stmt(std::shared_ptr<const BlockNode>(std::move(n)));
}

Stmt BlockRealizeNode::make(std::vector<PrimExpr> iter_values, PrimExpr predicate, Stmt block) {
  TESSERA_ICHECK(block.defined() && block.as<BlockNode>(), "BlockRealize needs a Block");
  const auto* b = block.as<BlockNode>();
  TESSERA_ICHECK(iter_values.size() == b->iter_vars.size(), "BlockRealize of ", b->name_hint, ": ",
                 iter_values.size(), " iter values for ", b->iter_vars.size(), " iter vars");
  if (!predicate.defined()) predicate = ir::IntImmNode::make(DataType::Bool(), 1);
  TESSERA_ICHECK(predicate.dtype() == DataType::Bool(), "BlockRealize predicate must be bool");
  return Stmt(std::make_shared<const BlockRealizeNode>(std::move(iter_values), std::move(predicate),
                                                       std::move(block)));
}

}  // namespace tessera::tir
