#include "executor_common.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/param_io.h"

namespace tessera::runtime {

std::map<std::string, NDArray> LoadModuleParams(const Module& module) {
  std::string_view blob = module.ParamsBlob();
  if (blob.empty()) return {};
  try {
    return LoadParams(blob.data(), blob.size());
  } catch (const UserError& e) {
    TESSERA_THROW(UserError, "module '", module.origin(), "': ", e.what());
  }
}

void CheckGuard(const std::string& origin, const std::string& name, const NDArray& given, const NDArray& compiled) {
  if (given.shape() == compiled.shape() && std::memcmp(given.raw_data(), compiled.raw_data(), compiled.NBytes()) == 0)
    return;
  TESSERA_THROW(UserError, "input '", name, "' is ", ValuesToString(given), " but module '", origin,
                "' was compiled for ", ValuesToString(compiled), " only (tessera compile --input-value ", name,
                "=...: the model was specialized for that value); pass that value, or compile again for this one");
}

void ThrowKernelFailure(int32_t status, const std::string& where, const std::vector<std::string>& checks) {
  if (status == kKernelIndexOutOfRange) {
    std::string who;
    for (const std::string& c : checks) who += (who.empty() ? "" : ", ") + c;
    if (checks.empty()) who = "an index input";
    else if (checks.size() > 1) who = "one of " + who;
    TESSERA_THROW(UserError, "an index is out of range in ", who, ": an input of this run holds an index outside "
                  "[-n, n) of the axis it indexes (n its extent); computed by ", where,
                  ". Check the index values given to the model");
  }
  if (status == kKernelOutOfMemory)
    TESSERA_THROW(UserError, where, " could not allocate its scratch memory: the machine is out of memory");
  TESSERA_THROW(Error, where, " failed with status ", status);
}

void CheckInputValue(const char* api, const std::string& name, DataType dtype, const std::vector<int64_t>& shape,
                     const NDArray& value, const std::vector<std::string>& dim_names) {
  TESSERA_CHECK(value.defined(), api, ": the array given for input '", name, "' is null");
  TESSERA_CHECK(value.dtype() == dtype, api, ": input '", name, "' expects dtype ", dtype.str(), ", got ",
                value.dtype().str());
  if (ShapeAccepts(shape, value.shape())) return;
  const bool symbolic = std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
  std::string detail;
  if (symbolic && shape.size() != value.shape().size()) {
    detail = " (rank " + std::to_string(value.shape().size()) + ", not " + std::to_string(shape.size()) + ")";
  } else if (symbolic) {
    for (size_t d = 0; d < shape.size() && detail.empty(); ++d)
      if (shape[d] >= 0 && shape[d] != value.shape()[d])
        detail = ": dim " + std::to_string(d) + " is " + std::to_string(value.shape()[d]) + ", not " +
                 std::to_string(shape[d]);
  }
  TESSERA_THROW(UserError, api, ": input '", name, "' expects shape ", ShapeToString(shape, dim_names), ", got ",
                ShapeToString(value.shape()), detail);
}

}  // namespace tessera::runtime
