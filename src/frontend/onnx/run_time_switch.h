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
/// run time) holds v, for v in [0, count) — or, with `wrap` > 0, v - wrap too (an axis counted from
/// the end: CumSum's axis has count = wrap = rank; DFT's, count = rank - 1, wrap = rank). Every
/// branch must have one tensor type (UnsupportedError otherwise, naming both); a value whose branch
/// fails with a UserError (the node is invalid for it) fails the run with that error when it
/// arrives. `what` names the operand in the run-time error ("CumSum's axis is out of range ...").
graph::Expr SwitchOnRunTimeInt(NodeContext& ctx, int input, int64_t count, int64_t wrap, const std::string& what,
                               const std::function<graph::Expr(int64_t)>& branch);

}  // namespace tessera::frontend::onnx_import
