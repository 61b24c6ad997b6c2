// The table of external codegens (byoc/external_codegen.h): one line per backend, no static
// initializers. A new backend: its folder src/byoc/<name>/, its Make function declared here and
// listed in Registry() (docs/byoc.md).
#include <map>

#include "tessera/byoc/external_codegen.h"
#include "tessera/support/error.h"

namespace tessera::byoc {

std::unique_ptr<ExternalCodegen> MakeCSourceCodegen();  // csource/csource_codegen.cc
std::unique_ptr<ExternalCodegen> MakeDnnlCodegen();     // dnnl/dnnl_codegen.cc

namespace {

const std::map<std::string, std::unique_ptr<ExternalCodegen>>& Registry() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, std::unique_ptr<ExternalCodegen>>;
    for (auto make : {MakeCSourceCodegen, MakeDnnlCodegen}) {
      std::unique_ptr<ExternalCodegen> c = make();
      const std::string name = c->name();
      (*t)[name] = std::move(c);
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::vector<std::string> ExternalCodegenNames() {
  std::vector<std::string> names;
  for (const auto& [name, c] : Registry()) names.push_back(name);
  return names;
}

const ExternalCodegen& GetExternalCodegen(const std::string& name) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    std::string list;
    for (const std::string& n : ExternalCodegenNames()) list += (list.empty() ? "" : ", ") + n;
    TESSERA_THROW(UserError, "--byoc '", name, "': no external codegen has that name; the backends are: ", list);
  }
  return *it->second;
}

bool WorthOffloading(const graph::FunctionNode& fn) {
  return GetExternalCodegen(fn.attrs.GetString("Compiler")).WorthOffloading(fn);
}

std::vector<graph::transform::CompositePattern> CompositePatterns(const std::vector<std::string>& names) {
  std::vector<graph::transform::CompositePattern> out;
  for (const std::string& n : names)
    for (graph::transform::CompositePattern& p : GetExternalCodegen(n).Patterns()) out.push_back(std::move(p));
  return out;
}

std::vector<graph::transform::ExternalBackend> ExternalBackends(const std::vector<std::string>& names) {
  std::vector<graph::transform::ExternalBackend> out;
  for (const std::string& n : names) {
    const ExternalCodegen* c = &GetExternalCodegen(n);
    out.push_back({n, [c](const graph::CallNode& call) { return c->Supports(call); }});
  }
  return out;
}

}  // namespace tessera::byoc
