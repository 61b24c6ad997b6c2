// The target the FComputes lower for (lowering_target.h).
#include "lowering_target.h"

#include "tessera/support/error.h"

namespace tessera::graph_lower::detail {
namespace {

thread_local const target::Target* current = nullptr;

}  // namespace

const target::Target& LoweringTarget() {
  TESSERA_ICHECK(current != nullptr, "an FCompute that needs the target ran outside LowerToTE");
  return *current;
}

LoweringTargetScope::LoweringTargetScope(const target::Target& target) : previous_(current) { current = &target; }

LoweringTargetScope::~LoweringTargetScope() { current = previous_; }

}  // namespace tessera::graph_lower::detail
