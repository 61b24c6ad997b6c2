#include "tessera/graph/module.h"

#include "tessera/support/error.h"

namespace tessera::graph {

IRModule IRModule::FromMain(Function main) {
  IRModule m;
  m.Add("main", std::move(main));
  return m;
}

const Function& IRModule::Lookup(const std::string& name) const {
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    std::string names;
    for (const auto& [k, v] : functions_) names += (names.empty() ? "" : ", ") + k;
    TESSERA_THROW(UserError, "IRModule has no function '@", name, "' (functions: ",
                  names.empty() ? "none" : names, ")");
  }
  return it->second;
}

}  // namespace tessera::graph
