// FComputes of the NCHWc ops that AlterOpLayout introduces.
#include "computes.h"
#include "lowering_target.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/layout.h"
#include "tessera/topi/x86/conv2d_nchwc.h"

namespace tessera::graph_lower::detail {

void RegisterLayoutComputes(graph::OpRegistry& r) {
  r.SetCompute("nn.contrib_conv2d_NCHWc", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    topi::Conv2DParams p;
    p.strides = Pair(a, "strides", {1, 1});
    p.dilation = Pair(a, "dilation", {1, 1});
    p.padding = Padding4(a);
    p.groups = a.GetInt("groups", 1);
    if (p.groups > 1) return {topi::depthwise_conv2d_NCHWc(in[0], in[1], p)};
    return {topi::x86::Conv2dNCHWc(in[0], in[1], p, LoweringTarget())};  // the x86 strategy (im2col for 7x7 outputs)
  });
  r.SetCompute("layout_transform", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::layout_transform(in[0], a.GetString("src_layout"), a.GetString("dst_layout"), a.GetInt("channels"))};
  });
}

}  // namespace tessera::graph_lower::detail
