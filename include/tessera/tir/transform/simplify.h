// Simplify: runs arith::Analyzer::Simplify on every expression (loop vars bound to
// their ranges, block iter vars to their domains, let vars to their value's bounds),
// replaces loops of extent 1 by their body with the loop var := min, drops loops of
// constant extent <= 0, and replaces an IfThenElse with a constant condition by the
// branch taken.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc Simplify(const PrimFunc& func);
Stmt Simplify(const Stmt& stmt);

}  // namespace tessera::tir::transform
