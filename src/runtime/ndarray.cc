#include "tessera/runtime/ndarray.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::runtime {

// The shared allocation. Several Containers (views) may point to one Storage.
namespace {
struct Storage {
  void* base = nullptr;
  size_t nbytes = 0;
  // Frees base: std::free for our allocations, the DLPack deleter for adopted ones.
  void (*release)(Storage*) = nullptr;
  DLManagedTensor* adopted = nullptr;

  ~Storage() {
    if (release) release(this);
  }
};

size_t ComputeNumElements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    TESSERA_CHECK(d >= 0, "NDArray shape ", ShapeToString(shape),
                  " has a negative extent: every extent must be >= 0");
    TESSERA_CHECK(!__builtin_mul_overflow(n, static_cast<size_t>(d), &n), "NDArray shape ",
                  ShapeToString(shape), " is too large: its element count overflows");
  }
  return n;
}

size_t ComputeNBytes(const std::vector<int64_t>& shape, DataType dtype) {
  size_t n = ComputeNumElements(shape);
  size_t bytes = 0;
  TESSERA_CHECK(!__builtin_mul_overflow(n, static_cast<size_t>(dtype.bytes()), &bytes),
                "NDArray shape ", ShapeToString(shape), " of ", dtype.str(),
                " is too large: its byte size overflows");
  return bytes;
}
}  // namespace

struct NDArray::Container {
  std::shared_ptr<Storage> storage;
  size_t byte_offset = 0;  // of the first element inside storage
  std::vector<int64_t> shape;
  DataType dtype;
  Device device;
  DLTensor dl{};

  void FillDLTensor() {
    dl.data = static_cast<char*>(storage->base) + byte_offset;
    dl.device = DLDevice{static_cast<DLDeviceType>(device.type), device.id};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = DLDataType{static_cast<uint8_t>(dtype.code()), static_cast<uint8_t>(dtype.bits()),
                          static_cast<uint16_t>(dtype.lanes())};
    if (dtype.is_bool()) dl.dtype = DLDataType{kDLBool, 8, static_cast<uint16_t>(dtype.lanes())};
    dl.shape = shape.empty() ? nullptr : shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
};

std::string ValuesToString(const NDArray& a, int64_t max_elements) {
  const DataType t = a.dtype();
  if (t != DataType::Int(64) && t != DataType::Int(32) && t != DataType::Float(32) && t != DataType::Float(64))
    return t.str() + " " + ShapeToString(a.shape());
  const int64_t n = std::min<int64_t>(a.NumElements(), max_elements);
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) os << ", ";
    if (t == DataType::Int(64)) os << a.data<int64_t>()[i];
    else if (t == DataType::Int(32)) os << a.data<int32_t>()[i];
    else if (t == DataType::Float(32)) os << a.data<float>()[i];
    else os << a.data<double>()[i];
  }
  os << (a.NumElements() > n ? ", ...]" : "]");
  return os.str();
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

NDArray NDArray::Empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  TESSERA_CHECK(!dtype.is_void(), "NDArray::Empty: cannot allocate an array of dtype void");
  TESSERA_CHECK(device.type == DeviceType::kCPU, "NDArray::Empty: device ", device.str(),
                " is not supported: the runtime allocates on the CPU only");
  size_t nbytes = ComputeNBytes(shape, dtype);
  // No allocator can satisfy more than PTRDIFF_MAX bytes; the bound also keeps the rounding
  // below from wrapping to a tiny buffer (e.g. 2^64 - 1 bytes of uint8 rounded up to 0).
  void* base = nullptr;
  if (nbytes <= static_cast<size_t>(PTRDIFF_MAX)) {
    size_t alloc = (nbytes + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
    if (alloc == 0) alloc = kAllocAlignment;  // a valid, aligned pointer even when empty
    base = std::aligned_alloc(kAllocAlignment, alloc);
  }
  if (!base) {
    TESSERA_THROW(UserError, "cannot allocate ", nbytes, " bytes (", static_cast<double>(nbytes) / (1 << 20),
                  " MiB) for a tensor of shape ", ShapeToString(shape), " and dtype ", dtype.str(),
                  ": out of memory; check the model's shapes or run it on a machine with more memory");
  }
  auto storage = std::make_shared<Storage>();
  storage->base = base;
  storage->nbytes = nbytes;  // views may use the requested bytes, not the rounding
  storage->release = [](Storage* s) { std::free(s->base); };
  auto c = std::make_shared<Container>();
  c->storage = std::move(storage);
  c->shape = std::move(shape);
  c->dtype = dtype;
  c->device = device;
  c->FillDLTensor();
  return NDArray(std::move(c));
}

