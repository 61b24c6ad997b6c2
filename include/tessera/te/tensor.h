// Tensor expressions (TVM §4.1): describe *what* to compute; a schedule says how.
//
//   auto A = te::placeholder({M, K}, DataType::Float(32), "A");
//   auto B = te::placeholder({K, N}, DataType::Float(32), "B");
//   auto k = te::reduce_axis({0, K}, "k");
//   auto C = te::compute({M, N}, [&](const std::vector<Var>& i) {
//     return te::sum(A({i[0], k.var}) * B({k.var, i[1]}), {k});
//   }, "C");
//   tir::PrimFunc f = te::create_prim_func({A, B, C}, "matmul");
//
// Every tensor owns a tir::Buffer; reading `A(indices)` builds a BufferLoad of it, so
// a compute body is already TensorIR arithmetic. A reduction (sum / max / min /
// prod) may appear only as the whole body of a compute.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/tir/expr.h"
#include "tessera/tir/function.h"
#include "tessera/tir/stmt.h"

namespace tessera::te {

using ir::PrimExpr;
using ir::Range;
using ir::Var;
using tir::Buffer;
using tir::IterVar;

struct OperationNode;

/// The single output of an operation (placeholder or compute).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const OperationNode> op) : op_(std::move(op)) {}
  bool defined() const { return op_ != nullptr; }
  const OperationNode* op() const { return op_.get(); }
  const std::shared_ptr<const OperationNode>& op_ptr() const { return op_; }
  const std::vector<PrimExpr>& shape() const;
  DataType dtype() const;
  const std::string& name() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  /// The buffer this tensor is stored in once lowered.
  const Buffer& buffer() const;
  /// A read of this tensor: a BufferLoad of its buffer. Checks the index count.
  PrimExpr operator()(const std::vector<PrimExpr>& indices) const;
  PrimExpr operator()(const std::vector<Var>& indices) const;
  /// Braced indices, e.g. A({i[0], k.var}) (a mix of Var and PrimExpr).
  PrimExpr operator()(std::initializer_list<PrimExpr> indices) const {
    return (*this)(std::vector<PrimExpr>(indices));
  }
  bool same_as(const Tensor& o) const { return op_ == o.op_; }

 private:
  std::shared_ptr<const OperationNode> op_;
};

enum class OpKind : uint8_t { kPlaceholder, kCompute, kExtern };

/// A placeholder (a function input), a compute (one value per output point) or an extern stage
/// (statements that write the whole output; te::extern_op).
struct OperationNode {
  OpKind kind;
  std::string name;
  std::string tag;  ///< what a default schedule keys on: "elemwise", "broadcast", "injective", "conv2d_nchw", ...
  std::map<std::string, PrimExpr> attrs;
  Buffer buffer;    ///< the output buffer (shape and dtype of the tensor)
  // compute only:
  std::vector<IterVar> axis;         ///< one spatial iter var per output dimension
  std::vector<IterVar> reduce_axis;  ///< the reduction iter vars of a reduction body
  PrimExpr body;                     ///< the value at `axis` (a ReduceNode for reductions)
  std::vector<Tensor> inputs;        ///< tensors the body reads, in first-use order
  // extern only (inputs above too):
  tir::Stmt extern_body;             ///< writes all of `buffer`, reads the inputs' buffers
  std::vector<Buffer> scratch;       ///< buffers the body uses for its own state (the block allocates them)
};

/// A commutative reduction (TVM's Reduce): combiner over `source` for every point of
/// `axis`, starting from `init`. dtype of source.
struct ReduceNode : ir::PrimExprNode {
  static constexpr ir::ExprKind kKind = ir::ExprKind::kReduce;
  enum class Combiner : uint8_t { kSum, kMax, kMin, kProd };
  Combiner combiner;
  PrimExpr source;
  std::vector<IterVar> axis;
  PrimExpr init;  ///< identity of the combiner unless given
  ReduceNode(DataType t, Combiner c, PrimExpr s, std::vector<IterVar> a, PrimExpr i)
      : ir::PrimExprNode(kKind, t), combiner(c), source(std::move(s)), axis(std::move(a)), init(std::move(i)) {}
  /// `lhs (combiner) rhs` as an expression.
  static PrimExpr Combine(Combiner c, PrimExpr lhs, PrimExpr rhs);
};

/// An input tensor of the given shape and dtype. A dimension is an IntImm, or for a dynamic
/// shape a bare ir::Var (a symbolic extent, e.g. ir::Var("seq", DataType::Int(32))): shapes and
/// indices in TE and topi are int32 (topi::Index), so symbolic extents are int32 Vars too and
/// mix with constants and loop vars without casts. create_prim_func lists them in the
/// PrimFunc's shape_vars; a dimension that is an expression of Vars is refused there.
Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name);

