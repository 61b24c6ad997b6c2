// The VM's builtins: run-time functions the VM calls by name with the CallBuiltin instruction
// (vm.h, executable version 4), for work that is no compiled kernel: a library call whose result's
// shape only the call itself can know (Relax VM's "vm.builtin.*" packed functions play this part in
// TVM). A builtin takes tensors and string attributes and returns one new tensor, allocated
// through the VM's storage pool.
//
// The builtins (one table, vm_builtins.cc):
//   image_decode(encoded: uint8 [n]; attrs pixel_format = "RGB" | "BGR" | "Grayscale")
//       -> uint8 [height, width, 3 or 1]: ONNX ImageDecoder (runtime/image_decode.h); an undecodable
//          stream gives [0, 0, channels], as the spec says.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// Allocates the builtin's result (the VM passes its storage pool's allocator).
using BuiltinAllocator = std::function<NDArray(const std::vector<int64_t>& shape, DataType dtype)>;

struct VMBuiltin {
  std::string name;
  /// The number of tensor arguments.
  int num_args = 0;
  /// The attributes it reads; CallBuiltin's "attrs" may hold only these, every one of them.
  std::vector<std::string> attrs;
  /// Checks the attributes (UserError naming the bad one); run when the executable is loaded.
  std::function<void(const std::map<std::string, std::string>& attrs)> check_attrs;
  /// Runs it. Throws UserError for arguments it cannot take (a wrong dtype or rank).
  std::function<NDArray(const std::vector<NDArray>& args, const std::map<std::string, std::string>& attrs,
                        const BuiltinAllocator& alloc)>
      run;
};

/// The builtin named `name`, or nullptr.
const VMBuiltin* FindVMBuiltin(const std::string& name);
/// Every builtin's name, sorted (for messages).
std::vector<std::string> VMBuiltinNames();

}  // namespace tessera::runtime
