#include "tessera/graph/op_registry.h"

#include "op/op_groups.h"
#include "tessera/support/error.h"

namespace tessera::graph {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    op::RegisterNNOps(*r);
    op::RegisterTensorOps(*r);
    op::RegisterTransformOps(*r);
    op::RegisterReduceOps(*r);
    op::RegisterLogicalOps(*r);
    op::RegisterActivationOps(*r);
    op::RegisterIndexingOps(*r);
    op::RegisterImageOps(*r);
    op::RegisterAnnotationOps(*r);
    op::RegisterRandomOps(*r);
    op::RegisterVMOps(*r);
    return r;
  }();
  return *registry;
}

OpInfo& OpRegistry::Register(const std::string& name, int num_inputs, OpPatternKind pattern, TypeRelation rel,
                             std::string description) {
  TESSERA_ICHECK(!ops_.count(name), "op '", name, "' registered twice");
  TESSERA_ICHECK(rel != nullptr, "op '", name, "' registered without a type relation");
  OpInfo& info = ops_[name];
  info.name = name;
  info.num_inputs = num_inputs;
  info.pattern = pattern;
  info.type_relation = std::move(rel);
  info.description = std::move(description);
  return info;
}

const OpInfo* OpRegistry::Find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

const OpInfo& OpRegistry::Get(const std::string& name) const {
  const OpInfo* info = Find(name);
  TESSERA_ICHECK(info != nullptr, "operator '", name, "' is not registered");
  return *info;
}

void OpRegistry::SetCompute(const std::string& name, FCompute compute) {
  auto it = ops_.find(name);
  TESSERA_ICHECK(it != ops_.end(), "SetCompute on unregistered operator '", name, "'");
  it->second.compute = std::move(compute);
}

const FCompute& OpRegistry::GetCompute(const std::string& name) const { return Get(name).compute; }

std::vector<std::string> OpRegistry::ListOps() const {
  std::vector<std::string> names;
  for (const auto& [k, v] : ops_) names.push_back(k);
  return names;
}

}  // namespace tessera::graph
