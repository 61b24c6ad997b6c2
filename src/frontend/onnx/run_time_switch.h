// A run-time integer operand of a small known range, whose value does not change the node's
// output type (CumSum's axis): the node becomes a chain of graph Ifs, one branch per value, each
// the node as if that value had been a constant; the VM runs the branch the value selects
// (runtime/vm.h). A value outside the range fails the run (vm.fatal) with a message naming the node.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "context.h"

namespace tessera::frontend::onnx_import {

/// The expression that is `branch(v)` when input `input` (a one-element integer tensor, read at
/// run time) holds v, for v in [0, count) — or, when `negative_wraps`, v - count too (an axis
/// counted from the end). Every branch must have one tensor type (UnsupportedError otherwise).
/// `what` names the operand in the run-time error ("CumSum's axis").
graph::Expr SwitchOnRunTimeInt(NodeContext& ctx, int input, int64_t count, bool negative_wraps,
                               const std::string& what, const std::function<graph::Expr(int64_t)>& branch);

}  // namespace tessera::frontend::onnx_import
