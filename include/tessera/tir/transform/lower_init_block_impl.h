// Shared by LowerInitBlock and LowerBlocks: a block's body with its init folded in.
#pragma once

#include "tessera/tir/stmt.h"

namespace tessera::tir::transform {

/// `if (all reduction iter vars at their min) init; body` (see lower_init_block.h);
/// the body itself when the block has no init.
Stmt LowerInitOf(const BlockNode* block);

}  // namespace tessera::tir::transform
