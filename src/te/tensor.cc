// Tensors, placeholder / compute and the reductions (te/tensor.h).
#include <functional>
#include <mutex>
#include <set>

#include "tessera/te/tensor.h"
#include "tessera/tir/functor.h"
#include "tessera/te/tensor_registry.h"

namespace tessera::te {

namespace {

std::mutex g_mu;
std::map<const tir::BufferNode*, std::weak_ptr<const OperationNode>>& Registry() {
  static std::map<const tir::BufferNode*, std::weak_ptr<const OperationNode>> r;
  return r;
}

void Register(const std::shared_ptr<const OperationNode>& op) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& r = Registry();
  for (auto it = r.begin(); it != r.end();) it = it->second.expired() ? r.erase(it) : std::next(it);
  r[op->buffer.get()] = op;
}

// Collects the tensors a compute body reads and rejects nested reductions.
class BodyInspector : public tir::StmtExprVisitor {
 public:
  std::vector<Tensor> inputs;
  const tir::BufferNode* self = nullptr;   // a scan's own buffer: read, but not an input
  const ir::PrimExprNode* top = nullptr;  // the compute body: the only place a reduction may be
  const std::string* name = nullptr;

 protected:
  void VisitExprExtension_(const PrimExpr& e) override {
    if (auto* r = e.as<ReduceNode>()) {
      TESSERA_CHECK(e.get() == top, "compute '", *name,
                    "': a reduction (sum / max / min / prod) may only be the whole body of a compute");
      VisitExpr(r->source);
      return;
    }
    tir::StmtExprVisitor::VisitExprExtension_(e);
  }
  void VisitExpr_(const tir::BufferLoadNode* op) override {
    if (op->buffer.get() == self) {
      tir::StmtExprVisitor::VisitExpr_(op);
      return;
    }
    Tensor t = TensorOfBuffer(op->buffer);
    TESSERA_ICHECK(t.defined(), "compute '", *name, "' reads buffer ", op->buffer->name,
                   " that is not the buffer of a tensor");
    bool seen = false;
    for (const auto& x : inputs) seen |= x.same_as(t);
    if (!seen) inputs.push_back(t);
    tir::StmtExprVisitor::VisitExpr_(op);
  }
};

std::string AxisName(size_t d) {
  static const char* names[] = {"i", "j", "k", "l", "m", "n"};
  return d < 6 ? names[d] : "ax" + std::to_string(d);
}

PrimExpr MakeReduce(ReduceNode::Combiner c, PrimExpr source, std::vector<IterVar> axis) {
  TESSERA_ICHECK(source.defined(), "reduction of an undefined expression");
  TESSERA_CHECK(!axis.empty(), "a reduction needs at least one reduce_axis");
  for (const auto& iv : axis) {
    TESSERA_CHECK(iv.iter_type == tir::IterVarType::kCommReduce, "reduction over '", iv.var->name_hint,
                  "', which is not a reduce_axis");
  }
  DataType t = source.dtype();
  PrimExpr init;
  switch (c) {
    case ReduceNode::Combiner::kSum: init = ir::make_zero(t); break;
    case ReduceNode::Combiner::kProd: init = ir::make_const(t, int64_t{1}); break;
    case ReduceNode::Combiner::kMax: init = ir::min_value(t); break;
    case ReduceNode::Combiner::kMin: init = ir::max_value(t); break;
  }
  return PrimExpr(std::make_shared<const ReduceNode>(t, c, std::move(source), std::move(axis), init));
}

}  // namespace

Tensor TensorOfBuffer(const Buffer& buffer) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = Registry().find(buffer.get());
  if (it == Registry().end()) return Tensor();
  return Tensor(it->second.lock());
}

const std::vector<PrimExpr>& Tensor::shape() const { return op_->buffer->shape; }
DataType Tensor::dtype() const { return op_->buffer->dtype; }
const std::string& Tensor::name() const { return op_->name; }
const Buffer& Tensor::buffer() const { return op_->buffer; }

