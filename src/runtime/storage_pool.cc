#include "storage_pool.h"

namespace tessera::runtime {

NDArray StoragePool::Alloc(const std::vector<int64_t>& shape, DataType dtype) {
  size_t nbytes = static_cast<size_t>(dtype.bytes());
  for (int64_t d : shape) nbytes *= static_cast<size_t>(d);
  const size_t need =
      nbytes == 0 ? kAllocAlignment : (nbytes + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
  const NDArray* best = nullptr;
  for (const NDArray& s : storages_) {
    const size_t size = s.NBytes();
    if (size < need || size / 2 > need || s.StorageUseCount() != 1) continue;
    if (!best || size < best->NBytes()) best = &s;
  }
  if (!best) {
    storages_.push_back(NDArray::Empty({static_cast<int64_t>(need)}, DataType::UInt(8)));
    bytes_ += need;
    best = &storages_.back();
  }
  return best->CreateView(shape, dtype, 0);
}

}  // namespace tessera::runtime
