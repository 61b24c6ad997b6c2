// The coefficient of a loop variable in a flat buffer index (private to the tune layer; used by
// the feature extractor for access strides and footprints).
#pragma once

#include <cstdint>
#include <map>

#include "tessera/ir/expr.h"

namespace tessera::tune::detail {

/// Variables bound by enclosing LetStmt / Let nodes, substituted when they appear in an index.
using LetBindings = std::map<const ir::VarNode*, ir::PrimExpr>;

/// How much `index` changes when `var` grows by one, in elements: exact for affine indices
/// (Add, Sub, Mul by a constant, Cast, bound variables); floordiv / div by a constant c divides
/// the coefficient by c (truncated toward zero), floormod / mod keeps it, min / max / select take
/// the larger magnitude of their operands', a Ramp / Broadcast index its base's / value's; a
/// product of two varying terms or a division by a varying term counts 1 (it varies). 0 when
/// `index` does not depend on `var`.
int64_t IndexCoefficient(const ir::PrimExpr& index, const ir::VarNode* var, const LetBindings& lets);

}  // namespace tessera::tune::detail
