// FComputes of the nn.* ops.
#include "computes.h"
#include "tessera/support/error.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/attention.h"
#include "tessera/topi/nn/batch_norm.h"
#include "tessera/topi/nn/bias_add.h"
#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/pooling.h"
#include "tessera/topi/nn/softmax.h"

namespace tessera::graph_lower::detail {

namespace {

topi::Pool2DParams PoolParams(const Attrs& a) {
  topi::Pool2DParams p;
  p.pool_size = Pair(a, "pool_size", {1, 1});
  p.strides = Pair(a, "strides", {1, 1});
  p.dilation = Pair(a, "dilation", {1, 1});
  p.padding = Padding4(a);
  p.ceil_mode = a.GetInt("ceil_mode", 0) != 0;
  p.count_include_pad = a.GetInt("count_include_pad", 0) != 0;
  return p;
}

}  // namespace

void RegisterNNComputes(graph::OpRegistry& r) {
  r.SetCompute("nn.conv2d", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    topi::Conv2DParams p;
    p.strides = Pair(a, "strides", {1, 1});
    p.dilation = Pair(a, "dilation", {1, 1});
    p.padding = Padding4(a);
    p.groups = a.GetInt("groups", 1);
    return {topi::conv2d_nchw(in[0], in[1], p)};
  });
  r.SetCompute("nn.bias_add", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::bias_add(in[0], in[1], a.GetInt("axis", 1))};
  });
  // nn.dense, nn.matmul, nn.batch_matmul: computes_dense.cc (packed GEMM micro-kernel).
  r.SetCompute("nn.max_pool2d", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::max_pool2d(in[0], PoolParams(a))};
  });
  r.SetCompute("nn.max_pool2d_indices", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::max_pool2d_indices(in[0], PoolParams(a), a.GetInt("storage_order", 0) != 0)};
  });
  r.SetCompute("nn.avg_pool2d", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::avg_pool2d(in[0], PoolParams(a))};
  });
  r.SetCompute("nn.global_avg_pool2d", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::global_avg_pool2d(in[0])};
  });
  r.SetCompute("nn.softmax", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::softmax(in[0], a.GetInt("axis", -1))};
  });
  r.SetCompute("nn.attention", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    std::optional<te::Tensor> bias;
    if (in.size() == 4) bias = in[3];
    return {topi::attention(in[0], in[1], in[2], bias, a.GetDouble("scale", 1.0))};
  });
  r.SetCompute("nn.batch_norm", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::batch_norm_inference(in[0], in[1], in[2], in[3], in[4], a.GetInt("axis", 1),
                                       a.GetDouble("epsilon", 1e-5))};
  });
  r.SetCompute("nn.relu", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::relu(in[0])}; });
}

}  // namespace tessera::graph_lower::detail
