// WinogradConv2d (graph_lower/winograd_conv2d.h).
#include "tessera/graph_lower/winograd_conv2d.h"

#include <cstring>

#include "computes.h"
#include "rewrite_util.h"
#include "tessera/graph/expr_util.h"
#include "tessera/support/error.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/nn/winograd.h"
#include "tessera/topi/schedule_knobs.h"
#include "tessera/graph_lower/op_strategy.h"

namespace tessera::graph_lower {

namespace {

using graph::Expr;

// kernel [K/k, Cg/c, 3, 3, c, k] of a conv with G groups (Cg = C / G input channels per group,
// Kg = K / G outputs) -> Up [G alpha^2, NB, Cg, bn]: Up[g alpha^2 + e, nb, ci, l] = U[e, ci, g Kg + nb * bn + l],
// U[e, ci, ko] = (G W[ko, ci] G^T)[e]; zero past Kg.
runtime::NDArray TransformKernel(const runtime::NDArray& w, const topi::WinogradMatrices& wm,
                                 const topi::GemmPackTile& tile, int64_t groups) {
  const std::vector<int64_t>& ws = w.shape();
  const int64_t kb = ws[0], cb = ws[1], c = ws[4], k = ws[5], channels = cb * c, units = kb * k, kg = units / groups;
  const int64_t a2 = wm.alpha * wm.alpha, bn = tile.bn, nb = tile.PaddedN(kg) / bn;
  runtime::NDArray out = runtime::NDArray::Empty({groups * a2, nb, channels, bn}, w.dtype());
  auto* dst = static_cast<float*>(out.raw_data());
  std::memset(dst, 0, static_cast<size_t>(groups * a2 * nb * channels * bn) * sizeof(float));
  const auto* src = static_cast<const float*>(w.raw_data());
  float g[9];
  for (int64_t ko = 0; ko < units; ++ko)
    for (int64_t ci = 0; ci < channels; ++ci) {
      for (int64_t y = 0; y < 3; ++y)
        for (int64_t x = 0; x < 3; ++x)
          g[y * 3 + x] = src[((((ko / k * cb + ci / c) * 3 + y) * 3 + x) * c + ci % c) * k + ko % k];
      std::vector<double> u = topi::WinogradKernelTransform(wm, g);
      const int64_t g = ko / kg, j = ko % kg;
      for (int64_t e = 0; e < a2; ++e)
        dst[(((g * a2 + e) * nb + j / bn) * channels + ci) * bn + j % bn] = static_cast<float>(u[static_cast<size_t>(e)]);
    }
  return out;
}

std::string Dims(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

class Rewriter : public graph::ExprMutator {
 public:
  Rewriter(const target::Target& target, topi::KnobContext* knobs) : target_(target), knobs_(knobs) {}

 private:
  target::Target target_;
  topi::KnobContext* knobs_;

 protected:
  Expr MutateCall_(const graph::Call& call) override {
    Expr rewritten = graph::ExprMutator::MutateCall_(call);
    const auto* op = call->op->as<graph::OpNode>();
    if (!op || op->name != "nn.contrib_conv2d_NCHWc" || call->args.size() != 2) return rewritten;
    const auto* kernel = call->args[1]->as<graph::ConstantNode>();
    auto xs = graph::StaticShapeOf(call->args[0]), os = graph::StaticShapeOf(call);
    if (!kernel || !xs || !os || xs->size() != 5 || kernel->data.dtype() != DataType::Float(32)) return rewritten;
    const graph::Attrs& attrs = call->attrs;
    const topi::Conv2DParams p = detail::ConvParamsOf(attrs);
    const std::vector<int64_t>& ks = kernel->data.shape();
    const TargetRewrites rewrites = RewritesFor(target_);
    const std::vector<int64_t> tiles_allowed =
        rewrites.winograd_tiles ? rewrites.winograd_tiles(*xs, ks, p, target_) : std::vector<int64_t>{};
    int64_t m = rewrites.winograd_tile(*xs, ks, p, target_);
    if (!tiles_allowed.empty()) {
      std::vector<int64_t> candidates = {0};
      candidates.insert(candidates.end(), tiles_allowed.begin(), tiles_allowed.end());
      m = topi::Knob(knobs_, WinogradTileKnob(*xs, ks, p), candidates, m);
    }
    if (m == 0) return rewritten;
    const topi::WinogradMatrices wm = topi::Winograd3x3(m);
    // Per group (winograd_tile is 0 unless the groups split channels into whole blocks): Cg inputs, Kg outputs.
    const int64_t g = p.groups, n = (*xs)[0], oh = (*os)[2], ow = (*os)[3];
    const int64_t channels = (*xs)[1] * (*xs)[4] / g, units = ks[0] * ks[5] / g;
    const int64_t d = p.dilation[0];  // winograd_tile is 0 unless both dilations are equal
    const int64_t tiles = topi::WinogradTile(oh, ow, m, d).Tiles(n);
    const topi::GemmPackTile tile = rewrites.gemm_tile(tiles, units, channels, target_);
    const int64_t rows = (tiles + tile.mr - 1) / tile.mr * tile.mr;
    const auto* rc = rewritten->as<graph::CallNode>();
    graph::Attrs in_attrs;
    in_attrs.Set("tile_size", m).Set("padding", std::vector<int64_t>(p.padding.begin(), p.padding.end())).Set("rows", rows);
    if (d > 1) in_attrs.Set("dilation", d);
    if (g > 1) in_attrs.Set("groups", g);
    Expr v = graph::CallOp("nn.contrib_conv2d_winograd_input_transform", {rc->args[0]}, in_attrs);
    graph::Attrs mm_attrs;
    mm_attrs.Set("units", units).Set("gemm_mr", tile.mr).Set("gemm_nv", tile.nv);
    Expr mm = graph::CallOp("nn.contrib_batch_matmul_pack",
                       {v, graph::ConstantNode::make(TransformKernel(kernel->data, wm, tile, g))}, mm_attrs);
    graph::Attrs out_attrs;
    out_attrs.Set("tile_size", m).Set("batch", n).Set("out_h", oh).Set("out_w", ow).Set("channel_block", ks[5]);
    if (d > 1) out_attrs.Set("dilation", d);
    if (g > 1) out_attrs.Set("groups", g);
    return graph::CallOp("nn.contrib_conv2d_winograd_output_transform", {mm}, out_attrs);
  }
};

}  // namespace

std::string WinogradTileKnob(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel,
                             const topi::Conv2DParams& p) {
  return "WinogradConv2d.tile[data " + Dims(data) + ", kernel " + Dims(kernel) + ", padding " +
         Dims({p.padding.begin(), p.padding.end()}) + ", dilation " + std::to_string(p.dilation[0]) + ", groups " +
         std::to_string(p.groups) + "]";
}

graph::IRModule WinogradConv2d(const graph::IRModule& input, const target::Target& target, topi::KnobContext* knobs) {
  return detail::MutateEachFunction<Rewriter>(input, target, knobs);  // registers the Winograd ops first
}

graph::transform::Pass WinogradConv2dPass(const target::Target& target, topi::KnobContext* knobs) {
  return graph::transform::Pass(
      {"WinogradConv2d", "3x3 stride-1 NCHWc convolutions -> Winograd input transform, batch GEMM, output transform", 3},
      [target, knobs](const graph::IRModule& m, const graph::transform::PassContext&) {
        return WinogradConv2d(m, target, knobs);
      });
}

}  // namespace tessera::graph_lower
