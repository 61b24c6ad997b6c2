// Internal: the FCompute groups that RegisterComputes attaches, and attr helpers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/op_registry.h"
#include "tessera/te/tensor.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/dense_pack.h"

namespace tessera::graph_lower::detail {

// The names every FCompute signature uses.
using graph::Attrs;
using graph::Type;
using te::Tensor;
using Tensors = std::vector<Tensor>;

void RegisterNNComputes(graph::OpRegistry& r);         // computes_nn.cc
void RegisterTensorComputes(graph::OpRegistry& r);     // computes_tensor.cc: elementwise + broadcast
void RegisterTransformComputes(graph::OpRegistry& r);  // computes_transform.cc: transforms + reductions
void RegisterLayoutComputes(graph::OpRegistry& r);     // computes_layout.cc: NCHWc conv, layout_transform
void RegisterLogicalComputes(graph::OpRegistry& r);    // computes_logical.cc
void RegisterActivationComputes(graph::OpRegistry& r); // computes_activation.cc
void RegisterIndexingComputes(graph::OpRegistry& r);   // computes_indexing.cc
void RegisterImageComputes(graph::OpRegistry& r);      // computes_image.cc: image.resize, image.grid_sample, vm.resize(_shape)
void RegisterRandomComputes(graph::OpRegistry& r);     // computes_random.cc: random.uniform_like, random.normal_like
void RegisterVMComputes(graph::OpRegistry& r);         // computes_vm.cc: vm.reshape_shape, vm.full
void RegisterDenseComputes(graph::OpRegistry& r);      // computes_dense.cc: dense / matmul / batch_matmul
void RegisterWinogradComputes(graph::OpRegistry& r);   // computes_winograd.cc: the Winograd conv ops

/// values[i] for a run-time position i (int64; a select chain over the static count, 0 past it):
/// the shape functions' per-dim results (computes_vm.cc, computes_image.cc).
inline ir::PrimExpr Pick(const ir::PrimExpr& i, const std::vector<ir::PrimExpr>& values) {
  ir::PrimExpr v = ir::make_const(DataType::Int(64), 0);
  for (size_t d = values.size(); d-- > 0;)
    v = ir::select(i == ir::make_const(DataType::Int(32), static_cast<int64_t>(d)), values[d], v);
  return v;
}

/// The single element of a one-element tensor t (any rank), cast to `dtype`.
inline ir::PrimExpr ScalarAs(const te::Tensor& t, DataType dtype) {
  return ir::cast(dtype, t(std::vector<ir::PrimExpr>(t.ndim(), ir::make_const(DataType::Int(32), 0))));
}

/// An FCompute calling a one-input / two-input topi compute that takes no attrs.
inline graph::FCompute UnaryCompute(te::Tensor (*f)(const te::Tensor&)) {
  return [f](const graph::Attrs&, const std::vector<te::Tensor>& in, const graph::Type&) {
    return std::vector<te::Tensor>{f(in[0])};
  };
}
inline graph::FCompute BinaryCompute(te::Tensor (*f)(const te::Tensor&, const te::Tensor&)) {
  return [f](const graph::Attrs&, const std::vector<te::Tensor>& in, const graph::Type&) {
    return std::vector<te::Tensor>{f(in[0], in[1])};
  };
}

/// The GEMM tile of a call on a pre-packed weight wp [..., bn] (attrs gemm_mr, gemm_nv).
topi::GemmPackTile PackedGemmTile(const graph::Attrs& attrs, const te::Tensor& wp);

/// The static shape of a tensor type; InternalError otherwise (lowering checks params first).
std::vector<int64_t> StaticOutShape(const graph::Type& t);
/// The convolution parameters (strides, dilation, padding, groups) of a conv call's attrs.
topi::Conv2DParams ConvParamsOf(const graph::Attrs& attrs);
/// [top, left, bottom, right] from a padding attr of 1, 2 or 4 values (default zeros).
std::array<int64_t, 4> Padding4(const graph::Attrs& attrs);
/// A 2-value attr (strides, dilation, pool_size) as an array.
std::array<int64_t, 2> Pair(const graph::Attrs& attrs, const std::string& name, std::array<int64_t, 2> dflt);

}  // namespace tessera::graph_lower::detail
