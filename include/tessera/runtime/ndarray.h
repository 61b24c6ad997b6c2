// NDArray: a dense, row-major, reference-counted tensor in host memory.
//
// An NDArray is a handle: copying it shares the data (like TVM's runtime::NDArray
// and std::shared_ptr), so a kernel argument, a graph executor storage and a user's
// output can all refer to one buffer. Use Clone() for a deep copy and CopyFrom()
// to copy data into an existing array. Const-ness is shallow, as with a pointer:
// a const NDArray still gives mutable data.
//
// Memory: Empty() allocates NBytes() rounded up to 64 bytes, 64-byte aligned
// (kAllocAlignment: one cache line, one AVX-512 register), uninitialized. Views
// made by CreateView() share that allocation; a view's data is aligned when its
// byte offset is a multiple of 64.
//
// DLPack: dl_tensor() is a non-owning DLTensor view (dlpack.h) valid while any
// handle to this NDArray lives; ToDLPack() hands out an owning DLManagedTensor.
//
// Errors: invalid shapes (negative extents, byte-size overflow), mismatched copies
// and views larger than their storage throw tessera::UserError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/runtime/data_type.h"
#include "tessera/runtime/device.h"
#include "tessera/runtime/dlpack.h"

namespace tessera::runtime {

/// Alignment in bytes of every allocation the runtime makes.
inline constexpr size_t kAllocAlignment = 64;

/// The scalar DataType of a C++ element type, or Void() when T has none (used by
/// NDArray::data<T>() to check the element type).
template <typename T>
constexpr DataType DataTypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DataType::Bool();
  else if constexpr (std::is_same_v<U, float>) return DataType::Float(32);
  else if constexpr (std::is_same_v<U, double>) return DataType::Float(64);
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) return DataType::Int(8 * sizeof(U));
  else if constexpr (std::is_integral_v<U>) return DataType::UInt(8 * sizeof(U));
  else return DataType::Void();
}

class NDArray {
 public:
  /// A null handle: defined() is false and every accessor but defined() is invalid.
  NDArray() = default;

  /// Allocates an uninitialized array. Every extent must be >= 0 (0 gives an empty
  /// array with a valid, aligned data pointer). Throws UserError on a negative extent,
  /// a size overflow, a void dtype or a non-CPU device.
  static NDArray Empty(std::vector<int64_t> shape, DataType dtype, Device device = Device::CPU());

  /// Takes ownership of a DLPack tensor (its deleter runs when the last handle goes).
  /// It must be on the CPU and compact row-major (strides NULL or the row-major
  /// strides); its data need not be 64-byte aligned. Throws UserError otherwise
  /// (and then still calls the tensor's deleter).
  static NDArray FromDLPack(DLManagedTensor* tensor);

  bool defined() const { return c_ != nullptr; }

  const std::vector<int64_t>& shape() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  DataType dtype() const;
  Device device() const;
  /// Product of the extents (1 for a 0-d array).
  int64_t NumElements() const;
  /// NumElements() * dtype().bytes().
  size_t NBytes() const;

  /// The first element (shallow const, like a pointer).
  void* raw_data() const;
  /// The first element as T*. Throws UserError when T does not match dtype() (for
  /// element types DataTypeOf<T> knows) or its size differs from dtype().bytes().
  template <typename T>
  T* data() const {
    CheckElementType(DataTypeOf<T>(), sizeof(T));
    return static_cast<T*>(raw_data());
  }

  /// Copies src's data into this array. dtype and shape must be equal (UserError).
  void CopyFrom(const NDArray& src) const;
  /// Copies nbytes from host memory; nbytes must equal NBytes() (UserError).
  void CopyFromBytes(const void* src, size_t nbytes) const;
  /// Copies NBytes() to host memory; nbytes must equal NBytes() (UserError).
  void CopyToBytes(void* dst, size_t nbytes) const;

  /// A new array with its own storage holding a copy of the data.
  NDArray Clone() const;

  /// A view with another shape over the same storage and dtype, starting at this
  /// array's first byte (e.g. a zero-copy reshape). Its NBytes() must not exceed
  /// the bytes available from this array's start to the end of its storage.
  NDArray CreateView(std::vector<int64_t> shape) const;
  /// A view with another shape and dtype at `byte_offset` bytes past this array's
  /// first byte. [byte_offset, byte_offset + NBytes(view)) must lie inside the
  /// storage (UserError otherwise). The graph executor carves values out of its
  /// storages this way.
  NDArray CreateView(std::vector<int64_t> shape, DataType dtype, size_t byte_offset) const;

  /// True when both handles refer to the same underlying allocation.
  bool SharesStorageWith(const NDArray& other) const;
  /// Number of handles sharing this array (copies of it), as shared_ptr::use_count.
  long UseCount() const;
  /// Number of distinct arrays (this one and the views made from it or its
  /// storage, each counted once however many copies it has) holding the allocation.
  long StorageUseCount() const;

  /// A non-owning DLTensor of this array (strides NULL, byte_offset 0), valid while
  /// any copy of this handle lives.
  const DLTensor& dl_tensor() const;
  /// An owning DLManagedTensor that keeps the data alive until its deleter is called.
  DLManagedTensor* ToDLPack() const;

 private:
  struct Container;
  explicit NDArray(std::shared_ptr<Container> c) : c_(std::move(c)) {}
  void CheckElementType(DataType expected, size_t elem_size) const;

  std::shared_ptr<Container> c_;
};

/// "[1, 3, 224, 224]": for error messages.
std::string ShapeToString(const std::vector<int64_t>& shape);
/// The first `max_elements` values of a, for messages: "[16000]", "[1, 2, 3, ...]"; for dtypes
/// other than int32 / int64 / float32 / float64, its dtype and shape ("uint8 [2, 3]").
std::string ValuesToString(const NDArray& a, int64_t max_elements = 8);

}  // namespace tessera::runtime

namespace tessera {
using runtime::NDArray;
}  // namespace tessera
