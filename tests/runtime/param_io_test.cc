#include "tessera/runtime/param_io.h"

#include <gtest/gtest.h>

#include <cstring>

#include "test_util.h"

namespace tessera::runtime {
namespace {

std::map<std::string, NDArray> SampleParams() {
  std::map<std::string, NDArray> p;
  NDArray w = NDArray::Empty({2, 3}, DataType::Float(32));
  for (int i = 0; i < 6; ++i) w.data<float>()[i] = 0.25f * i - 1.0f;
  NDArray idx = NDArray::Empty({5}, DataType::Int(64));
  for (int i = 0; i < 5; ++i) idx.data<int64_t>()[i] = (int64_t{1} << 40) + i;
  NDArray flag = NDArray::Empty({3}, DataType::Bool());
  flag.data<bool>()[0] = true, flag.data<bool>()[1] = false, flag.data<bool>()[2] = true;
  NDArray scalar = NDArray::Empty({}, DataType::Float(64));
  *scalar.data<double>() = 3.5;
  NDArray empty = NDArray::Empty({0, 4}, DataType::UInt(8));
  NDArray q = NDArray::Empty({70}, DataType::Int(8));
  for (int i = 0; i < 70; ++i) q.data<int8_t>()[i] = static_cast<int8_t>(i - 35);
  p["conv1.weight"] = w;
  p["indices"] = idx;
  p["flag"] = flag;
  p["scalar"] = scalar;
  p["empty"] = empty;
  p["q"] = q;
  return p;
}

TEST(ParamIO, RoundTrip) {
  auto params = SampleParams();
  std::string blob = SaveParams(params);
  EXPECT_EQ(blob.substr(0, 8), "TSRPARAM");
  auto back = LoadParams(blob.data(), blob.size());
  ASSERT_EQ(back.size(), params.size());
  for (const auto& [name, a] : params) {
    ASSERT_EQ(back.count(name), 1u) << name;
    const NDArray& b = back.at(name);
    EXPECT_EQ(b.dtype(), a.dtype()) << name;
    EXPECT_EQ(b.shape(), a.shape()) << name;
    EXPECT_EQ(std::memcmp(b.raw_data(), a.raw_data(), a.NBytes()), 0) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % 64, 0u) << name;
    EXPECT_FALSE(b.SharesStorageWith(a));
  }
  // Deterministic: saving again gives the same bytes.
  EXPECT_EQ(SaveParams(back), blob);
  // An empty map round-trips.
  std::string none = SaveParams({});
  EXPECT_EQ(none.size(), 24u);
  EXPECT_TRUE(LoadParams(none.data(), none.size()).empty());
}

TEST(ParamIO, LayoutIsLittleEndianWithAlignedPayloads) {
  NDArray a = NDArray::Empty({2}, DataType::Int(32));
  a.data<int32_t>()[0] = 0x11223344;
  a.data<int32_t>()[1] = 0x55667788;
  std::string blob = SaveParams({{"w", a}});
  uint32_t version;
  std::memcpy(&version, blob.data() + 8, 4);
  EXPECT_EQ(version, kParamsVersion);
  uint64_t count;
  std::memcpy(&count, blob.data() + 16, 8);
  EXPECT_EQ(count, 1u);
  // Header: name_len(4) "w" dtype_len(4) "int32" ndim(4) shape(8) nbytes(8) = 34 bytes after 24.
  EXPECT_EQ(blob[24], 1);
  EXPECT_EQ(blob[28], 'w');
  EXPECT_EQ(blob.substr(33, 5), "int32");
  ASSERT_EQ(blob.size(), 64u + 8u);
  EXPECT_EQ(static_cast<unsigned char>(blob[64]), 0x44);  // payload at the 64-byte boundary
  EXPECT_EQ(static_cast<unsigned char>(blob[67]), 0x11);
}

TEST(ParamIO, EveryTruncationIsUserError) {
  std::string blob = SaveParams(SampleParams());
  for (size_t n = 0; n < blob.size(); ++n) {
    EXPECT_THROW(LoadParams(blob.data(), n), UserError) << "prefix of " << n << " bytes";
  }
}

TEST(ParamIO, CorruptionsAreUserErrors) {
  std::string good = SaveParams(SampleParams());
  auto corrupt = [&](size_t at, const void* bytes, size_t n) {
    std::string b = good;
    std::memcpy(b.data() + at, bytes, n);
    return b;
  };
  auto load = [](const std::string& b) { return LoadParams(b.data(), b.size()); };

  EXPECT_THROW_WITH(load(corrupt(0, "TSRPARAX", 8)), UserError, "TSRPARAM");
  uint32_t v2 = 2;
  EXPECT_THROW_WITH(load(corrupt(8, &v2, 4)), UserError, "version 2");
  uint64_t huge = uint64_t{1} << 60;
  EXPECT_THROW_WITH(load(corrupt(16, &huge, 8)), UserError, "count");
  uint32_t long_name = 1u << 30;
  EXPECT_THROW_WITH(load(corrupt(24, &long_name, 4)), UserError, "truncated");
  EXPECT_THROW_WITH(load(good + std::string(3, '\0')), UserError, "unexpected bytes");

  // First entry is "conv1.weight" (sorted): bad dtype string and bad nbytes.
  size_t dtype_at = 24 + 4 + 12 + 4;
  EXPECT_THROW_WITH(load(corrupt(dtype_at, "flaat32", 7)), UserError, "conv1.weight", "flaat32");
  size_t nbytes_at = dtype_at + 7 + 4 + 2 * 8;
  uint64_t wrong = 20;
  EXPECT_THROW_WITH(load(corrupt(nbytes_at, &wrong, 8)), UserError, "conv1.weight", "should have 24 bytes");
  size_t ndim_at = dtype_at + 7;
  uint32_t big_ndim = 1000;
  EXPECT_THROW_WITH(load(corrupt(ndim_at, &big_ndim, 4)), UserError, "ndim");
  int64_t neg = -2;
  EXPECT_THROW_WITH(load(corrupt(ndim_at + 4, &neg, 8)), UserError, "negative");
  // A shape of 2^40 x 3 floats with the blob's 24 bytes: refused before allocating 12 TiB (found by
  // the artifact fuzz target, tests/fuzz/corpus/artifact/oom-params-shape-larger-than-nbytes).
  int64_t huge_extent = int64_t{1} << 40;
  EXPECT_THROW_WITH(load(corrupt(ndim_at + 4, &huge_extent, 8)), UserError, "conv1.weight",
                    "should have 13194139533312 bytes, the blob says 24");
  int64_t overflowing = int64_t{1} << 62;
  EXPECT_THROW_WITH(load(corrupt(ndim_at + 4, &overflowing, 8)), UserError, "more bytes than 2^64");
}

TEST(ParamIO, DuplicateNamesAreUserError) {
  NDArray a = NDArray::Empty({1}, DataType::Float(32));
  *a.data<float>() = 0.0f;
  std::string blob = SaveParams({{"a", a}, {"b", a}});
  size_t second = blob.find('b', 68);
  ASSERT_NE(second, std::string::npos);
  blob[second] = 'a';
  EXPECT_THROW_WITH(LoadParams(blob.data(), blob.size()), UserError, "'a' appears twice");
}

TEST(ParamIO, SaveRejectsNullArrays) {
  EXPECT_THROW(SaveParams({{"x", NDArray()}}), UserError);
  EXPECT_THROW(SaveParams({{"", NDArray::Empty({1}, DataType::Float(32))}}), UserError);
}

}  // namespace
}  // namespace tessera::runtime
