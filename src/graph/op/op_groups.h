// The op groups; OpRegistry::Global() calls each once. One file per group.
#pragma once

#include "tessera/graph/op_registry.h"

namespace tessera::graph::op {

void RegisterNNOps(OpRegistry& r);         // nn.cc
void RegisterTensorOps(OpRegistry& r);     // tensor.cc: elementwise and broadcast math
void RegisterTransformOps(OpRegistry& r);  // transform.cc: reshape, transpose, concatenate, take, ...
void RegisterReduceOps(OpRegistry& r);     // reduce.cc
void RegisterLayoutOps(OpRegistry& r);     // layout.cc: NCHWc conv, layout_transform (via RegisterNNOps)
void RegisterLogicalOps(OpRegistry& r);    // logical.cc: comparisons, logic, where, mod, more math
void RegisterActivationOps(OpRegistry& r); // activation.cc
void RegisterIndexingOps(OpRegistry& r);   // indexing.cc: broadcast_to, tile, pad, gather_elements, trilu, argmax, topk_indices, unique_inverse
void RegisterImageOps(OpRegistry& r);       // image.cc: image.resize, image.grid_sample, vision.nms, vision.nms_indices
void RegisterAnnotationOps(OpRegistry& r);  // annotation.cc: BYOC compiler_begin / compiler_end
void RegisterRandomOps(OpRegistry& r);      // random.cc: random.uniform_like, random.normal_like
void RegisterVMOps(OpRegistry& r);          // vm.cc: vm.fatal, the data-dependent-shape ops, vm.shape_of, vm.list_*

}  // namespace tessera::graph::op
