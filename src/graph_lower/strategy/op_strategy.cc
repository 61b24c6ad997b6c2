// The op-strategy table (graph_lower/op_strategy.h): registration, lookup and selection.
#include "tessera/graph_lower/op_strategy.h"

#include <algorithm>

#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/support/error.h"

#include "strategies.h"

namespace tessera::graph_lower {

namespace {

// How specific a key is for the target: "generic" 0, the target's keys 1.. (most specific last,
// target/target.h); -1 when the key does not apply to the target.
int Specificity(const std::string& key, const target::Target& target) {
  if (key == "generic") return 0;
  for (size_t i = 0; i < target.keys.size(); ++i)
    if (target.keys[i] == key) return static_cast<int>(i) + 1;
  return -1;
}

}  // namespace

OpStrategyTable& OpStrategyTable::Global() {
  static OpStrategyTable* table = [] {
    auto* t = new OpStrategyTable;
    detail::RegisterGenericStrategies(*t);
    detail::RegisterCpuStrategies(*t);
    detail::RegisterX86Strategies(*t);
    return t;
  }();
  return *table;
}

void OpStrategyTable::Register(const std::string& op, const std::string& target_key, OpImplementation impl) {
  TESSERA_ICHECK(!op.empty() && !target_key.empty() && !impl.name.empty() && impl.compute,
                 "an op implementation needs an op, a target key, a name and a compute");
  impls_[op].push_back({target_key, std::move(impl)});
}

void OpStrategyTable::RegisterRewrites(const std::string& target_key, TargetRewrites rewrites) {
  TESSERA_ICHECK(!target_key.empty(), "target rewrites need a target key");
  rewrites_[target_key] = std::move(rewrites);
}

std::vector<std::pair<std::string, const OpImplementation*>> OpStrategyTable::Implementations(
    const std::string& op, const target::Target& target) const {
  struct Ranked {
    int plevel, specificity;
    size_t order;
    const Entry* entry;
  };
  std::vector<Ranked> ranked;
  auto it = impls_.find(op);
  if (it != impls_.end()) {
    for (size_t i = 0; i < it->second.size(); ++i) {
      const Entry& e = it->second[i];
      const int s = Specificity(e.key, target);
      if (s >= 0) ranked.push_back({e.impl.plevel, s, i, &e});
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.plevel != b.plevel) return a.plevel > b.plevel;
    if (a.specificity != b.specificity) return a.specificity > b.specificity;
    return a.order < b.order;
  });
  std::vector<std::pair<std::string, const OpImplementation*>> out;
  for (const Ranked& r : ranked) out.emplace_back(r.entry->key, &r.entry->impl);
  return out;
}

bool HasSymbolicShapes(const StrategyCall& call) {
  for (const te::Tensor& t : call.inputs)
    for (const ir::PrimExpr& d : t.shape())
      if (!d.as<ir::IntImmNode>()) return true;
  return graph::HasSymbolicDims(call.out_type);
}

OpImplementation OpStrategyTable::Select(const std::string& op, const StrategyCall& call) const {
  const bool symbolic = HasSymbolicShapes(call);
  for (const auto& [key, impl] : Implementations(op, call.target)) {
    if (symbolic && !impl->symbolic_shapes) continue;
    if (!impl->condition || impl->condition(call)) return *impl;
  }
  RegisterComputes();
  const graph::OpRegistry& registry = graph::OpRegistry::Global();
  const graph::FCompute f = registry.Has(op) ? registry.GetCompute(op) : graph::FCompute();
  if (!f)
    TESSERA_THROW(UnsupportedError, "op ", op, " has no implementation for target '", call.target.str(),
                  "' (keys ", [&] {
                    std::string k;
                    for (const std::string& s : call.target.keys) k += (k.empty() ? "" : ", ") + s;
                    return k;
                  }(), ") and no generic compute");
  OpImplementation generic;
  generic.name = op + ".generic";
  generic.plevel = 0;
  generic.symbolic_shapes = true;
  generic.compute = [f](const StrategyCall& c) { return f(c.attrs, c.inputs, c.out_type); };
  return generic;
}

TargetRewrites OpStrategyTable::RewritesFor(const target::Target& target) const {
  std::vector<std::string> keys = {"generic"};
  keys.insert(keys.end(), target.keys.begin(), target.keys.end());
  TargetRewrites out;
  for (const std::string& key : keys) {  // least specific first: a later key overrides
    auto it = rewrites_.find(key);
    if (it == rewrites_.end()) continue;
    const TargetRewrites& r = it->second;
    if (r.layout_block) out.layout_block = r.layout_block;
    if (r.layout_blocks) out.layout_blocks = r.layout_blocks;
    if (r.winograd_tile) out.winograd_tile = r.winograd_tile;
    if (r.winograd_tiles) out.winograd_tiles = r.winograd_tiles;
    if (r.gemm_tile) out.gemm_tile = r.gemm_tile;
    if (r.schedule_options) out.schedule_options = r.schedule_options;
  }
  TESSERA_ICHECK(out.layout_block && out.winograd_tile && out.gemm_tile && out.schedule_options,
                 "the generic target rewrites are not registered");
  return out;
}

TargetRewrites RewritesFor(const target::Target& target) { return OpStrategyTable::Global().RewritesFor(target); }

}  // namespace tessera::graph_lower
