// FreshCopy: a copy of a statement that defines new variables, for the transforms that
// duplicate a loop body (LoopPartition's pieces, UnrollLoop's iterations). Flat TIR defines
// each variable once (VerifyFlat), so every loop, let (statement or expression) and allocation
// inside the copy gets a fresh variable (`<name>_t`), and the accesses to a copied allocation
// use the new buffer.
#pragma once

#include "tessera/tir/stmt.h"

namespace tessera::tir::transform::detail {

Stmt FreshCopy(const Stmt& s);

}  // namespace tessera::tir::transform::detail
