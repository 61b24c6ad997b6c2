#include "dlpack_bridge.h"

#include <vector>

#include "tessera/support/error.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

// The DLManagedTensor handed to NDArray::FromDLPack, with what keeps the Python array alive.
struct Holder {
  DLManagedTensor tensor{};
  PyArray array;
  std::vector<int64_t> shape, strides;
};

void DeleteHolder(DLManagedTensor* t) {
  nb::gil_scoped_acquire gil;  // dropping `array` decrefs a Python object
  delete static_cast<Holder*>(t->manager_ctx);
}

}  // namespace

runtime::NDArray FromPython(const PyArray& array, const std::string& what) {
  auto* h = new Holder;
  h->array = array;
  const size_t ndim = array.ndim();
  for (size_t i = 0; i < ndim; ++i) {
    h->shape.push_back(static_cast<int64_t>(array.shape(i)));
    h->strides.push_back(array.stride(i));
  }
  DLTensor& t = h->tensor.dl_tensor;
  t.data = const_cast<void*>(array.data());
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(ndim);
  const nb::dlpack::dtype dt = array.dtype();
  t.dtype = {dt.code, dt.bits, dt.lanes};
  t.shape = h->shape.data();
  t.strides = h->strides.data();
  t.byte_offset = 0;
  h->tensor.manager_ctx = h;
  h->tensor.deleter = DeleteHolder;
  try {
    return runtime::NDArray::FromDLPack(&h->tensor);  // owns h from here, also when it throws
  } catch (const UserError& e) {
    TESSERA_THROW(UserError, what, ": ", e.what());
  }
}

nb::object ToPython(const runtime::NDArray& array, bool torch) {
  auto* keep = new runtime::NDArray(array);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<runtime::NDArray*>(p); });
  const DLTensor& t = array.dl_tensor();
  std::vector<size_t> shape(array.shape().begin(), array.shape().end());
  nb::dlpack::dtype dt{t.dtype.code, t.dtype.bits, t.dtype.lanes};
  if (torch)
    return nb::cast(nb::ndarray<nb::pytorch>(array.raw_data(), shape.size(), shape.data(), owner, nullptr, dt));
  return nb::cast(nb::ndarray<nb::numpy>(array.raw_data(), shape.size(), shape.data(), owner, nullptr, dt));
}

}  // namespace tessera::python
