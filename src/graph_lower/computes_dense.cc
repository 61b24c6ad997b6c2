// FComputes of nn.dense, nn.matmul and nn.batch_matmul on the packed GEMM micro-kernel
// (topi/nn/dense_pack.h, scheduled by topi/x86/dense.h), and the op nn.contrib_dense_pack that
// PackGemmWeights (pack_gemm_weights.h) produces for constant weights.
#include "computes.h"
#include "lowering_target.h"
#include "tessera/support/error.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/x86/dense.h"

namespace tessera::graph_lower::detail {

namespace {

// M of x [..., K]: the product of all but the last extent.
int64_t RowsOf(const std::vector<int64_t>& s) {
  int64_t m = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) m *= s[i];
  return m;
}

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
  // Non-constant operands: the packing is a stage of the kernel itself.
  r.SetCompute("nn.dense", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    std::vector<int64_t> xs = topi::ConstShape(in[0]), ws = topi::ConstShape(in[1]);
    topi::GemmPackTile tile = topi::x86::ChooseGemmTile(RowsOf(xs), ws[0], ws[1], LoweringTarget());
    return {topi::dense_packed(in[0], topi::pack_dense_weight(in[1], tile), ws[0], tile)};
  });
  r.SetCompute("nn.matmul", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    std::vector<int64_t> as = topi::ConstShape(in[0]), bs = topi::ConstShape(in[1]);
    if (bs.size() < 2) return {topi::matmul(in[0], in[1])};  // matrix-vector: no blocking to gain
    const int64_t n = bs.back(), k = bs[bs.size() - 2];
    if (bs.size() == 2) {
      topi::GemmPackTile tile = topi::x86::ChooseGemmTile(RowsOf(as), n, k, LoweringTarget());
      return {topi::dense_packed(in[0], topi::pack_matmul_b(in[1], tile, false), n, tile)};
    }
    if (as.size() < 2) return {topi::matmul(in[0], in[1])};
    topi::GemmPackTile tile = topi::x86::ChooseGemmTile(as[as.size() - 2], n, k, LoweringTarget());
    return {topi::batch_matmul_packed(in[0], topi::pack_matmul_b(in[1], tile, false), n, tile)};
  });
  r.SetCompute("nn.batch_matmul", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    const bool ta = a.GetInt("transpose_a", 0) != 0, tb = a.GetInt("transpose_b", 1) != 0;
    std::vector<int64_t> xs = topi::ConstShape(in[0]), ys = topi::ConstShape(in[1]);
    TESSERA_CHECK(xs.size() == 3 && ys.size() == 3, "batch_matmul: operands must be 3-D");
    const int64_t m = ta ? xs[2] : xs[1], n = tb ? ys[1] : ys[2], k = tb ? ys[2] : ys[1];
    topi::GemmPackTile tile = topi::x86::ChooseGemmTile(m, n, k, LoweringTarget());
    return {topi::batch_matmul_packed(in[0], topi::pack_matmul_b(in[1], tile, tb), n, tile, ta)};
  });
}

}  // namespace tessera::graph_lower::detail
