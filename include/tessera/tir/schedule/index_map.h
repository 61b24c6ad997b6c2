// IndexMap: a function from the indices of one buffer layout to another (TVM's
// tir.IndexMap), the argument of Schedule::transform_layout.
//
//   // NCHW -> NCHW16c
//   IndexMap m = IndexMap::FromFunc({"n", "c", "h", "w"}, [](const std::vector<Var>& i) {
//     return std::vector<PrimExpr>{i[0], ir::floordiv(i[1], 16), i[2], i[3], ir::floormod(i[1], 16)};
//   });
//   m.str()   // "lambda n, c, h, w: (n, c // 16, h, w, c % 16)"
//   IndexMap::Parse(m.str())   // the same map (fresh variables)
//
// The text form is Python's lambda syntax restricted to integer literals, the map's own
// variables, parentheses and + - * // % (floor division / floor modulo), so a Trace can
// print, serialize and replay it. Which maps transform_layout accepts (quasi-affine and
// bijective) is checked there, not here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera::tir {

using ir::PrimExpr;
using ir::Var;

struct IndexMap {
  std::vector<Var> initial_indices;    ///< one variable per dimension of the source layout
  std::vector<PrimExpr> final_indices; ///< one expression per dimension of the target layout

  /// A map over fresh int32 variables named `names`, with final indices f(variables).
  static IndexMap FromFunc(const std::vector<std::string>& names,
                           const std::function<std::vector<PrimExpr>(const std::vector<Var>&)>& f);
  /// "lambda a, b: (expr, expr)". Variables with an empty, duplicate or non-identifier
  /// name print as i0, i1, ... Expressions other than integer literals, the map's
  /// variables, + - * // % print in a form Parse rejects.
  std::string str() const;
  /// Parses str()'s format (a trailing comma and spaces are allowed; `-x` is 0 - x).
  /// Throws UserError naming the position of the first unexpected token.
  static IndexMap Parse(const std::string& text);
};

}  // namespace tessera::tir
