// Block-structure queries shared by the x86 schedules.
#pragma once

#include <vector>

#include "tessera/tir/function.h"

namespace tessera::topi::x86 {

/// The BlockRealizes of f's body other than the root one, in program order.
std::vector<const tir::BlockRealizeNode*> NonRootRealizes(const tir::PrimFunc& f);

}  // namespace tessera::topi::x86
