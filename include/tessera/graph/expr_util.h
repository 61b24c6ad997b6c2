// Small queries and builders on graph expressions, shared by the graph passes
// (graph/transform) and the rewrites of the layers above (graph_lower).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"
#include "tessera/graph/type.h"

namespace tessera::graph {

/// A call of the registered op `name` (InternalError when no op of that name is registered).
Expr CallOp(const std::string& name, std::vector<Expr> args, Attrs attrs = {});

/// The variables `fn` uses that it does not bind (its params, its lets, its match patterns, and
/// those of functions nested in it), in order of first use: what a closure of `fn` captures
/// (Relay's FreeVars).
std::vector<Var> FreeVars(const FunctionNode& fn);

/// Adds to `mod` the definition of every ADT its functions construct or match on (what a frontend
/// that builds constructor calls, e.g. of the prelude's Option, calls once on its module).
void AddTypeDefsUsed(IRModule* mod);

/// The field types of constructor `ctor` in a value of the ADT type `adt` (its type params
/// substituted by adt's args): Cons's (T, List[T]) in a List[T].
std::vector<Type> ConstructorFieldTypes(const ConstructorNode& ctor, const ADTTypeNode& adt);

/// The tensor type of a typed expression (after type inference), else nullptr.
const TensorTypeNode* TensorTypeOf(const Expr& e);

/// The static shape of a typed tensor expression, else nullopt (untyped, not a tensor, or a
/// dimension that is not a constant).
std::optional<std::vector<int64_t>> StaticShapeOf(const Expr& e);

}  // namespace tessera::graph