NDArray NDArray::FromDLPack(DLManagedTensor* tensor) {
  TESSERA_CHECK(tensor != nullptr, "NDArray::FromDLPack: the tensor is NULL");
  auto storage = std::make_shared<Storage>();
  storage->adopted = tensor;
  storage->release = [](Storage* s) {
    if (s->adopted->deleter) s->adopted->deleter(s->adopted);
  };
  // From here on the storage owns the tensor: every error path below releases it.
  const DLTensor& t = tensor->dl_tensor;
  TESSERA_CHECK(t.device.device_type == kDLCPU, "NDArray::FromDLPack: device type ",
                static_cast<int>(t.device.device_type),
                " is not supported: copy the tensor to the CPU first");
  TESSERA_CHECK(t.ndim >= 0 && (t.ndim == 0 || t.shape != nullptr),
                "NDArray::FromDLPack: invalid ndim / shape");
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  DataType dtype = t.dtype.code == kDLBool
                       ? DataType::Bool(t.dtype.lanes)
                       : DataType(static_cast<DataType::Code>(t.dtype.code), t.dtype.bits, t.dtype.lanes);
  TESSERA_CHECK(t.dtype.code <= kDLBfloat || t.dtype.code == kDLBool,
                "NDArray::FromDLPack: DLPack type code ", static_cast<int>(t.dtype.code),
                " is not supported (complex?)");
  // An empty tensor (an extent 0, e.g. a dynamic dim in this call) has no layout to check: numpy
  // gives it strides of 0.
  const bool empty = std::find(shape.begin(), shape.end(), int64_t{0}) != shape.end();
  if (t.strides && !empty) {
    int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      TESSERA_CHECK(shape[i] == 1 || t.strides[i] == expected,
                    "NDArray::FromDLPack: the tensor is not compact row-major (strides): make it "
                    "contiguous first");
      expected *= shape[i];
    }
  }
  size_t nbytes = ComputeNBytes(shape, dtype);
  storage->base = static_cast<char*>(t.data) + t.byte_offset;
  storage->nbytes = nbytes;
  auto c = std::make_shared<Container>();
  c->storage = std::move(storage);
  c->shape = std::move(shape);
  c->dtype = dtype;
  c->device = Device::CPU(t.device.device_id);
  c->FillDLTensor();
  return NDArray(std::move(c));
}

const std::vector<int64_t>& NDArray::shape() const {
  TESSERA_ICHECK(c_, "shape() of a null NDArray");
  return c_->shape;
}
DataType NDArray::dtype() const {
  TESSERA_ICHECK(c_, "dtype() of a null NDArray");
  return c_->dtype;
}
Device NDArray::device() const {
  TESSERA_ICHECK(c_, "device() of a null NDArray");
  return c_->device;
}
int64_t NDArray::NumElements() const { return static_cast<int64_t>(ComputeNumElements(shape())); }
size_t NDArray::NBytes() const { return ComputeNBytes(shape(), dtype()); }

void* NDArray::raw_data() const {
  TESSERA_ICHECK(c_, "data of a null NDArray");
  return c_->dl.data;
}

void NDArray::CheckElementType(DataType expected, size_t elem_size) const {
  DataType have = dtype();
  if (!expected.is_void()) {
    TESSERA_CHECK(expected == have, "NDArray::data<", expected.str(), ">(): the array holds ",
                  have.str(), " elements");
  } else {
    TESSERA_CHECK(elem_size == static_cast<size_t>(have.bytes()), "NDArray::data<T>(): sizeof(T) = ",
                  elem_size, " but the array's ", have.str(), " elements have ", have.bytes(),
                  " bytes");
  }
}

