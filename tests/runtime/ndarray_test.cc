#include "tessera/runtime/ndarray.h"

#include <gtest/gtest.h>

#include <cstring>

#include "test_util.h"

namespace tessera::runtime {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAllocAlignment == 0; }

TEST(NDArray, EmptyHasShapeDtypeSizeAndAlignment) {
  for (int64_t n : {0, 1, 3, 17, 64, 1000, 4097}) {
    NDArray a = NDArray::Empty({n}, DataType::Float(32));
    EXPECT_TRUE(Aligned(a.raw_data())) << n;
    EXPECT_EQ(a.NumElements(), n);
    EXPECT_EQ(a.NBytes(), static_cast<size_t>(n) * 4);
  }
  NDArray b = NDArray::Empty({2, 3, 5}, DataType::Int(8));
  EXPECT_EQ(b.ndim(), 3);
  EXPECT_EQ(b.shape(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(b.dtype(), DataType::Int(8));
  EXPECT_EQ(b.device(), Device::CPU());
  EXPECT_EQ(b.NBytes(), 30u);
  NDArray scalar = NDArray::Empty({}, DataType::Float(64));
  EXPECT_EQ(scalar.NumElements(), 1);
  EXPECT_EQ(scalar.NBytes(), 8u);
  EXPECT_EQ(NDArray::Empty({4}, DataType::Bool()).NBytes(), 4u);
  EXPECT_EQ(NDArray::Empty({4}, DataType::Float(32, 16)).NBytes(), 256u);
}

TEST(NDArray, NullHandle) {
  NDArray a;
  EXPECT_FALSE(a.defined());
  EXPECT_THROW(a.shape(), InternalError);
  EXPECT_EQ(a.StorageUseCount(), 0);
  EXPECT_EQ(a.UseCount(), 0);
}

TEST(NDArray, InvalidShapesThrowUserError) {
  EXPECT_THROW_WITH(NDArray::Empty({2, -1}, DataType::Float(32)), UserError, "negative", "[2, -1]");
  EXPECT_THROW_WITH(NDArray::Empty({int64_t{1} << 40, int64_t{1} << 40}, DataType::Float(32)), UserError,
                    "overflow");
  EXPECT_THROW(NDArray::Empty({2}, DataType::Void()), UserError);
  // 2^64 - 1 bytes of uint8 (3 * 5 * 17 * 257 x 641 * 65537 * 6700417): rounding the allocation
  // up to 64 bytes used to wrap to 0, giving a 64-byte buffer for it.
  EXPECT_THROW_WITH(NDArray::Empty({3 * 5 * 17 * 257, int64_t{641} * 65537 * 6700417}, DataType::UInt(8)),
                    UserError, "cannot allocate", "18446744073709551615 bytes");
}

TEST(NDArray, CopyingSharesDataAndCounts) {
  NDArray a = NDArray::Empty({4}, DataType::Float(32));
  EXPECT_EQ(a.UseCount(), 1);
  {
    NDArray b = a;
    EXPECT_EQ(a.UseCount(), 2);
    EXPECT_EQ(a.StorageUseCount(), 1);
    EXPECT_EQ(b.raw_data(), a.raw_data());
    EXPECT_TRUE(b.SharesStorageWith(a));
    b.data<float>()[2] = 42.0f;
  }
  EXPECT_EQ(a.UseCount(), 1);
  EXPECT_EQ(a.data<float>()[2], 42.0f);
}

TEST(NDArray, CloneIsDeepAndCopyFromChecks) {
  NDArray a = NDArray::Empty({2, 2}, DataType::Int(32));
  for (int i = 0; i < 4; ++i) a.data<int32_t>()[i] = i * 10;
  NDArray c = a.Clone();
  EXPECT_FALSE(c.SharesStorageWith(a));
  EXPECT_NE(c.raw_data(), a.raw_data());
  EXPECT_TRUE(Aligned(c.raw_data()));
  EXPECT_EQ(std::memcmp(c.raw_data(), a.raw_data(), 16), 0);
  c.data<int32_t>()[0] = -1;
  EXPECT_EQ(a.data<int32_t>()[0], 0);

  NDArray d = NDArray::Empty({2, 2}, DataType::Int(32));
  d.CopyFrom(a);
  EXPECT_EQ(d.data<int32_t>()[3], 30);
  EXPECT_THROW_WITH(d.CopyFrom(NDArray::Empty({4}, DataType::Int(32))), UserError, "expected int32 [2, 2]",
                    "got int32 [4]");
  EXPECT_THROW_WITH(d.CopyFrom(NDArray::Empty({2, 2}, DataType::Float(32))), UserError, "float32");
  EXPECT_THROW(d.CopyFromBytes(a.raw_data(), 15), UserError);
  int32_t out[4];
  d.CopyToBytes(out, sizeof(out));
  EXPECT_EQ(out[1], 10);
}

TEST(NDArray, TypedDataChecksElementType) {
  NDArray a = NDArray::Empty({3}, DataType::Int(64));
  EXPECT_NO_THROW(a.data<int64_t>());
  EXPECT_THROW_WITH(a.data<float>(), UserError, "float32", "int64");
  EXPECT_THROW(a.data<double>(), UserError);
  EXPECT_NO_THROW(NDArray::Empty({3}, DataType::Bool()).data<bool>());
  // Types DataTypeOf does not know are checked by size only (e.g. a half-float struct).
  struct Half {
    uint16_t bits;
  };
  EXPECT_NO_THROW(NDArray::Empty({3}, DataType::Float(16)).data<Half>());
  EXPECT_THROW(NDArray::Empty({3}, DataType::Float(32)).data<Half>(), UserError);
}

TEST(NDArray, ViewsShareStorage) {
  NDArray a = NDArray::Empty({2, 6}, DataType::Float(32));
  for (int i = 0; i < 12; ++i) a.data<float>()[i] = static_cast<float>(i);
  NDArray v = a.CreateView({3, 4});
  EXPECT_TRUE(v.SharesStorageWith(a));
  EXPECT_EQ(v.raw_data(), a.raw_data());
  EXPECT_EQ(v.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.StorageUseCount(), 2);
  v.data<float>()[5] = -5.0f;
  EXPECT_EQ(a.data<float>()[5], -5.0f);
  // A smaller view is fine, a larger one is not.
  EXPECT_NO_THROW(a.CreateView({5}));
  EXPECT_THROW_WITH(a.CreateView({13}), UserError, "does not fit");

  // A view outlives the array it came from.
  NDArray keep;
  {
    NDArray b = NDArray::Empty({32}, DataType::UInt(8));
    b.data<uint8_t>()[31] = 7;
    keep = b.CreateView({16}, DataType::UInt(8), 16);
  }
  EXPECT_EQ(keep.StorageUseCount(), 1);
  EXPECT_EQ(keep.data<uint8_t>()[15], 7);
}

TEST(NDArray, OffsetViewsWithOtherDtype) {
  NDArray storage = NDArray::Empty({256}, DataType::UInt(8));
  NDArray f = storage.CreateView({4, 4}, DataType::Float(32), 128);
  EXPECT_EQ(static_cast<char*>(f.raw_data()) - static_cast<char*>(storage.raw_data()), 128);
  EXPECT_TRUE(Aligned(f.raw_data()));
  EXPECT_THROW(storage.CreateView({4, 4}, DataType::Float(32), 193), UserError);
  EXPECT_THROW(storage.CreateView({1}, DataType::Float(32), ~size_t{0} - 1), UserError);
  // A view of a view is relative to the inner view.
  NDArray g = f.CreateView({2}, DataType::Float(64), 8);
  EXPECT_EQ(static_cast<char*>(g.raw_data()) - static_cast<char*>(storage.raw_data()), 136);
  // A view may reach up to the end of the storage, past the view it was made from.
  EXPECT_NO_THROW(f.CreateView({16}, DataType::Float(64), 0));
  EXPECT_THROW(f.CreateView({17}, DataType::Float(64), 0), UserError);
}

TEST(NDArray, DLTensorView) {
  NDArray a = NDArray::Empty({2, 3}, DataType::Float(32));
  const DLTensor& t = a.dl_tensor();
  EXPECT_EQ(t.data, a.raw_data());
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.shape[0], 2);
  EXPECT_EQ(t.shape[1], 3);
  EXPECT_EQ(t.strides, nullptr);
  EXPECT_EQ(t.byte_offset, 0u);
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.device.device_id, 0);
  EXPECT_EQ(t.dtype.code, kDLFloat);
  EXPECT_EQ(t.dtype.bits, 32);
  EXPECT_EQ(t.dtype.lanes, 1);
  EXPECT_EQ(NDArray::Empty({1}, DataType::Bool()).dl_tensor().dtype.code, kDLBool);
  // Spec layout (DLPack v0.8, LP64).
  EXPECT_EQ(sizeof(DLDataType), 4u);
  EXPECT_EQ(sizeof(DLDevice), 8u);
  EXPECT_EQ(offsetof(DLTensor, ndim), 16u);
  EXPECT_EQ(offsetof(DLTensor, shape), 24u);
  EXPECT_EQ(sizeof(DLTensor), 48u);
}

