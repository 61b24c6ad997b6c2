// The composite patterns of the `dnnl` backend (ExternalCodegen::Patterns): units the ONNX
// importer expands into several graph ops that oneDNN runs as one primitive.
//
//   dnnl.layer_norm  LayerNormalization over the last axis, as src/frontend/onnx/ops_activation.cc
//                    expands it: d = x - mean(x); d * (1 / sqrt(mean(d * d) + eps)) * gamma [+ beta]
//                    (gamma, beta: [C], C = the last extent) -> layer_normalization_forward
//   dnnl.gelu        the erf GELU of PyTorch's exporter: x * (erf(x / sqrt(2)) + 1) * 0.5 (or
//                    x * 0.7071...) -> eltwise_gelu_erf (a post-op of the matmul before it)
//
// The scalars (eps, 1, 0.5, sqrt(2)) stay inside the composites (CompositePattern::scalars_inside):
// the codegen reads eps from the body.
#pragma once

#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/transform/merge_composite.h"

namespace tessera::byoc::dnnl {

std::vector<graph::transform::CompositePattern> Patterns();

/// A dnnl.layer_norm composite's parts: its epsilon and which parameter is gamma / beta (-1: none).
struct LayerNormParts {
  double epsilon = 0;
  int scale = -1, shift = -1;
};
LayerNormParts LayerNormOf(const graph::FunctionNode& composite);

}  // namespace tessera::byoc::dnnl
