// The "cpu" key: the CPU templates every CPU target gets (x86, AArch64, any other LLVM CPU), at
// the target's widths (the schedules read topi::x86::ScheduleOptions from the target; the GEMM
// tile comes from the target's vector registers):
//   nn.contrib_conv2d_NCHWc     the register-tiled direct NCHWc convolution (dense or grouped) and
//                               the depthwise NCHWc convolution (topi/x86/conv2d_nchwc.h)
//   nn.dense / nn.matmul /      the packed GEMM micro-kernel (topi/nn/dense_pack.h, x86/dense.h),
//   nn.batch_matmul             packing a non-constant right operand inside the kernel (the batched
//                               forms also with symbolic M, N, K: dynamic shapes)
//   nn.contrib_dense_pack,      the same micro-kernel on weights PackGemmWeights / WinogradConv2d
//   nn.contrib_batch_matmul_pack   packed at compile time
//   the Winograd transforms     topi/x86/winograd.h
//   nn.attention                the fused attention, a block of query rows at a time
//                               (topi/x86/attention.h)
#include "strategies.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/x86/attention.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/winograd.h"

namespace tessera::graph_lower::detail {

namespace {

using Tensors = std::vector<te::Tensor>;

// M of x [..., K]: the product of all but the last extent.
int64_t RowsOf(const std::vector<int64_t>& s) {
  int64_t m = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) m *= s[i];
  return m;
}

topi::GemmPackTile GemmTile(const StrategyCall& c, int64_t m, int64_t n, int64_t k) {
  return RewritesFor(c.target).gemm_tile(m, n, k, c.target);
}

Tensors DensePacked(const StrategyCall& c) {
  const std::vector<int64_t> xs = topi::ConstShape(c.inputs[0]), ws = topi::ConstShape(c.inputs[1]);
  const topi::GemmPackTile tile = GemmTile(c, RowsOf(xs), ws[0], ws[1]);
  return {topi::dense_packed(c.inputs[0], topi::pack_dense_weight(c.inputs[1], tile), ws[0], tile)};
}

// A GEMM extent for the tile choice: its value, or -1 when it is a shape var (ChooseGemmTile then
// assumes a typical extent).
int64_t TileExtent(const ir::PrimExpr& e) {
  int64_t v = 0;
  return ir::as_const_int(e, &v) ? v : -1;
}

// Whether the batch dims (all but the last `inner`) of every input are static: the packed batched
// GEMM takes symbolic M, N and K only.
bool StaticBatch(const StrategyCall& c, size_t inner) {
  for (const te::Tensor& t : c.inputs)
    for (size_t d = 0; d + inner < t.shape().size(); ++d)
      if (!t.shape()[d].as<ir::IntImmNode>()) return false;
  return true;
}

Tensors MatmulPacked(const StrategyCall& c) {
  const te::Tensor &a = c.inputs[0], &b = c.inputs[1];
  const std::vector<ir::PrimExpr>& as = a.shape();
  const std::vector<ir::PrimExpr>& bs = b.shape();
  const ir::PrimExpr n = bs.back(), k = bs[bs.size() - 2];
  if (bs.size() == 2) {
    const std::vector<int64_t> xs = topi::ConstShape(a), ws = topi::ConstShape(b);
    const topi::GemmPackTile tile = GemmTile(c, RowsOf(xs), ws[1], ws[0]);
    return {topi::dense_packed(a, topi::pack_matmul_b(b, tile, false), ws[1], tile)};
  }
  const topi::GemmPackTile tile = GemmTile(c, TileExtent(as[as.size() - 2]), TileExtent(n), TileExtent(k));
  return {topi::batch_matmul_packed(a, topi::pack_matmul_b(b, tile, false), n, tile)};
}

Tensors BatchMatmulPacked(const StrategyCall& c) {
  const bool ta = c.attrs.GetInt("transpose_a", 0) != 0, tb = c.attrs.GetInt("transpose_b", 1) != 0;
  const std::vector<ir::PrimExpr>& xs = c.inputs[0].shape();
  const std::vector<ir::PrimExpr>& ys = c.inputs[1].shape();
  const ir::PrimExpr m = ta ? xs[2] : xs[1], n = tb ? ys[1] : ys[2], k = tb ? ys[2] : ys[1];
  const topi::GemmPackTile tile = GemmTile(c, TileExtent(m), TileExtent(n), TileExtent(k));
  return {topi::batch_matmul_packed(c.inputs[0], topi::pack_matmul_b(c.inputs[1], tile, tb), n, tile, ta)};
}

// Symbolic shapes: the batched forms when only M, N, K are symbolic (a 2-D right operand of
// matmul must be static: dense_packed packs it with a static N).
bool MatmulPackedTakesShapes(const StrategyCall& c) {
  if (!HasSymbolicShapes(c)) return true;
  return c.inputs[1].ndim() > 2 && StaticBatch(c, 2);
}

// matmul blocks when B is a matrix (or a batch of them) and A has rows: matrix-vector products
// gain nothing from the micro-kernel.
bool MatmulHasPanels(const StrategyCall& c) {
  const size_t ra = c.inputs[0].shape().size(), rb = c.inputs[1].shape().size();
  return (rb == 2 || (rb > 2 && ra >= 2)) && MatmulPackedTakesShapes(c);
}

// The depthwise form of nn.contrib_conv2d_NCHWc (else the dense or grouped one).
bool DepthwiseNCHWc(const StrategyCall& c) {
  return topi::IsDepthwiseNCHWc(topi::ConstShape(c.inputs[0]), topi::ConstShape(c.inputs[1]), c.attrs.GetInt("groups", 1));
}

bool BatchMatmul3D(const StrategyCall& c) {
  return c.inputs[0].shape().size() == 3 && c.inputs[1].shape().size() == 3 && StaticBatch(c, 2);
}

}  // namespace

