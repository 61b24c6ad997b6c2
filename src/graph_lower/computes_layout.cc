// FComputes of the NCHWc ops that AlterOpLayout introduces.
#include "computes.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/layout.h"

namespace tessera::graph_lower::detail {

void RegisterLayoutComputes(graph::OpRegistry& r) {
  r.SetCompute("nn.contrib_conv2d_NCHWc", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    const topi::Conv2DParams p = ConvParamsOf(a);
    // The generic compute; the CPU strategies pick the direct, depthwise or im2col form (op_strategy.h).
    if (topi::IsDepthwiseNCHWc(topi::ConstShape(in[0]), topi::ConstShape(in[1]), p.groups))
      return {topi::depthwise_conv2d_NCHWc(in[0], in[1], p)};
    return {topi::conv2d_NCHWc(in[0], in[1], p)};
  });
  r.SetCompute("layout_transform", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::layout_transform(in[0], a.GetString("src_layout"), a.GetString("dst_layout"), a.GetInt("channels"))};
  });
}

}  // namespace tessera::graph_lower::detail
