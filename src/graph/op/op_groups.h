// The op groups; OpRegistry::Global() calls each once. One file per group.
#pragma once

#include "tessera/graph/op_registry.h"

namespace tessera::graph::op {

void RegisterNNOps(OpRegistry& r);         // nn.cc
void RegisterTensorOps(OpRegistry& r);     // tensor.cc: elementwise and broadcast math
void RegisterTransformOps(OpRegistry& r);  // transform.cc: reshape, transpose, concatenate, take, ...
void RegisterReduceOps(OpRegistry& r);     // reduce.cc

}  // namespace tessera::graph::op
