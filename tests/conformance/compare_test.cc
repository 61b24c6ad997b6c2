#include "compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tessera::conformance {
namespace {

template <typename T>
runtime::NDArray Make(std::vector<int64_t> shape, const std::vector<T>& v, DataType dtype = runtime::DataTypeOf<T>()) {
  runtime::NDArray a = runtime::NDArray::Empty(std::move(shape), dtype);
  if (!v.empty()) std::memcpy(a.raw_data(), v.data(), v.size() * sizeof(T));  // memcpy from null is UB
  return a;
}

const Tolerance kTol;  // rtol 1e-3, atol 1e-5

TEST(Compare, EqualAndWithinTolerancePass) {
  auto ref = Make<float>({2, 2}, {1.f, -2.f, 0.f, 1000.f});
  EXPECT_FALSE(CompareTensors(ref, ref, kTol));
  // 1000 * 1e-3 + 1e-5 allows 1.00001 at 1000; 0 allows 1e-5.
  auto close = Make<float>({2, 2}, {1.0005f, -2.001f, 9e-6f, 1000.9f});
  EXPECT_FALSE(CompareTensors(close, ref, kTol));
}

TEST(Compare, OutsideToleranceReportsFirstMismatch) {
  auto ref = Make<float>({2, 3}, {0, 0, 0, 0, 1, 2});
  auto got = Make<float>({2, 3}, {0, 0, 0, 0, 1.5f, 3});
  auto m = CompareTensors(got, ref, kTol);
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("2 of 6 elements differ"), std::string::npos) << *m;
  EXPECT_NE(m->find("first at [1, 1]: got 1.5, expected 1"), std::string::npos) << *m;
  EXPECT_NE(m->find("max abs error 1"), std::string::npos) << *m;
  // Just past atol at a zero reference fails.
  EXPECT_TRUE(CompareTensors(Make<float>({1}, {2e-5f}), Make<float>({1}, {0.f}), kTol));
}

TEST(Compare, NaNMatchesOnlyNaNAndInfinitiesMatchThemselves) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto ref = Make<float>({3}, {nan, inf, -inf});
  EXPECT_FALSE(CompareTensors(Make<float>({3}, {nan, inf, -inf}), ref, kTol));
  EXPECT_TRUE(CompareTensors(Make<float>({3}, {0.f, inf, -inf}), ref, kTol));
  EXPECT_TRUE(CompareTensors(Make<float>({3}, {nan, -inf, -inf}), ref, kTol));
  EXPECT_TRUE(CompareTensors(Make<float>({1}, {nan}), Make<float>({1}, {1.f}), kTol));
  EXPECT_TRUE(CompareTensors(Make<float>({1}, {1e30f}), Make<float>({1}, {inf}), kTol));
}

TEST(Compare, Float64UsesTheSameRule) {
  EXPECT_FALSE(CompareTensors(Make<double>({2}, {1.0005, 2.0}), Make<double>({2}, {1.0, 2.0}), kTol));
  EXPECT_TRUE(CompareTensors(Make<double>({2}, {1.01, 2.0}), Make<double>({2}, {1.0, 2.0}), kTol));
}

TEST(Compare, DtypeAndShapeMustMatch) {
  auto m = CompareTensors(Make<int32_t>({2}, {1, 2}), Make<int64_t>({2}, {1, 2}), kTol);
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, "dtype int32, expected int64");
  m = CompareTensors(Make<float>({2, 1}, {1, 2}), Make<float>({1, 2}, {1, 2}), kTol);
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, "shape [2, 1], expected [1, 2]");
}

TEST(Compare, IntegersAndBoolsAreExact) {
  EXPECT_FALSE(CompareTensors(Make<int64_t>({3}, {1, -2, 3}), Make<int64_t>({3}, {1, -2, 3}), kTol));
  auto m = CompareTensors(Make<int64_t>({3}, {1, -2, 4}), Make<int64_t>({3}, {1, -2, 3}), kTol);
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("first at [2]: got 4, expected 3"), std::string::npos) << *m;
  m = CompareTensors(Make<int8_t>({1}, {-1}), Make<int8_t>({1}, {1}), kTol);
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("got -1, expected 1"), std::string::npos) << *m;  // printed as numbers, not chars
  auto b = [](std::vector<uint8_t> v) { return Make<uint8_t>({static_cast<int64_t>(v.size())}, v, DataType::Bool()); };
  EXPECT_FALSE(CompareTensors(b({1, 0}), b({1, 0}), kTol));
  m = CompareTensors(b({1, 1}), b({1, 0}), kTol);
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("first at [1]: got true, expected false"), std::string::npos) << *m;
}

TEST(Compare, EmptyTensorsMatch) {
  EXPECT_FALSE(CompareTensors(Make<float>({0, 3}, {}), Make<float>({0, 3}, {}), kTol));
}

}  // namespace
}  // namespace tessera::conformance
