// Structural equality / hashing of TensorIR: PrimExpr (with BufferLoad), Stmt, PrimFunc.
//
// Extends ir/structural_equal.h. Definitions map to each other positionally: For
// loop vars, LetStmt / Let vars, block iter vars, PrimFunc parameter buffers,
// Allocate and alloc_buffers buffers. Buffers compare by dtype, shape, strides and
// scope and correspond one-to-one; a buffer first met at a use (e.g. a 1-d view
// made by FlattenBuffer) is mapped there, and its data variable must correspond to
// the other side's data variable (so a view of parameter A matches a view of the
// other side's parameter A). Names of variables and buffers never matter; block
// names, loop kinds, annotations and the PrimFunc's name and attrs do.
//
//   EXPECT_TRUE(StructuralEqual(transform::FlattenBuffer(before), expected))
//       << AsText(...);   // printer.h for the failure message
#pragma once

#include <cstddef>

#include "tessera/ir/structural_equal.h"
#include "tessera/tir/function.h"

namespace tessera::tir {

bool StructuralEqual(const PrimExpr& a, const PrimExpr& b, bool map_free_vars = false);
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool StructuralEqual(const PrimFunc& a, const PrimFunc& b);

size_t StructuralHash(const PrimExpr& e);
size_t StructuralHash(const Stmt& s);
size_t StructuralHash(const PrimFunc& f);

}  // namespace tessera::tir
