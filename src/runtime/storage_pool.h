// Internal to the runtime: the virtual machine's storage pool (vm.h "Memory").
//
// The pool keeps every storage it allocated (a uint8 array whose size is a multiple of 64) and
// hands out views of them. A storage is free when no array but the pool's own holds it
// (NDArray::StorageUseCount() == 1): the views handed out, their copies and the views made of
// them (ReshapeTensor) all keep it in use, so it comes back by itself when the last of them goes.
// Alloc takes the smallest free storage of at least the tensor's bytes rounded up to 64 (at least
// 64) and at most twice that; else it allocates a new one of exactly that size.
// Not thread-safe (the VM's Invoke is one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

class StoragePool {
 public:
  /// An uninitialized, 64-byte aligned array of `dtype` and `shape` (valid: non-negative extents
  /// whose byte size does not overflow). UserError when the machine is out of memory.
  NDArray Alloc(const std::vector<int64_t>& shape, DataType dtype);

  /// Bytes of every storage the pool holds, free or in use.
  size_t Bytes() const { return bytes_; }
  /// Number of storages the pool has allocated.
  int64_t Allocations() const { return static_cast<int64_t>(storages_.size()); }

 private:
  std::vector<NDArray> storages_;
  size_t bytes_ = 0;
};

}  // namespace tessera::runtime