void NDArray::CopyFrom(const NDArray& src) const {
  TESSERA_CHECK(src.defined() && defined(), "NDArray::CopyFrom: null NDArray");
  TESSERA_CHECK(src.dtype() == dtype() && src.shape() == shape(),
                "NDArray::CopyFrom: expected ", dtype().str(), " ", ShapeToString(shape()), ", got ",
                src.dtype().str(), " ", ShapeToString(src.shape()));
  if (src.raw_data() != raw_data()) std::memmove(raw_data(), src.raw_data(), NBytes());
}

void NDArray::CopyFromBytes(const void* src, size_t nbytes) const {
  TESSERA_CHECK(nbytes == NBytes(), "NDArray::CopyFromBytes: expected ", NBytes(), " bytes (",
                dtype().str(), " ", ShapeToString(shape()), "), got ", nbytes);
  if (nbytes) std::memcpy(raw_data(), src, nbytes);
}

void NDArray::CopyToBytes(void* dst, size_t nbytes) const {
  TESSERA_CHECK(nbytes == NBytes(), "NDArray::CopyToBytes: expected ", NBytes(), " bytes (",
                dtype().str(), " ", ShapeToString(shape()), "), got ", nbytes);
  if (nbytes) std::memcpy(dst, raw_data(), nbytes);
}

NDArray NDArray::Clone() const {
  NDArray out = Empty(shape(), dtype(), device());
  out.CopyFrom(*this);
  return out;
}

NDArray NDArray::CreateView(std::vector<int64_t> shape) const {
  return CreateView(std::move(shape), dtype(), 0);
}

NDArray NDArray::CreateView(std::vector<int64_t> shape, DataType dtype, size_t byte_offset) const {
  TESSERA_CHECK(defined(), "NDArray::CreateView of a null NDArray");
  TESSERA_CHECK(!dtype.is_void(), "NDArray::CreateView: dtype void");
  size_t nbytes = ComputeNBytes(shape, dtype);
  size_t start = c_->byte_offset + byte_offset;
  size_t end = 0;
  TESSERA_CHECK(start >= byte_offset && !__builtin_add_overflow(start, nbytes, &end) &&
                    end <= c_->storage->nbytes,
                "NDArray::CreateView: a ", dtype.str(), " ", ShapeToString(shape), " view (", nbytes,
                " bytes) at byte offset ", byte_offset, " does not fit in the ",
                c_->storage->nbytes - c_->byte_offset, " bytes available");
  auto c = std::make_shared<Container>();
  c->storage = c_->storage;
  c->byte_offset = start;
  c->shape = std::move(shape);
  c->dtype = dtype;
  c->device = c_->device;
  c->FillDLTensor();
  return NDArray(std::move(c));
}

bool NDArray::SharesStorageWith(const NDArray& other) const {
  return c_ && other.c_ && c_->storage == other.c_->storage;
}

long NDArray::UseCount() const { return c_.use_count(); }
long NDArray::StorageUseCount() const { return c_ ? c_->storage.use_count() : 0; }

const DLTensor& NDArray::dl_tensor() const {
  TESSERA_ICHECK(c_, "dl_tensor() of a null NDArray");
  return c_->dl;
}

namespace {
// What a DLManagedTensor we hand out owns: a handle keeping the data alive.
struct DLPackContext {
  NDArray array;
  DLManagedTensor managed;
};
}  // namespace

DLManagedTensor* NDArray::ToDLPack() const {
  TESSERA_CHECK(defined(), "NDArray::ToDLPack of a null NDArray");
  auto* ctx = new DLPackContext{*this, {}};
  ctx->managed.dl_tensor = dl_tensor();
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<DLPackContext*>(self->manager_ctx);
  };
  return &ctx->managed;
}

}  // namespace tessera::runtime