void RegisterCpuStrategies(OpStrategyTable& t) {
  const std::string conv = "nn.contrib_conv2d_NCHWc";
  t.Register(conv, "cpu",
             {"conv2d_NCHWc.cpu", 10, [](const StrategyCall& c) { return !DepthwiseNCHWc(c); },
              [](const StrategyCall& c) -> Tensors {
                return {topi::conv2d_NCHWc(c.inputs[0], c.inputs[1], ConvParamsOf(c.attrs), false)};
              },
              topi::x86::Conv2dNCHWcAnchor()});
  t.Register(conv, "cpu",
             {"depthwise_conv2d_NCHWc.cpu", 10, DepthwiseNCHWc,
              [](const StrategyCall& c) -> Tensors {
                return {topi::depthwise_conv2d_NCHWc(c.inputs[0], c.inputs[1], ConvParamsOf(c.attrs))};
              },
              topi::x86::Conv2dNCHWcAnchor()});
  t.Register("nn.dense", "cpu", {"dense_pack.cpu", 10, nullptr, DensePacked, topi::x86::GemmPackedAnchor()});
  // The batched GEMMs take symbolic M, N and K (dynamic shapes: BERT's attention).
  OpImplementation matmul{"matmul_pack.cpu", 10, MatmulHasPanels, MatmulPacked, topi::x86::GemmPackedAnchor()};
  matmul.symbolic_shapes = true;
  t.Register("nn.matmul", "cpu", std::move(matmul));
  OpImplementation batch{"batch_matmul_pack.cpu", 10, BatchMatmul3D, BatchMatmulPacked, topi::x86::GemmPackedAnchor()};
  batch.symbolic_shapes = true;
  t.Register("nn.batch_matmul", "cpu", std::move(batch));
  for (const char* op : {"nn.contrib_dense_pack", "nn.contrib_batch_matmul_pack"}) {
    OpImplementation impl = RegistryComputeWith(op, "gemm_packed.cpu", topi::x86::GemmPackedAnchor());
    // A symbolic row count (topi::dense_packed pads the rows to whole tiles at run time).
    impl.symbolic_shapes = std::string(op) == "nn.contrib_dense_pack";
    t.Register(op, "cpu", std::move(impl));
  }
  for (const char* op : {"nn.contrib_conv2d_winograd_input_transform", "nn.contrib_conv2d_winograd_output_transform"})
    t.Register(op, "cpu", RegistryComputeWith(op, "winograd.cpu", topi::x86::WinogradAnchor()));
  t.Register("nn.attention", "cpu", RegistryComputeWith("nn.attention", "attention.cpu", topi::x86::AttentionAnchor()));
}

}  // namespace tessera::graph_lower::detail