TEST(NDArray, DLPackRoundTripKeepsDataAlive) {
  DLManagedTensor* m = nullptr;
  void* data = nullptr;
  {
    NDArray a = NDArray::Empty({4}, DataType::Int(16));
    for (int i = 0; i < 4; ++i) a.data<int16_t>()[i] = static_cast<int16_t>(i + 1);
    data = a.raw_data();
    m = a.ToDLPack();
  }
  // The managed tensor holds the only reference now.
  EXPECT_EQ(m->dl_tensor.data, data);
  EXPECT_EQ(static_cast<int16_t*>(m->dl_tensor.data)[3], 4);
  NDArray back = NDArray::FromDLPack(m);
  EXPECT_EQ(back.raw_data(), data);
  EXPECT_EQ(back.dtype(), DataType::Int(16));
  EXPECT_EQ(back.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(back.data<int16_t>()[0], 1);
}

int g_deleted = 0;

TEST(NDArray, FromDLPackRejectsStridedAndCallsDeleter) {
  static float buf[6] = {0, 1, 2, 3, 4, 5};
  static int64_t shape[2] = {2, 3};
  static int64_t strides[2] = {1, 2};  // column-major
  auto make = [&](int64_t* st) {
    auto* m = new DLManagedTensor{};
    m->dl_tensor = DLTensor{buf, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, st, 0};
    m->deleter = [](DLManagedTensor* self) {
      ++g_deleted;
      delete self;
    };
    return m;
  };
  g_deleted = 0;
  EXPECT_THROW_WITH(NDArray::FromDLPack(make(strides)), UserError, "row-major");
  EXPECT_EQ(g_deleted, 1);
  {
    NDArray a = NDArray::FromDLPack(make(nullptr));
    EXPECT_EQ(a.data<float>()[4], 4.0f);
    EXPECT_EQ(g_deleted, 1);
  }
  EXPECT_EQ(g_deleted, 2);
}

// An empty tensor (numpy gives (0, 4) strides of 0) is compact whatever its strides.
TEST(NDArray, FromDLPackAcceptsAnyStridesOfAnEmptyTensor) {
  static float buf[1] = {0};
  static int64_t shape[2] = {0, 4};
  static int64_t strides[2] = {0, 0};
  auto* m = new DLManagedTensor{};
  m->dl_tensor = DLTensor{buf, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, strides, 0};
  m->deleter = [](DLManagedTensor* self) { delete self; };
  NDArray a = NDArray::FromDLPack(m);
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(a.NumElements(), 0);
}

TEST(NDArray, ShapeToString) {
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_EQ(ShapeToString({1, 3, 224, 224}), "[1, 3, 224, 224]");
}

TEST(DataType, ParseRejectsMalformedStrings) {
  EXPECT_EQ(DataType::Parse("float32x16"), DataType::Float(32, 16));
  EXPECT_EQ(DataType::Parse("bool"), DataType::Bool());
  EXPECT_EQ(DataType::Parse("uint8"), DataType::UInt(8));
  for (const char* bad : {"float", "int3x", "float32x0", "x", "", "int99999999", "complex64", "floatx2"})
    EXPECT_THROW(DataType::Parse(bad), UserError) << bad;
}

}  // namespace
}  // namespace tessera::runtime
