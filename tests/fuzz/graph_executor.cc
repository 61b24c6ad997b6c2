// Fuzz target graph_executor: what the runtime's loader parses of an artifact's embedded data —
// the graph JSON and the params blob — through a GraphExecutor built over a symbol table in
// memory (no library): ParseGraphPlan, LoadParams, the storages and their views, the params'
// match with the graph, each node's kernel lookup; then one Run (every kernel a no-op), SetInput
// and GetOutput. Input: the graph JSON, a NUL byte, the params blob (no NUL: the JSON alone).
#include <cstring>
#include <map>

#include "fuzz_target.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/module.h"

namespace {

int32_t NoOpKernel(void* const*) { return 0; }

class Symbols : public tessera::runtime::SymbolSource {
 public:
  Symbols(std::string json, std::string blob) : json_(std::move(json)), blob_(std::move(blob)), size_(blob_.size()) {}
  void* Lookup(const std::string& name) override {
    using namespace tessera::runtime;
    if (name == kGraphJsonSymbol) return json_.data();
    if (name == kParamsBlobSymbol) return blob_.data();
    if (name == kParamsSizeSymbol) return &size_;
    if (name.rfind("__tessera", 0) == 0) return nullptr;
    return reinterpret_cast<void*>(&NoOpKernel);  // every kernel exists and does nothing
  }

 private:
  std::string json_, blob_;
  int64_t size_;
};

// Storages the executor would allocate, before it does: bounded so that a plan asking for
// terabytes is not "found" as an out-of-memory crash (a valid plan may ask for that much).
constexpr size_t kMaxStorageBytes = size_t{256} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  const std::string_view bytes = tessera::fuzz::Bytes(data, size);
  const size_t nul = bytes.find('\0');
  std::string json(bytes.substr(0, nul));
  std::string blob(nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1));
  GraphPlan plan;
  if (!tessera::fuzz::AcceptUserErrors([&] { plan = ParseGraphPlan(json, "fuzz"); })) return 0;
  size_t total = 0;
  for (const PlanStorage& s : plan.storages) {
    if (s.size_bytes > kMaxStorageBytes - total) return 0;
    total += s.size_bytes;
  }
  tessera::fuzz::AcceptUserErrors([&] {
    GraphExecutor ex(Module(std::make_shared<Symbols>(std::move(json), std::move(blob)), "fuzz"));
    for (int i = 0; i < ex.NumInputs(); ++i) {
      NDArray in = NDArray::Empty(ex.InputShape(i), ex.InputDType(i));
      std::memset(in.raw_data(), 0, in.NBytes());
      ex.SetInput(i, in);
    }
    ex.Run();
    for (int i = 0; i < ex.NumOutputs(); ++i) ex.GetOutput(ex.OutputName(i));
  });
  return 0;
}
