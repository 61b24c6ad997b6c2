// ProgramFormat and MakeExecutor (executor.h).
#include "tessera/runtime/executor.h"

#include <nlohmann/json.hpp>

#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/vm.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

std::vector<std::string> Executor::InputDimNames(int index) const {
  return std::vector<std::string>(InputShape(index).size());
}
std::vector<std::string> Executor::OutputDimNames(int index) const {
  return std::vector<std::string>(OutputShape(index).size());
}

bool ShapeAccepts(const std::vector<int64_t>& expected, const std::vector<int64_t>& given) {
  if (expected.size() != given.size()) return false;
  for (size_t d = 0; d < expected.size(); ++d)
    if (expected[d] >= 0 && expected[d] != given[d]) return false;
  return true;
}

std::string ShapeToString(const std::vector<int64_t>& shape, const std::vector<std::string>& dim_names) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) s += ", ";
    s += d < dim_names.size() && !dim_names[d].empty() ? dim_names[d] : std::to_string(shape[d]);
  }
  return s + "]";
}

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
