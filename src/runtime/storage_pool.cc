#include "storage_pool.h"

#include <algorithm>

namespace tessera::runtime {

NDArray StoragePool::Alloc(const std::vector<int64_t>& shape, DataType dtype) {
  size_t nbytes = static_cast<size_t>(dtype.bytes());
  for (int64_t d : shape) nbytes *= static_cast<size_t>(d);
  const size_t need =
      nbytes == 0 ? kAllocAlignment : (nbytes + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
  Storage* best = nullptr;
  for (Storage& s : storages_) {
    const size_t size = s.array.NBytes();
    if (size < need || size / 2 > need || s.array.StorageUseCount() != 1) continue;
    if (!best || size < best->array.NBytes()) best = &s;
  }
  if (!best) {
    storages_.push_back({NDArray::Empty({static_cast<int64_t>(need)}, DataType::UInt(8)), 0});
    bytes_ += need;
    ++allocations_;
    best = &storages_.back();
  }
  best->last_run = run_;
  return best->array.CreateView(shape, dtype, 0);
}

void StoragePool::EndRun() {
  auto idle = [&](const Storage& s) { return s.last_run != run_ && s.array.StorageUseCount() == 1; };
  for (const Storage& s : storages_)
    if (idle(s)) bytes_ -= s.array.NBytes();
  storages_.erase(std::remove_if(storages_.begin(), storages_.end(), idle), storages_.end());
}

}  // namespace tessera::runtime
