// The "x86" key: what only x86 gets.
//   nn.contrib_conv2d_NCHWc  conv2d_NCHWc_im2col.x86 (plevel 20): the direct conv through its
//                            im2col stage where AVX2's 16 registers leave the 7x7 output without a
//                            register tile (topi::x86::UseIm2colConv; ResNet-50's 7x7 3x3 convs
//                            5.3 -> 3.8 ms)
//   rewrites                 the Winograd tile the x86 measurements chose
//                            (topi::x86::WinogradTileSize: F(2x2, 3x3) on wide 3x3 convs) and
//                            the tiles a tuner may choose (WinogradTileCandidates: 2, 4); the
//                            NCHWc blocks a tuner may choose (LayoutBlockCandidates)
#include "strategies.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/x86/conv2d_nchwc.h"

namespace tessera::graph_lower::detail {

void RegisterX86Strategies(OpStrategyTable& t) {
  OpImplementation im2col;
  im2col.name = "conv2d_NCHWc_im2col.x86";
  im2col.plevel = 20;
  im2col.condition = [](const StrategyCall& c) {
    return topi::x86::UseIm2colConv(topi::ConstShape(c.inputs[0]), topi::ConstShape(c.inputs[1]), ConvParamsOf(c.attrs),
                                    c.target.VectorLanes(32), c.target.vector_registers);
  };
  im2col.compute = [](const StrategyCall& c) -> std::vector<te::Tensor> {
    return {topi::conv2d_NCHWc(c.inputs[0], c.inputs[1], ConvParamsOf(c.attrs), true)};
  };
  im2col.schedule = topi::x86::Conv2dNCHWcAnchor();
  t.Register("nn.contrib_conv2d_NCHWc", "x86", std::move(im2col));

  TargetRewrites r;
  r.winograd_tile = [](const std::vector<int64_t>& data, const std::vector<int64_t>& kernel, const topi::Conv2DParams& p,
                       const target::Target&) { return topi::x86::WinogradTileSize(data, kernel, p); };
  r.layout_blocks = [](const target::Target& target) { return topi::x86::LayoutBlockCandidates(target); };
  r.winograd_tiles = [](const std::vector<int64_t>& data, const std::vector<int64_t>& kernel, const topi::Conv2DParams& p,
                        const target::Target&) { return topi::x86::WinogradTileCandidates(data, kernel, p); };
  t.RegisterRewrites("x86", std::move(r));
}

}  // namespace tessera::graph_lower::detail
