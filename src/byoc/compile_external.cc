// CompileExternalSources, ExternalLinkFlags, LoadExternalLibrary (byoc/compile_external.h).
#include "tessera/byoc/compile_external.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/codegen/run_tool.h"
#include "tessera/support/error.h"

namespace tessera::byoc {
namespace {

std::string CxxFor(const std::string& cc) {
  const char* env = std::getenv("CXX");
  if (env && *env) return env;
  if (cc == "cc") return "c++";
  if (cc.size() > 3 && cc.compare(cc.size() - 3, 3, "gcc") == 0) return cc.substr(0, cc.size() - 3) + "g++";
  if (cc.size() > 5 && cc.compare(cc.size() - 5, 5, "clang") == 0) return cc + "++";
  return "c++";
}

class LoadedLibrary : public runtime::SymbolSource {
 public:
  explicit LoadedLibrary(void* handle) : handle_(handle) {}
  ~LoadedLibrary() override { dlclose(handle_); }
  void* Lookup(const std::string& name) override { return dlsym(handle_, name.c_str()); }

 private:
  void* handle_;
};

}  // namespace

std::vector<std::string> CompileExternalSources(const std::vector<ExternalSource>& sources, const std::string& triple,
                                                const std::string& dir) {
  const std::string cc = codegen::LinkerFor(triple);
  std::vector<std::string> objects;
  for (const ExternalSource& s : sources) {
    const bool cxx = s.language == "c++";
    const std::string src = dir + "/byoc_" + s.backend + (cxx ? ".cc" : ".c");
    const std::string obj = dir + "/byoc_" + s.backend + ".o";
    std::string regions;
    for (const std::string& r : s.symbols) regions += (regions.empty() ? "" : ", ") + r;
    {
      std::ofstream f(src);
      f << s.code;
      if (!f) TESSERA_THROW(UserError, "cannot write the source of BYOC backend '", s.backend, "' to ", src);
    }
    std::vector<std::string> argv = {cxx ? CxxFor(cc) : cc, "-c", "-O2", "-fPIC", "-o", obj, src};
    if (cxx) argv.insert(argv.begin() + 1, "-std=c++17");
    for (const std::string& f : GetExternalCodegen(s.backend).CompileFlags()) argv.push_back(f);
    codegen::RunTool(argv, "BYOC backend '" + s.backend + "': compiling its regions (" + regions + ")",
                     std::string("install a ") + (cxx ? "C++" : "C") + " compiler (" + argv[0] + ") or set $" +
                         (cxx ? "CXX" : "CC"));
    objects.push_back(obj);
  }
  return objects;
}

std::vector<std::string> ExternalLinkFlags(const std::vector<ExternalSource>& sources) {
  std::vector<std::string> flags;
  for (const ExternalSource& s : sources)
    for (const std::string& f : GetExternalCodegen(s.backend).LinkFlags())
      if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
  return flags;
}

std::shared_ptr<runtime::SymbolSource> LoadExternalLibrary(const std::vector<ExternalSource>& sources) {
  codegen::TempDir dir("tessera-byoc");
  std::vector<std::string> argv = {codegen::LinkerFor(""), "-shared", "-o", dir.path() + "/external.so"};
  for (const std::string& o : CompileExternalSources(sources, "", dir.path())) argv.push_back(o);
  for (const std::string& f : ExternalLinkFlags(sources)) argv.push_back(f);
  argv.push_back("-lm");
  std::string regions;
  for (const ExternalSource& s : sources)
    for (const std::string& r : s.symbols) regions += (regions.empty() ? "" : ", ") + r;
  codegen::RunTool(argv, "BYOC: linking the external regions (" + regions + ") for the JIT");
  void* handle = dlopen((dir.path() + "/external.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    TESSERA_THROW(UserError, "BYOC: cannot load the external regions (", regions, "): ", err ? err : "dlopen failed");
  }
  return std::make_shared<LoadedLibrary>(handle);  // the file goes with `dir`; the mapping stays
}

}  // namespace tessera::byoc
