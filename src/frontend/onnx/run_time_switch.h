// Run-time scalars and switches over them (the VM runs the Ifs, runtime/vm.h).
//
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

/// A one-element value read at run time as a scalar: an int64 (from any integer dtype; Fail naming
/// `what` otherwise) or a bool (any dtype: non-zero; a floating / int one is compared with 0).
graph::Expr ScalarInt64(NodeContext& ctx, Value v, const std::string& what);
graph::Expr ScalarBool(NodeContext& ctx, Value v, const std::string& what);

/// vm.fatal(arg) of `type` (a static tensor type; UnsupportedError otherwise): the run fails with
/// `message` when it reaches it (graph/op/vm.cc). `arg` keeps it inside its branch.
graph::Expr Fatal(NodeContext& ctx, graph::Expr arg, const graph::Type& type, const std::string& message);

/// The expression that is `branch(v)` when input `input` (a one-element integer tensor, read at
/// run time) holds v, for v in [0, count) — or, with `wrap` > 0, v - wrap too (an axis counted from
/// the end: CumSum's axis has count = wrap = rank; DFT's, count = rank - 1, wrap = rank). Every
/// branch must have one tensor type (UnsupportedError otherwise, naming both); a value whose branch
/// fails with a UserError (the node is invalid for it) fails the run with that error when it
/// arrives. `what` names the operand in the run-time error ("CumSum's axis is out of range ...").
graph::Expr SwitchOnRunTimeInt(NodeContext& ctx, int input, int64_t count, int64_t wrap, const std::string& what,
                               const std::function<graph::Expr(int64_t)>& branch);

}  // namespace tessera::frontend::onnx_import
