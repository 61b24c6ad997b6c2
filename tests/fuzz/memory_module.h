// The symbols of a model library held in memory, for the fuzz targets that load an executor's
// program (graph_executor.cc, vm.cc): the program JSON, the params blob and its size; every
// other name is a kernel that exists and does nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/module.h"

namespace tessera::fuzz {

class MemorySymbols : public runtime::SymbolSource {
 public:
  MemorySymbols(std::string json, std::string blob)
      : json_(std::move(json)), blob_(std::move(blob)), size_(static_cast<int64_t>(blob_.size())) {}
  void* Lookup(const std::string& name) override {
    if (name == runtime::kGraphJsonSymbol) return json_.data();
    if (name == runtime::kParamsBlobSymbol) return blob_.data();
    if (name == runtime::kParamsSizeSymbol) return &size_;
    if (name.rfind("__tessera", 0) == 0) return nullptr;
    return reinterpret_cast<void*>(&NoOpKernel);
  }

 private:
  static int32_t NoOpKernel(void* const*) { return 0; }
  std::string json_, blob_;
  int64_t size_;
};

/// A fuzz input split into the program JSON and the params blob at its first NUL byte (no NUL:
/// the JSON alone, an empty blob).
struct ProgramAndParams {
  std::string json, blob;
};
inline ProgramAndParams SplitAtNul(std::string_view bytes) {
  const size_t nul = bytes.find('\0');
  return {std::string(bytes.substr(0, nul)),
          std::string(nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1))};
}

}  // namespace tessera::fuzz
