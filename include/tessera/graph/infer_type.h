// Type inference (Relay, arXiv 1904.08368, section 4.1): fills checked_type() of every
// expression bottom-up. Calls of an Op use the op's type relation (op_registry.h); calls of
// functions (a Function, a closure Var, a GlobalVar) check the argument types against the
// parameters; a GlobalVar has its function's type (a recursive global needs its return type
// annotated). A constructor call `Cons(x, xs)` has its ADT's type, the type params bound by its
// fields' types; a param no field binds stays IncompleteType (`Nil()`: List[_]), which Unify
// (type.h) refines where the value meets a more precise type: a let annotation, the other If
// branch or Match clause, a constructor field, a function's declared return type. A Match types
// each pattern's variables from the matched value's type (a constructor pattern of another ADT is
// an error) and unifies its clauses' results. Relay's full inference (polymorphic functions, type
// relations solved over unknowns) is not here: functions are monomorphic, ADTs are polymorphic.
//
// Errors are UserErrors that name the op and the offending argument types, e.g.
//   "type error in nn.conv2d(Tensor[(1, 3, 8, 8), float32], Tensor[(4, 2, 3, 3), float32]):
//    input channels 3 != weight in-channels 2 * groups 1".
#pragma once

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"

namespace tessera::graph {

/// Returns a module whose functions (and all their subexpressions) carry checked types and
/// whose functions have their ret_type filled.
IRModule InferType(const IRModule& mod);

/// Types one expression (its free variables must carry type annotations) and returns its type.
/// Already-typed subexpressions are not re-typed, so calling it on a growing graph, as the
/// ONNX importer does after each node, costs only the new nodes.
/// Types the variables of `pattern` as InferType does for a match clause whose value has type
/// `type` (UserError when the pattern cannot match such a value: another ADT, a tuple of another arity).
void InferPatternTypes(const ClausePatternNode& pattern, const Type& type);

/// `mod` gives the types of the global functions `e` names (GlobalVar; null: none may appear).
Type InferExprType(const Expr& e, const IRModule* mod = nullptr);

}  // namespace tessera::graph
