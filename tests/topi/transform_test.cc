// Shape transforms and reductions against C++ references.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/topi/reduction.h"
#include "tessera/topi/transform.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

TEST(TopiTransform, Reshape) {
  Tensor x = te::placeholder(MakeShape({2, 3, 4}), f32, "x");
  Tensor y = reshape(x, {4, -1});
  EXPECT_EQ(ConstShape(y), (std::vector<int64_t>{4, 6}));
  Data d = testing::Random(24, 1);
  testing::CheckAllModes({x}, y, {d}, d);
  EXPECT_THROW(reshape(x, {5, 5}), UserError);
}

TEST(TopiTransform, Transpose) {
  Tensor x = te::placeholder(MakeShape({2, 3, 5}), f32, "x");
  Tensor y = transpose(x, {2, 0, 1});
  EXPECT_EQ(ConstShape(y), (std::vector<int64_t>{5, 2, 3}));
  Data d = testing::Random(30, 2), want;
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(d[(i * 3 + j) * 5 + k]);
  testing::CheckAllModes({x}, y, {d}, want);
}

TEST(TopiTransform, Concatenate) {
  Tensor a = te::placeholder(MakeShape({2, 3}), f32, "a");
  Tensor b = te::placeholder(MakeShape({2, 1}), f32, "b");
  Tensor c = te::placeholder(MakeShape({2, 2}), f32, "c");
  Tensor y = concatenate({a, b, c}, -1);
  EXPECT_EQ(ConstShape(y), (std::vector<int64_t>{2, 6}));
  Data da = testing::Random(6, 1), db = testing::Random(2, 2), dc = testing::Random(4, 3), want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) want.push_back(da[i * 3 + j]);
    want.push_back(db[i]);
    for (int j = 0; j < 2; ++j) want.push_back(dc[i * 2 + j]);
  }
  testing::CheckAllModes({a, b, c}, y, {da, db, dc}, want);
}

TEST(TopiTransform, TakeNegativeIndices) {
  Tensor data = te::placeholder(MakeShape({3, 4}), f32, "data");
  Tensor idx = te::placeholder(MakeShape({2, 2}), DataType::Int(64), "idx");
  Tensor y = take(data, idx, 1);
  EXPECT_EQ(ConstShape(y), (std::vector<int64_t>{3, 2, 2}));
  Data d = testing::Random(12, 5), ind = {0, -1, 2, -4}, want;
  for (int i = 0; i < 3; ++i)
    for (double j : ind) want.push_back(d[i * 4 + (j < 0 ? j + 4 : j)]);
  testing::CheckAllModes({data, idx}, y, {d, ind}, want);
}

TEST(TopiTransform, StridedSlice) {
  Tensor x = te::placeholder(MakeShape({5, 6}), f32, "x");
  Data d = testing::Random(30, 9);
  auto ref = [&](int64_t b0, int64_t n0, int64_t s0, int64_t b1, int64_t n1, int64_t s1) {
    Data w;
    for (int64_t i = 0; i < n0; ++i)
      for (int64_t j = 0; j < n1; ++j) w.push_back(d[(b0 + i * s0) * 6 + (b1 + j * s1)]);
    return w;
  };
  // Negative begin, end past the extent (clamped).
  Tensor y1 = strided_slice(x, {-4, 1}, {100, -1}, {2, 1});
  EXPECT_EQ(ConstShape(y1), (std::vector<int64_t>{2, 4}));
  testing::CheckAllModes({x}, y1, {d}, ref(1, 2, 2, 1, 4, 1));
  // Negative steps: reverse axis 1 entirely (end clamped to -1), axis 0 from 4 down to 1 exclusive.
  Tensor y2 = strided_slice(x, {4, -1}, {1, -100}, {-1, -2});
  EXPECT_EQ(ConstShape(y2), (std::vector<int64_t>{3, 3}));
  testing::CheckAllModes({x}, y2, {d}, ref(4, 3, -1, 5, 3, -2));
  // Only axis 1 listed.
  Tensor y3 = strided_slice(x, {2}, {4}, {}, {1});
  EXPECT_EQ(ConstShape(y3), (std::vector<int64_t>{5, 2}));
  testing::CheckAllModes({x}, y3, {d}, ref(0, 5, 1, 2, 2, 1));
}

TEST(TopiTransform, ExpandSqueezePad) {
  Tensor x = te::placeholder(MakeShape({3, 1, 2}), f32, "x");
  Data d = testing::Random(6, 4);
  Tensor e = expand_dims(x, -1, 2);
  EXPECT_EQ(ConstShape(e), (std::vector<int64_t>{3, 1, 2, 1, 1}));
  testing::CheckAllModes({x}, e, {d}, d);
  Tensor s = squeeze(x);
  EXPECT_EQ(ConstShape(s), (std::vector<int64_t>{3, 2}));
  testing::CheckAllModes({x}, s, {d}, d);
  Tensor p = pad(x, {1, 0, 0}, {0, 0, 2}, ir::make_const(f32, 9.0));
  EXPECT_EQ(ConstShape(p), (std::vector<int64_t>{4, 1, 4}));
  Data want;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k) want.push_back(i >= 1 && k < 2 ? d[(i - 1) * 2 + k] : 9.0);
  testing::CheckAllModes({x}, p, {d}, want);
}

TEST(TopiReduction, SumMeanMax) {
  Tensor x = te::placeholder(MakeShape({3, 4, 5}), f32, "x");
  Data d = testing::Random(60, 11);
  Data s1(15, 0), m1(15, -1e30), s02(4, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) {
        double v = d[(i * 4 + j) * 5 + k];
        s1[i * 5 + k] += v;
        m1[i * 5 + k] = std::max(m1[i * 5 + k], v);
        s02[j] += v;
      }
  testing::CheckAllModes({x}, sum(x, {1}), {d}, s1);
  Tensor mk = max(x, {-2}, true);
  EXPECT_EQ(ConstShape(mk), (std::vector<int64_t>{3, 1, 5}));
  testing::CheckAllModes({x}, mk, {d}, m1);
  Data mean02 = s02;
  for (double& v : mean02) v /= 15;
  testing::CheckAllModes({x}, mean(x, {0, 2}), {d}, mean02);
  double total = 0;
  for (double v : d) total += v;
  testing::CheckAllModes({x}, sum(x), {d}, {total});
}

}  // namespace
}  // namespace tessera::topi
