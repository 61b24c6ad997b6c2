// The "generic" key: what every target gets when no more specific key decides. Implementations
// need none here (an op without one uses its registry FCompute); the rewrites' fallbacks are the
// cache-line layout block, no Winograd, the register-count-driven GEMM tile and the schedules'
// widths from the target.
#include "strategies.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/support/error.h"
#include "tessera/topi/target_layout.h"
#include "tessera/topi/x86/dense.h"

namespace tessera::graph_lower::detail {

OpImplementation RegistryComputeWith(const std::string& op, std::string name, topi::x86::AnchorSchedule schedule) {
  OpImplementation impl;
  impl.name = std::move(name);
  impl.compute = [op](const StrategyCall& c) {
    RegisterComputes();
    const graph::FCompute& f = graph::OpRegistry::Global().GetCompute(op);
    TESSERA_ICHECK(f, "op ", op, " has no compute");
    return f(c.attrs, c.inputs, c.out_type);
  };
  impl.schedule = std::move(schedule);
  return impl;
}

void RegisterGenericStrategies(OpStrategyTable& t) {
  TargetRewrites r;
  r.layout_block = [](const target::Target& target) { return topi::BlockLanes(target, 32); };
  r.winograd_tile = [](const std::vector<int64_t>&, const std::vector<int64_t>&, const topi::Conv2DParams&,
                       const target::Target&) -> int64_t { return 0; };
  r.gemm_tile = [](int64_t m, int64_t n, int64_t k, const target::Target& target) {
    return topi::x86::ChooseGemmTile(m, n, k, target);
  };
  r.schedule_options = [](const target::Target& target) { return topi::x86::ScheduleOptionsFor(target); };
  t.RegisterRewrites("generic", std::move(r));
}

}  // namespace tessera::graph_lower::detail
