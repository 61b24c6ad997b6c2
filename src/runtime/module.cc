#include "tessera/runtime/module.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdint>

#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::runtime {
namespace {

// A dlopen handle as a SymbolSource; dlcloses when the last Module goes.
class SharedLibrary : public SymbolSource {
 public:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  ~SharedLibrary() override { dlclose(handle_); }
  void* Lookup(const std::string& name) override { return dlsym(handle_, name.c_str()); }

 private:
  void* handle_;
};

}  // namespace

struct Module::Impl {
  std::shared_ptr<SymbolSource> source;
  std::string origin;
  std::shared_ptr<void> keep_alive;
};

Module::Module(std::shared_ptr<SymbolSource> source, std::string origin,
               std::shared_ptr<void> keep_alive)
    : impl_(std::make_shared<Impl>()) {
  TESSERA_CHECK(source != nullptr, "Module: the symbol source of '", origin, "' is null");
  impl_->source = std::move(source);
  impl_->origin = std::move(origin);
  impl_->keep_alive = std::move(keep_alive);
  // Connect the library's parallel loops to this runtime's thread pool. Threads that load the
  // same library (dlopen shares one copy) share this global while others run its kernels, which
  // read it: only the first Module stores (release), later ones only see it set (acquire), so
  // no store ever races with a running kernel's read.
  if (void* slot = Lookup(kParallelLaunchSymbol)) {
    auto* launch = static_cast<TesseraParallelLaunchFn*>(slot);
    if (__atomic_load_n(launch, __ATOMIC_ACQUIRE) != &TesseraParallelLaunch)
      __atomic_store_n(launch, &TesseraParallelLaunch, __ATOMIC_RELEASE);
  }
}

Module Module::LoadFromFile(const std::string& path) {
  struct stat st {};
  TESSERA_CHECK(stat(path.c_str(), &st) == 0, "model library '", path,
                "' does not exist: check the path, or compile the model first (tessera compile)");
  TESSERA_CHECK(S_ISREG(st.st_mode), "model library '", path,
                "' is not a regular file: pass the path of the .so that tessera compile wrote");
  // A library for another architecture: say so (dlopen would only say it cannot open it).
  const std::string arch = ElfArch(path);
  TESSERA_CHECK(arch.empty() || arch == HostArch(), "model library '", path, "' was compiled for ", arch,
                " but this machine is ", HostArch(), ": run it on a", arch == "aarch64" || arch == "x86_64" ? "n " : " ",
                arch, " machine (tessera-runtime run there, or tessera run --rpc HOST:PORT with `tessera-runtime rpc "
                "server` running there), or recompile it for this machine with --target native");
  CheckElfImage(path, static_cast<uint64_t>(st.st_size));  // a truncated copy would fault inside dlopen
  // A name without '/' would make dlopen search the library path instead of the file.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  void* handle = dlopen(open_path.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char* why = dlerror();
    TESSERA_THROW(UserError, "cannot load model library '", path, "': ", why ? why : "unknown error",
                  ". The file is not a shared library for this machine (corrupt, truncated or "
                  "built for another target): compile it again with tessera compile");
  }
  auto lib = std::make_shared<SharedLibrary>(handle);
  TESSERA_CHECK(lib->Lookup(kParallelLaunchSymbol) || lib->Lookup(kGraphJsonSymbol), "'", path,
                "' is a shared library but not a Tessera model: it defines neither ",
                kParallelLaunchSymbol, " nor ", kGraphJsonSymbol,
                ". Pass the library that tessera compile wrote");
  // Before any kernel runs (the Module constructor runs none): can this machine run it?
  const char* record = static_cast<const char*>(lib->Lookup(kTargetInfoSymbol));
  TESSERA_CHECK(record != nullptr, "model library '", path, "' has no target record (", kTargetInfoSymbol,
                "): it was built by a Tessera older than this runtime (", TESSERA_VERSION,
                "); recompile the model with this version");
  CheckRunsHere(ParseArtifactInfo(record, path), path);
  // Was the library's data changed after compilation? (Before any kernel runs: the Module
  // constructor below runs none.)
  const auto* hash = static_cast<const uint64_t*>(lib->Lookup(kContentHashSymbol));
  TESSERA_CHECK(hash != nullptr, "model library '", path, "' has no content hash (", kContentHashSymbol,
                "): the library is corrupt or was not written by tessera compile ", TESSERA_VERSION,
                "; compile it again");
  Module module(std::move(lib), path);
  CheckContentHash(*hash, module.GraphJson(), module.ParamsBlob(), path);
  return module;
}

void* Module::Lookup(const std::string& name) const { return impl_->source->Lookup(name); }

bool Module::HasSymbol(const std::string& name) const { return Lookup(name) != nullptr; }

TesseraKernelFn Module::GetKernel(const std::string& name) const {
  void* sym = Lookup(name);
  TESSERA_CHECK(sym != nullptr, "kernel '", name, "' is not defined in module '", impl_->origin,
                "': the graph and the library do not match; rebuild the model");
  return reinterpret_cast<TesseraKernelFn>(sym);
}

std::string_view Module::GraphJson() const {
  const char* json = static_cast<const char*>(Lookup(kGraphJsonSymbol));
  TESSERA_CHECK(json != nullptr, "module '", impl_->origin, "' has no executor graph (symbol ",
                kGraphJsonSymbol, "): it holds kernels only; build it as a model to run it");
  return std::string_view(json);
}

std::string_view Module::ParamsBlob() const {
  const char* blob = static_cast<const char*>(Lookup(kParamsBlobSymbol));
  const auto* size = static_cast<const int64_t*>(Lookup(kParamsSizeSymbol));
  if (!blob && !size) return {};
  TESSERA_CHECK(blob && size, "module '", impl_->origin, "' defines ",
                blob ? kParamsBlobSymbol : kParamsSizeSymbol, " but not ",
                blob ? kParamsSizeSymbol : kParamsBlobSymbol, ": the library is corrupt; rebuild it");
  TESSERA_CHECK(*size >= 0, "module '", impl_->origin, "': ", kParamsSizeSymbol, " is negative (",
                *size, "): the library is corrupt; rebuild it");
  return std::string_view(blob, static_cast<size_t>(*size));
}

const std::string& Module::origin() const { return impl_->origin; }

}  // namespace tessera::runtime
