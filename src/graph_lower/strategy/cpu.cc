// The "cpu" key: the CPU templates every CPU target gets (x86, AArch64, any other LLVM CPU), at
// the target's widths (the schedules read topi::x86::ScheduleOptions from the target; the GEMM
// tile comes from the target's vector registers):
//   nn.contrib_conv2d_NCHWc     the register-tiled direct NCHWc convolution (groups 1) and the
//                               depthwise NCHWc convolution (topi/x86/conv2d_nchwc.h)
//   nn.dense / nn.matmul /      the packed GEMM micro-kernel (topi/nn/dense_pack.h, x86/dense.h),
//   nn.batch_matmul             packing a non-constant right operand inside the kernel
//   nn.contrib_dense_pack,      the same micro-kernel on weights PackGemmWeights / WinogradConv2d
//   nn.contrib_batch_matmul_pack   packed at compile time
//   the Winograd transforms     topi/x86/winograd.h
#include "strategies.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/dense_pack.h"
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

Tensors MatmulPacked(const StrategyCall& c) {
  const te::Tensor &a = c.inputs[0], &b = c.inputs[1];
  const std::vector<int64_t> as = topi::ConstShape(a), bs = topi::ConstShape(b);
  const int64_t n = bs.back(), k = bs[bs.size() - 2];
  if (bs.size() == 2) {
    const topi::GemmPackTile tile = GemmTile(c, RowsOf(as), n, k);
    return {topi::dense_packed(a, topi::pack_matmul_b(b, tile, false), n, tile)};
  }
  const topi::GemmPackTile tile = GemmTile(c, as[as.size() - 2], n, k);
  return {topi::batch_matmul_packed(a, topi::pack_matmul_b(b, tile, false), n, tile)};
}

Tensors BatchMatmulPacked(const StrategyCall& c) {
  const bool ta = c.attrs.GetInt("transpose_a", 0) != 0, tb = c.attrs.GetInt("transpose_b", 1) != 0;
  const std::vector<int64_t> xs = topi::ConstShape(c.inputs[0]), ys = topi::ConstShape(c.inputs[1]);
  const int64_t m = ta ? xs[2] : xs[1], n = tb ? ys[1] : ys[2], k = tb ? ys[2] : ys[1];
  const topi::GemmPackTile tile = GemmTile(c, m, n, k);
  return {topi::batch_matmul_packed(c.inputs[0], topi::pack_matmul_b(c.inputs[1], tile, tb), n, tile, ta)};
}

// matmul blocks when B is a matrix (or a batch of them) and A has rows: matrix-vector products
// gain nothing from the micro-kernel.
bool MatmulHasPanels(const StrategyCall& c) {
  const size_t ra = topi::ConstShape(c.inputs[0]).size(), rb = topi::ConstShape(c.inputs[1]).size();
  return rb == 2 || (rb > 2 && ra >= 2);
}

bool BatchMatmul3D(const StrategyCall& c) {
  return topi::ConstShape(c.inputs[0]).size() == 3 && topi::ConstShape(c.inputs[1]).size() == 3;
}

}  // namespace

void RegisterCpuStrategies(OpStrategyTable& t) {
  const std::string conv = "nn.contrib_conv2d_NCHWc";
  t.Register(conv, "cpu",
             {"conv2d_NCHWc.cpu", 10, [](const StrategyCall& c) { return c.attrs.GetInt("groups", 1) == 1; },
              [](const StrategyCall& c) -> Tensors {
                return {topi::conv2d_NCHWc(c.inputs[0], c.inputs[1], ConvParamsOf(c.attrs), false)};
              },
              topi::x86::Conv2dNCHWcAnchor()});
  t.Register(conv, "cpu",
             {"depthwise_conv2d_NCHWc.cpu", 10, [](const StrategyCall& c) { return c.attrs.GetInt("groups", 1) > 1; },
              [](const StrategyCall& c) -> Tensors {
                return {topi::depthwise_conv2d_NCHWc(c.inputs[0], c.inputs[1], ConvParamsOf(c.attrs))};
              },
              topi::x86::Conv2dNCHWcAnchor()});
  t.Register("nn.dense", "cpu", {"dense_pack.cpu", 10, nullptr, DensePacked, topi::x86::GemmPackedAnchor()});
  t.Register("nn.matmul", "cpu", {"matmul_pack.cpu", 10, MatmulHasPanels, MatmulPacked, topi::x86::GemmPackedAnchor()});
  t.Register("nn.batch_matmul", "cpu",
             {"batch_matmul_pack.cpu", 10, BatchMatmul3D, BatchMatmulPacked, topi::x86::GemmPackedAnchor()});
  for (const char* op : {"nn.contrib_dense_pack", "nn.contrib_batch_matmul_pack"}) {
    OpImplementation impl = RegistryComputeWith(op, "gemm_packed.cpu", topi::x86::GemmPackedAnchor());
    // A symbolic row count (topi::dense_packed pads the rows to whole tiles at run time).
    impl.symbolic_shapes = std::string(op) == "nn.contrib_dense_pack";
    t.Register(op, "cpu", std::move(impl));
  }
  for (const char* op : {"nn.contrib_conv2d_winograd_input_transform", "nn.contrib_conv2d_winograd_output_transform"})
    t.Register(op, "cpu", RegistryComputeWith(op, "winograd.cpu", topi::x86::WinogradAnchor()));
}

}  // namespace tessera::graph_lower::detail