PrimExpr Tensor::operator()(const std::vector<PrimExpr>& indices) const {
  TESSERA_ICHECK(defined(), "reading an undefined tensor");
  TESSERA_CHECK(static_cast<int>(indices.size()) == ndim(), "tensor ", name(), " has ", ndim(),
                " dimensions but is indexed with ", indices.size(), " indices");
  return tir::BufferLoadNode::make(op_->buffer, indices);
}

PrimExpr Tensor::operator()(const std::vector<Var>& indices) const {
  return (*this)(std::vector<PrimExpr>(indices.begin(), indices.end()));
}

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name) {
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::kPlaceholder;
  op->name = name;
  op->buffer = Buffer::make(std::move(name), dtype, std::move(shape));
  std::shared_ptr<const OperationNode> c = op;
  Register(c);
  return Tensor(c);
}

namespace {

// A compute's node with one iter var per dim (`ordered`: the scan axis, or -1).
std::shared_ptr<OperationNode> NewCompute(const std::vector<PrimExpr>& shape, std::string name, std::string tag,
                                          std::map<std::string, PrimExpr> attrs, int ordered, std::vector<Var>* vars) {
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::kCompute;
  op->name = std::move(name);
  op->tag = std::move(tag);
  op->attrs = std::move(attrs);
  for (size_t d = 0; d < shape.size(); ++d) {
    Var v(AxisName(d), shape[d].dtype());
    vars->push_back(v);
    const auto type = static_cast<int>(d) == ordered ? tir::IterVarType::kOrdered : tir::IterVarType::kDataPar;
    op->axis.push_back(IterVar{v, Range(ir::make_zero(shape[d].dtype()), shape[d]), type});
  }
  return op;
}

// Checks the body and collects the tensors it reads (a scan's own buffer excluded).
void InspectBody(OperationNode* op) {
  TESSERA_CHECK(op->body.defined(), "compute '", op->name, "' returned an undefined expression");
  if (auto* r = op->body.as<ReduceNode>()) op->reduce_axis = r->axis;
  BodyInspector inspect;
  inspect.name = &op->name;
  inspect.top = op->body.get();
  inspect.self = op->buffer.get();
  inspect.VisitExpr(op->body);
  op->inputs = std::move(inspect.inputs);
}

}  // namespace

Tensor compute(std::vector<PrimExpr> shape, const FCompute& fcompute, std::string name, std::string tag,
               std::map<std::string, PrimExpr> attrs) {
  TESSERA_ICHECK(fcompute != nullptr, "compute '", name, "' without a body function");
  std::vector<Var> vars;
  std::shared_ptr<OperationNode> op = NewCompute(shape, name, std::move(tag), std::move(attrs), -1, &vars);
  op->body = fcompute(vars);
  InspectBody(op.get());
  op->buffer = Buffer::make(std::move(name), op->body.dtype(), std::move(shape));
  std::shared_ptr<const OperationNode> c = op;
  Register(c);
  return Tensor(c);
}

namespace {

// The buffers an extern body touches must be its inputs', its output's, its scratch buffers or ones
// it allocates itself.
class ExternBufferCheck : public tir::StmtExprVisitor {
 public:
  std::set<const tir::BufferNode*> allowed;
  std::string name;

 protected:
  void Check(const tir::Buffer& b) {
    TESSERA_CHECK(allowed.count(b.get()), "extern '", name, "' touches buffer '", b->name,
                  "', which is neither an input's, the output's nor a scratch buffer");
  }
  void VisitExpr_(const tir::BufferLoadNode* op) override {
    Check(op->buffer);
    tir::StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const tir::BufferStoreNode* op) override {
    Check(op->buffer);
    tir::StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const tir::AllocateNode* op) override {
    allowed.insert(op->buffer.get());  // the body's own local state
    tir::StmtExprVisitor::VisitStmt_(op);
  }
};

}  // namespace

