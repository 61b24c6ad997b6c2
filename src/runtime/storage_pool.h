// Internal to the runtime: the virtual machine's storage pool (vm.h "Memory").
//
// The pool keeps the storages it allocated (uint8 arrays whose size is a multiple of 64) and hands
// out views of them. A storage is free when no array but the pool's own holds it
// (NDArray::StorageUseCount() == 1): the views handed out, their copies and the views made of
// them (ReshapeTensor) all keep it in use, so it comes back by itself when the last of them goes.
// Alloc takes the smallest free storage of at least the tensor's bytes rounded up to 64 (at least
// 64) and at most twice that; else it allocates a new one of exactly that size. The storages are
// kept ordered by size (Alloc skips the smaller ones in O(log n)); among those of the sizes that fit
// it looks at each in turn until a free one, so a deep recursion (vm.h, functions) that holds
// thousands of storages of one size alive costs O(n) per Alloc (a known cost: a free list would
// need the arrays to tell the pool when they are dropped).
//
// Release: the VM brackets each run with BeginRun() / EndRun(); EndRun frees every storage that is
// free and that no Alloc of that run took (an idle run). So with shapes that change from run to
// run the pool holds, between runs, only storages the last run took and the outputs the caller
// still holds; with the same shapes every run takes the same storages and nothing is freed or
// allocated again.
// Not thread-safe (the VM's Invoke is one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

class StoragePool {
 public:
  /// An uninitialized, 64-byte aligned array of `dtype` and `shape` (valid: non-negative extents
  /// whose byte size does not overflow). UserError when the machine is out of memory.
  NDArray Alloc(const std::vector<int64_t>& shape, DataType dtype);

  /// A run starts: the storages Alloc takes from now on are this run's.
  void BeginRun() { ++run_; }
  /// The run ended: frees every free storage that this run did not take.
  void EndRun();

  /// Bytes of every storage the pool holds, free or in use.
  size_t Bytes() const { return bytes_; }
  /// Number of storages the pool has allocated since it was made (freed ones included).
  int64_t Allocations() const { return allocations_; }
  /// Number of storages the pool holds now.
  size_t NumStorages() const { return storages_.size(); }

 private:
  struct Storage {
    NDArray array;
    uint64_t last_run = 0;  // the last run whose Alloc took it
  };
  std::multimap<size_t, Storage> storages_;  // by size in bytes
  size_t bytes_ = 0;
  int64_t allocations_ = 0;
  uint64_t run_ = 0;
};

}  // namespace tessera::runtime
