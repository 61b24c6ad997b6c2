// Block-structure queries shared by the x86 schedules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tir/function.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

// The schedule handles every x86 schedule uses (this header is private to src/topi/x86).
using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;
using tir::ScheduleError;

/// The BlockRealizes of f's body other than the root one, in program order.
std::vector<const tir::BlockRealizeNode*> NonRootRealizes(const tir::PrimFunc& f);

/// The blocks of those realizes, in program order.
std::vector<const tir::BlockNode*> NonRootBlocks(const tir::PrimFunc& f);

/// The BlockRealize of f's block `name`; nullptr when there is none.
const tir::BlockRealizeNode* FindRealize(const tir::PrimFunc& f, const std::string& name);

/// The iter var of r's block that `loop_var` is bound to directly (iter value == the var); nullptr
/// when none.
const tir::IterVar* IterOf(const tir::BlockRealizeNode* r, const ir::VarNode* loop_var);

/// The loops around block `name` of f, up to its scope (as Schedule::get_loops), read from the
/// function without touching a schedule's trace. realize is nullptr when there is no such block.
struct BlockLoopNest {
  const tir::BlockRealizeNode* realize = nullptr;
  std::vector<const tir::ForNode*> loops;  ///< outermost first
  bool perfect = true;                     ///< each loop's body is the next loop (the last's: the block)
};
BlockLoopNest FindLoopNest(const tir::PrimFunc& f, const std::string& name);

/// The constant extent of a loop; -1 when it is not constant.
int64_t ConstExtentOf(const tir::ForNode* loop);

/// The constant extent of a schedule's loop; -1 when it is not constant.
int64_t ConstExtent(const tir::Schedule& sch, const tir::LoopRV& loop);

/// Reports a refused schedule step on stderr when TESSERA_DEBUG_SCHEDULE is set (the schedules
/// skip a step the library refuses; this says which and why): "<schedule> <step>: <error>".
void DebugRefusedStep(const char* schedule, const char* step, const ScheduleError& err);

/// A block's integer annotation `key` (topi computes pass tile choices this way), or `dflt`
/// when it is absent or not a constant.
int64_t IntAnnotation(const tir::BlockNode* b, const std::string& key, int64_t dflt);

/// Whether block b reads buffer buf (by its read regions).
bool ReadsBuffer(const tir::BlockNode* b, const tir::Buffer& buf);

/// Whether buf is one of f's parameters.
bool IsParam(const tir::PrimFunc& f, const tir::Buffer& buf);

/// The name of the one block of f other than `producer` that reads what `producer` writes first;
/// empty when no block or more than one does.
std::string SoleReader(const tir::PrimFunc& f, const tir::BlockNode* producer);

/// Puts an elementwise epilogue (bias / relu / residual add, or a cache_write copy-out) under a
/// kernel's tile loop (reverse_compute_at), its innermost loop vectorized when it is a register
/// wide (<= 16 lanes), or split into vectors of opt.vector_lanes (unrolled, at most 16) when it is
/// a multiple of them, and its other loops inside the tile unrolled when short (<= 16): constant
/// offsets into the accumulator tile, which then stays in registers. Returns false (and reports
/// the refusal under TESSERA_DEBUG_SCHEDULE as `<schedule> epilogue: ...`) when the library
/// refuses the move; the epilogue then keeps its own loop nest.
bool FuseEpilogue(Schedule& sch, const std::string& epilogue, const LoopRV& tile_loop, const ScheduleOptions& opt,
                  const char* schedule);

/// The default schedule's step for one block (schedule.cc, step 3) whose first `shared` loops it
/// shares with other blocks under a row loop: the loops below are vectorized (a reduction along
/// the row rfactor-ed by the lane count); nothing is parallelized.
void ScheduleBlockUnderRow(Schedule& sch, const std::string& name, const ScheduleOptions& opt, size_t shared);

/// The default schedule's steps 2 and 3 (schedule.cc) for one block on its own loops: outer
/// spatial loops fused and parallelized, the inner one vectorized (a reduction along the row
/// rfactor-ed by the lane count). What a schedule rule leaves to the default (add_rfactor.h).
void ScheduleBlockDefault(Schedule& sch, const std::string& name, const ScheduleOptions& opt);
/// Whether a block name starts with a prefix (blocks are matched by their compute's name).
inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace tessera::topi::x86