Tensor extern_op(std::vector<PrimExpr> shape, DataType dtype, std::vector<Tensor> inputs, const FExtern& fbody,
                 std::string name, std::string tag, std::vector<Buffer> scratch) {
  TESSERA_ICHECK(fbody != nullptr, "extern '", name, "' without a body function");
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::kExtern;
  op->name = name;
  op->tag = std::move(tag);
  op->buffer = Buffer::make(name, dtype, std::move(shape));
  std::vector<Buffer> in_buffers;
  ExternBufferCheck check;
  check.name = name;
  for (const Tensor& t : inputs) {
    TESSERA_ICHECK(t.defined(), "extern '", name, "': an undefined input");
    in_buffers.push_back(t.buffer());
    check.allowed.insert(t.buffer().get());
  }
  check.allowed.insert(op->buffer.get());
  for (const Buffer& b : scratch) check.allowed.insert(b.get());
  op->extern_body = fbody(in_buffers, op->buffer);
  TESSERA_CHECK(op->extern_body.defined(), "extern '", name, "' returned no statement");
  check.VisitStmt(op->extern_body);
  op->inputs = std::move(inputs);
  op->scratch = std::move(scratch);
  std::shared_ptr<const OperationNode> c = op;
  Register(c);
  return Tensor(c);
}

Tensor scan(std::vector<PrimExpr> shape, DataType dtype, int axis, const FScan& fscan, std::string name, std::string tag,
            std::map<std::string, PrimExpr> attrs) {
  TESSERA_ICHECK(fscan != nullptr, "scan '", name, "' without a body function");
  TESSERA_CHECK(axis >= 0 && axis < static_cast<int>(shape.size()), "scan '", name, "': axis ", axis,
                " is out of range for ", shape.size(), " dimensions");
  std::vector<Var> vars;
  std::shared_ptr<OperationNode> op = NewCompute(shape, name, std::move(tag), std::move(attrs), axis, &vars);
  op->buffer = Buffer::make(name, dtype, std::move(shape));  // before the body: the body reads it
  op->body = fscan(vars, Tensor(op));
  TESSERA_CHECK(op->body.defined() && op->body.dtype() == dtype, "scan '", name, "': the body has dtype ",
                op->body.defined() ? op->body.dtype().str() : "(undefined)", ", not ", dtype.str());
  InspectBody(op.get());
  std::shared_ptr<const OperationNode> c = op;
  Register(c);
  return Tensor(c);
}

IterVar reduce_axis(Range dom, std::string name) {
  TESSERA_ICHECK(dom.min.defined() && dom.extent.defined(), "reduce_axis '", name, "' without a domain");
  Var v(std::move(name), dom.extent.dtype());
  return IterVar{v, std::move(dom), tir::IterVarType::kCommReduce};
}

PrimExpr ReduceNode::Combine(Combiner c, PrimExpr lhs, PrimExpr rhs) {
  switch (c) {
    case Combiner::kSum: return lhs + rhs;
    case Combiner::kProd: return lhs * rhs;
    case Combiner::kMax: return ir::max(lhs, rhs);
    case Combiner::kMin: return ir::min(lhs, rhs);
  }
  return PrimExpr();
}

PrimExpr sum(PrimExpr source, std::vector<IterVar> axis) {
  return MakeReduce(ReduceNode::Combiner::kSum, std::move(source), std::move(axis));
}
PrimExpr max(PrimExpr source, std::vector<IterVar> axis) {
  return MakeReduce(ReduceNode::Combiner::kMax, std::move(source), std::move(axis));
}
PrimExpr min(PrimExpr source, std::vector<IterVar> axis) {
  return MakeReduce(ReduceNode::Combiner::kMin, std::move(source), std::move(axis));
}
PrimExpr prod(PrimExpr source, std::vector<IterVar> axis) {
  return MakeReduce(ReduceNode::Combiner::kProd, std::move(source), std::move(axis));
}

std::vector<Tensor> PostOrder(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> order;
  std::set<const OperationNode*> visited;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (!visited.insert(t.op()).second) return;
    for (const auto& in : t.op()->inputs) visit(in);
    order.push_back(t);
  };
  for (const auto& t : outputs) {
    TESSERA_ICHECK(t.defined(), "PostOrder of an undefined tensor");
    visit(t);
  }
  return order;
}

}  // namespace tessera::te
