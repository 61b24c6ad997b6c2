// PackGemmWeights (graph_lower/pack_gemm_weights.h).
#include "tessera/graph_lower/pack_gemm_weights.h"

#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "rewrite_util.h"
#include "tessera/graph/expr_util.h"

#include "tessera/support/error.h"
#include "tessera/graph_lower/op_strategy.h"

namespace tessera::graph_lower {

namespace {

using graph::Expr;

// wp[nb, k, l] = w[nb * bn + l, k] (transposed: w is [K, N], wp[nb, k, l] = w[k, nb * bn + l]);
// zero where nb * bn + l >= N.
runtime::NDArray Pack(const runtime::NDArray& w, bool k_major, const topi::GemmPackTile& tile) {
  const int64_t n = k_major ? w.shape()[1] : w.shape()[0], k = k_major ? w.shape()[0] : w.shape()[1];
  const int64_t bn = tile.bn, nb = tile.PaddedN(n) / bn;
  runtime::NDArray out = runtime::NDArray::Empty({nb, k, bn}, w.dtype());
  const size_t es = w.dtype().bytes();
  const auto* src = static_cast<const char*>(w.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  std::memset(dst, 0, static_cast<size_t>(nb * k * bn) * es);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t l = 0; l < bn && b * bn + l < n; ++l) {
        const int64_t col = b * bn + l;
        const int64_t s = k_major ? kk * n + col : col * k + kk;
        std::memcpy(dst + ((b * k + kk) * bn + l) * es, src + s * es, es);
      }
  return out;
}

// The rows of a GEMM operand whose row count is symbolic (dynamic shapes) are sized for the
// tile choice as this many: the packed micro-kernel then runs any count (a tail tile).
constexpr int64_t kSymbolicRowsHint = 128;

// x's static shape, or with a symbolic row dim (the one before K; e.g. [1, seq, K]) that dim as
// kSymbolicRowsHint; nullopt for any other symbolic dim.
std::optional<std::vector<int64_t>> RowShape(const Expr& x) {
  const auto* tt = x->checked_type() ? x->checked_type()->as<graph::TensorTypeNode>() : nullptr;
  if (!tt) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t d = 0; d < tt->shape.size(); ++d) {
    const graph::Dim& dim = tt->shape[d];
    if (dim.is_static()) out.push_back(dim.value());
    else if (tt->shape.size() >= 2 && d + 2 == tt->shape.size()) out.push_back(kSymbolicRowsHint);
    else return std::nullopt;
  }
  return out;
}

class Packer : public graph::ExprMutator {
 public:
  explicit Packer(const target::Target& target) : target_(target) {}

 private:
  target::Target target_;
  // One packed constant per (weight, layout, tile): a weight used by many GEMMs (an unrolled RNN's
  // recurrent weight, once per time step) is packed once and shared, not copied per use.
  using PackKey = std::tuple<const graph::ConstantNode*, bool, int64_t, int64_t, int64_t>;
  std::map<PackKey, Expr> packed_;

 protected:
  Expr MutateCall_(const graph::Call& call) override {
    Expr rewritten = graph::ExprMutator::MutateCall_(call);
    const auto* op = call->op->as<graph::OpNode>();
    if (!op || call->args.size() != 2) return rewritten;
    const bool dense = op->name == "nn.dense", matmul = op->name == "nn.matmul";
    if (!dense && !matmul) return rewritten;
    const auto* c = call->args[1]->as<graph::ConstantNode>();
    auto xs = RowShape(call->args[0]);
    if (!c || !xs || xs->empty() || c->data.ndim() != 2 || c->data.dtype() != DataType::Float(32)) return rewritten;
    if (matmul && xs->size() < 1) return rewritten;
    const int64_t n = dense ? c->data.shape()[0] : c->data.shape()[1];
    const int64_t k = dense ? c->data.shape()[1] : c->data.shape()[0];
    if (xs->back() != k) return rewritten;
    int64_t m = 1;
    for (size_t i = 0; i + 1 < xs->size(); ++i) m *= (*xs)[i];
    topi::GemmPackTile tile = RewritesFor(target_).gemm_tile(m, n, k, target_);
    const auto* rc = rewritten->as<graph::CallNode>();
    graph::Attrs attrs;
    attrs.Set("units", n);
    attrs.Set("gemm_mr", tile.mr);
    attrs.Set("gemm_nv", tile.nv);
    Expr& packed = packed_[PackKey{c, matmul, tile.mr, tile.nv, tile.bn}];
    if (!packed) packed = graph::ConstantNode::make(Pack(c->data, matmul, tile));
    return graph::CallOp("nn.contrib_dense_pack", {rc->args[0], packed}, attrs);
  }
};

}  // namespace

graph::IRModule PackGemmWeights(const graph::IRModule& input, const target::Target& target) {
  return detail::MutateEachFunction<Packer>(input, target);  // registers nn.contrib_dense_pack first
}

graph::transform::Pass PackGemmWeightsPass(const target::Target& target) {
  return graph::transform::Pass(
      {"PackGemmWeights", "pre-pack constant dense / matmul weights into the GEMM micro-kernel layout", 3},
      [target](const graph::IRModule& m, const graph::transform::PassContext&) { return PackGemmWeights(m, target); });
}

}  // namespace tessera::graph_lower
