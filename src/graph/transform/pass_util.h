// Helpers shared by the graph passes of this folder (not a public header).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/type.h"

namespace tessera::graph::transform::detail {

/// `e` as a call of the op `name`, else nullptr.
const CallNode* AsOpCall(const Expr& e, const char* name);
/// The op name of a call of an op, else "".
std::string OpName(const Expr& e);
/// Whether `op` is one of the reductions sum / mean / max / min / prod (graph/op/reduce.cc; attrs
/// axis, keepdims, exclude).
bool IsReduceOp(const std::string& op);
using graph::CallOp;  // expr_util.h

/// Calls `use(child)` for every expression `e` uses as an operand (call arguments, tuple
/// fields, let values and bodies, if parts, function bodies; not the op, not let-bound vars).
void ForEachUse(const Expr& e, const std::function<void(const Expr&)>& use);
/// How many times each node is used as an operand in the DAG under `root` (+1 for root).
std::unordered_map<const ExprNode*, int> CountUses(const Expr& root);

using graph::StaticShapeOf;  // expr_util.h
using graph::TensorTypeOf;   // expr_util.h

/// The elements of a float32 / float64 array as doubles; nullopt for other dtypes.
std::optional<std::vector<double>> ToDoubles(const runtime::NDArray& a);
/// A new array of `shape` and float `dtype` (float32 / float64) holding `values`.
runtime::NDArray FromDoubles(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype);
/// A rank-0 constant of any scalar `dtype` holding `value` (converted as runtime::StoreFromDouble).
Constant ScalarConstant(double value, DataType dtype);

}  // namespace tessera::graph::transform::detail
