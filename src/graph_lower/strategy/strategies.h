// Internal: the strategy registrations of each target key (graph_lower/op_strategy.h), called
// once by OpStrategyTable::Global().
#pragma once

#include "tessera/graph_lower/op_strategy.h"
#include "tessera/topi/nn/conv2d_nchwc.h"

#include "../computes.h"

namespace tessera::graph_lower::detail {

void RegisterGenericStrategies(OpStrategyTable& t);  // generic.cc: the rewrites' fallbacks
void RegisterCpuStrategies(OpStrategyTable& t);      // cpu.cc: the CPU templates (any ISA)
void RegisterX86Strategies(OpStrategyTable& t);      // x86.cc

/// The implementation that runs the op registry's FCompute of `op` with the template `schedule`.
OpImplementation RegistryComputeWith(const std::string& op, std::string name, topi::x86::AnchorSchedule schedule);

}  // namespace tessera::graph_lower::detail
