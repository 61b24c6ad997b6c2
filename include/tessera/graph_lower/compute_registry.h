// Where graph ops meet topi: attaches a topi FCompute to every graph op that has one
// (OpRegistry::SetCompute), so a primitive function can be lowered to TE and then TensorIR.
//
// Ops with a compute: nn.conv2d, nn.bias_add, nn.dense, nn.matmul, nn.batch_matmul,
// nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.softmax, nn.batch_norm, nn.relu,
// clip, sigmoid, hard_sigmoid, hard_swish, exp, log, sqrt, tanh, negative, abs, copy, cast,
// add, subtract, multiply, divide, power, maximum, minimum, reshape, transpose, concatenate,
// take, strided_slice, expand_dims, squeeze, sum, mean, max, min, prod.
// Ops without one keep an empty compute; lowering a function that calls them is an
// UnsupportedError naming the op.
#pragma once

#include <string>
#include <vector>

namespace tessera::graph_lower {

/// Attaches the computes above to OpRegistry::Global(). Idempotent and thread-safe.
void RegisterComputes();

/// The names of the ops RegisterComputes() attaches a compute to, sorted.
std::vector<std::string> OpsWithCompute();

}  // namespace tessera::graph_lower