using FCompute = std::function<PrimExpr(const std::vector<Var>& indices)>;
/// One value per point of `shape`. `tag` and `attrs` are read by schedules.
Tensor compute(std::vector<PrimExpr> shape, const FCompute& fcompute, std::string name,
               std::string tag = "", std::map<std::string, PrimExpr> attrs = {});

/// A scan body: the value at `indices`, which may read `self` (the tensor being defined).
using FScan = std::function<PrimExpr(const std::vector<Var>& indices, const Tensor& self)>;
/// A recurrence along one axis (TVM's te.scan, as a compute over an ordered axis): one value
/// per point of `shape`, of `dtype`, where the body may read the output itself at the same
/// indices on the other axes and a smaller index on `axis`. `axis`'s iter var is
/// tir::IterVarType::kOrdered: its loop runs serially in increasing order, and no schedule
/// parallelizes, vectorizes or inlines it; the other axes stay spatial (schedules may reorder,
/// parallelize and vectorize them). The body may be a reduction (its reduce axes run inside
/// `axis`, so a point may combine every earlier one). Example, an inclusive prefix sum in O(n):
///   te::scan({n}, x.dtype(), 0, [&](auto& i, const Tensor& s) {
///     return x({i[0]}) + ir::select(i[0] > 0, s({ir::max(i[0] - 1, 0)}), 0); }, "cumsum");
/// Reading `self` at a point not computed yet reads an unwritten value (not checked).
/// Throws UserError when the axis is out of range or the body's dtype is not `dtype`.
Tensor scan(std::vector<PrimExpr> shape, DataType dtype, int axis, const FScan& fscan, std::string name,
            std::string tag = "scan", std::map<std::string, PrimExpr> attrs = {});

/// The statements of an extern stage: given the buffers of the inputs (in order) and of the output,
/// TensorIR that reads the inputs and writes every point of the output.
using FExtern = std::function<tir::Stmt(const std::vector<Buffer>& inputs, const Buffer& output)>;
/// An extern stage (TVM's te.extern with its ir_builder, TVM §4.1): an output of `shape` and
/// `dtype` written by imperative TensorIR (For, IfThenElse, LetStmt, BufferStore) over the inputs'
/// buffers, for algorithms that are no gather: a greedy selection that keeps a list (ONNX
/// NonMaxSuppression), data-dependent loop bounds. `scratch`: buffers the statements use for their
/// state, allocated by the stage's block (each call of the kernel has its own); a few scalars of
/// state private to a parallel iteration are better a tir::AllocateNode of scope "local" inside it
/// (on the stack, promoted to registers). create_prim_func
/// gives the stage one block without iter vars (reads: the inputs, whole; writes: the output,
/// whole) that schedules leave as written: parallelize its loops in the statements (ForKind).
/// Throws UserError when a body reads or writes a buffer that is neither an input's, the output's,
/// a scratch buffer nor one it allocates.
Tensor extern_op(std::vector<PrimExpr> shape, DataType dtype, std::vector<Tensor> inputs, const FExtern& fbody,
                 std::string name, std::string tag = "extern", std::vector<Buffer> scratch = {});

/// A reduction iteration variable over dom.
IterVar reduce_axis(Range dom, std::string name);

PrimExpr sum(PrimExpr source, std::vector<IterVar> axis);
PrimExpr max(PrimExpr source, std::vector<IterVar> axis);
PrimExpr min(PrimExpr source, std::vector<IterVar> axis);
PrimExpr prod(PrimExpr source, std::vector<IterVar> axis);

/// Every operation reachable from `outputs`, producers before consumers.
std::vector<Tensor> PostOrder(const std::vector<Tensor>& outputs);

/// Lowers a TE graph to a TensorIR PrimFunc (TensorIR §4: "create_prim_func"):
/// `args` lists the function parameters in calling-convention order (placeholders
/// then outputs). Each compute becomes one Block (spatial iter vars for its axis,
/// reduction iter vars and an init for a reduction) under its own loop nest, each extern
/// one Block without iter vars around its statements, in producer-before-consumer order;
/// computes and externs that are not in `args` become
/// alloc_buffers of the root block. Throws InternalError if a placeholder that a
/// compute reads is missing from args. The PrimFunc's shape_vars are the Vars among the
/// args' dimensions, by first appearance (args in order, dims outermost first); a dimension
/// of an arg that is neither an IntImm nor a bare Var throws UnsupportedError.
tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name);

}  // namespace tessera::te
