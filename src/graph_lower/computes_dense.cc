// The generic FComputes of nn.dense, nn.matmul and nn.batch_matmul (topi/nn/dense.h; the CPU
// strategy replaces them by the packed GEMM micro-kernel, strategy/cpu.cc), and the op
// nn.contrib_dense_pack that PackGemmWeights (pack_gemm_weights.h) produces for constant weights.
#include "computes.h"
#include "tessera/support/error.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/dense_pack.h"

namespace tessera::graph_lower::detail {

namespace {

// x [.., K] times packed wp: the tile comes from the call's attrs (set by PackGemmWeights).
Type DensePackRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(args.size() == 2, "nn.contrib_dense_pack takes 2 arguments");
  const auto* x = args[0] ? args[0]->as<graph::TensorTypeNode>() : nullptr;
  const auto* w = args[1] ? args[1]->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_CHECK(x && w, "nn.contrib_dense_pack: arguments must be tensors");
  TESSERA_CHECK(x->dtype == w->dtype, "nn.contrib_dense_pack: dtypes differ");
  TESSERA_CHECK(x->ndim() >= 1 && w->ndim() == 3, "nn.contrib_dense_pack: need x [.., K] and wp [NB, K, bn], got ",
                graph::ShapeStr(x->shape), " and ", graph::ShapeStr(w->shape));
  TESSERA_CHECK(x->shape.back() == w->shape[1], "nn.contrib_dense_pack: reduction extents differ (",
                x->shape.back().str(), " vs ", w->shape[1].str(), ")");
  graph::Shape out = x->shape;
  out.back() = graph::Dim(attrs.GetInt("units"));
  return graph::TensorTypeNode::make(out, x->dtype);
}

}  // namespace

topi::GemmPackTile PackedGemmTile(const Attrs& a, const te::Tensor& wp) {
  topi::GemmPackTile tile;
  tile.mr = a.GetInt("gemm_mr");
  tile.nv = a.GetInt("gemm_nv");
  tile.bn = topi::ConstShape(wp).back();
  return tile;
}

void RegisterDenseComputes(graph::OpRegistry& r) {
  if (!r.Has("nn.contrib_dense_pack")) {
    r.Register("nn.contrib_dense_pack", 2, graph::kOutEWiseFusable, DensePackRel,
               "x [.., K] times a weight pre-packed as [NB, K, bn] (graph_lower::PackGemmWeights). "
               "attrs: units (N), gemm_mr, gemm_nv");
  }
  r.SetCompute("nn.contrib_dense_pack", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::dense_packed(in[0], in[1], a.GetInt("units"), PackedGemmTile(a, in[1]))};
  });
  // The generic computes: a plain reduction each. CPU targets compute these ops with the packed
  // GEMM micro-kernel instead (op_strategy.h: dense_pack.cpu, ...).
  r.SetCompute("nn.dense", BinaryCompute(topi::dense));
  r.SetCompute("nn.matmul", BinaryCompute(topi::matmul));
  r.SetCompute("nn.batch_matmul", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::batch_matmul(in[0], in[1], a.GetInt("transpose_a", 0) != 0, a.GetInt("transpose_b", 1) != 0)};
  });
}

}  // namespace tessera::graph_lower::detail
