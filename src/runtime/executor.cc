// ProgramFormat and MakeExecutor (executor.h).
#include "tessera/runtime/executor.h"

#include <nlohmann/json.hpp>

#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/vm.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

std::string ProgramFormat(const Module& module) {
  return ProgramFormat(module.GraphJson(), module.origin());  // GraphJson: UserError when absent
}

std::string ProgramFormat(std::string_view text, const std::string& origin) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    TESSERA_THROW(UserError, "module '", origin, "': its program (", kGraphJsonSymbol,
                  ") is not valid JSON (", e.what(), "); the library is corrupt, rebuild the model");
  }
  auto it = root.is_object() ? root.find("format") : root.end();
  const std::string format = it != root.end() && it->is_string() ? it->get<std::string>() : "";
  TESSERA_CHECK(format == "tessera-graph" || format == "tessera-vm", "module '", origin, "': its program (",
                kGraphJsonSymbol, ") has ",
                format.empty() ? std::string("no \"format\"") : "format \"" + format + "\"",
                ", which this runtime does not run (it runs \"tessera-graph\" and \"tessera-vm\"); rebuild the model "
                "with this release of tessera");
  return format;
}

std::unique_ptr<Executor> MakeExecutor(Module module, int num_threads) {
  if (ProgramFormat(module) == "tessera-vm") return std::make_unique<VirtualMachine>(std::move(module), num_threads);
  return std::make_unique<GraphExecutor>(std::move(module), num_threads);
}

}  // namespace tessera::runtime
