// Internal to the runtime: what the graph executor (graph_executor.cc) and the virtual machine
// (vm.cc) share, so that both load parameters, check inputs and guards and report kernel failures
// with the same messages.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

/// The tensors of `module`'s params blob (none when it has no blob). UserError naming the module
/// when the blob is corrupt.
std::map<std::string, NDArray> LoadModuleParams(const Module& module);

/// A guard (graph_executor.h "guards"): UserError naming input `name`, the value `given` and the
/// value `compiled` that module `origin` was specialized for, unless their bytes are equal
/// (`given` has compiled's dtype and shape).
void CheckGuard(const std::string& origin, const std::string& name, const NDArray& given, const NDArray& compiled);

/// Throws the error of a kernel that returned `status` (kernel_abi.h): UserError for
/// kKernelIndexOutOfRange (naming the model nodes of `checks`) and kKernelOutOfMemory,
/// tessera::Error otherwise. `where` names the caller ("node 'n' (kernel 'k') of module 'm'").
[[noreturn]] void ThrowKernelFailure(int32_t status, const std::string& where, const std::vector<std::string>& checks);

/// UserError "<api>: input '<name>' expects dtype ..., got ..." (or shape, or a null array)
/// unless `value` is a defined array of `dtype` and `shape`: its rank and every static dim (a dim
/// of `shape` that is -1, named by `dim_names`, takes any extent: executor.h ShapeAccepts).
void CheckInputValue(const char* api, const std::string& name, DataType dtype, const std::vector<int64_t>& shape,
                     const NDArray& value, const std::vector<std::string>& dim_names = {});

// Over lists of entries with a `name` (inputs, outputs).

/// `index`, or UserError when it is outside `list` ("input index 3 is out of range: ...").
template <typename T>
int CheckIndex(int index, const std::vector<T>& list, const char* what) {
  TESSERA_CHECK(index >= 0 && index < static_cast<int>(list.size()), what, " index ", index,
                " is out of range: the model has ", list.size(), " ", what, "s");
  return index;
}
/// "'a', 'b'" (or "(none)"): the names, for messages.
template <typename T>
std::string QuotedNames(const std::vector<T>& list) {
  std::string s;
  for (const T& e : list) s += (s.empty() ? "'" : ", '") + e.name + "'";
  return s.empty() ? "(none)" : s;
}
/// The index of the entry named `name`, or -1.
template <typename T>
int FindByName(const std::vector<T>& list, const std::string& name) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace tessera::runtime
