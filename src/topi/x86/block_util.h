// Block-structure queries shared by the x86 schedules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tir/function.h"
#include "tessera/tir/schedule/schedule.h"

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

/// The constant extent of a loop; -1 when it is not constant.
int64_t ConstExtent(const tir::Schedule& sch, const tir::LoopRV& loop);

/// Reports a refused schedule step on stderr when TESSERA_DEBUG_SCHEDULE is set (the schedules
/// skip a step the library refuses; this says which and why): "<schedule> <step>: <error>".
void DebugRefusedStep(const char* schedule, const char* step, const ScheduleError& err);

/// Whether a block name starts with a prefix (blocks are matched by their compute's name).
inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace tessera::topi::x86
