#include "storage_pool.h"

#include <algorithm>

namespace tessera::runtime {

NDArray StoragePool::Alloc(const std::vector<int64_t>& shape, DataType dtype) {
  size_t nbytes = static_cast<size_t>(dtype.bytes());
  for (int64_t d : shape) nbytes *= static_cast<size_t>(d);
  const size_t need =
      nbytes == 0 ? kAllocAlignment : (nbytes + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
  Storage* best = nullptr;
  for (auto it = storages_.lower_bound(need); it != storages_.end() && it->first / 2 <= need; ++it) {
    if (it->second.array.StorageUseCount() == 1) {
      best = &it->second;  // the smallest free one: the map is ordered by size
      break;
    }
  }
  if (!best) {
    auto it = storages_.emplace(need, Storage{NDArray::Empty({static_cast<int64_t>(need)}, DataType::UInt(8)), 0});
    bytes_ += need;
    ++allocations_;
    best = &it->second;
  }
  best->last_run = run_;
  return best->array.CreateView(shape, dtype, 0);
}

void StoragePool::EndRun() {
  for (auto it = storages_.begin(); it != storages_.end();) {
    if (it->second.last_run != run_ && it->second.array.StorageUseCount() == 1) {
      bytes_ -= it->first;
      it = storages_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tessera::runtime
