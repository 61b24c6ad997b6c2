// The computes behind the ONNX ops added for conformance (unary.h, logical.h, indexing.h,
// nn/activation.h) against straightforward C++ references, in every mode.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tessera/topi/indexing.h"
#include "tessera/topi/logical.h"
#include "tessera/topi/nn/activation.h"
#include "tessera/topi/nn/softmax.h"
#include "tessera/topi/unary.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

const DataType f32 = DataType::Float(32);

void CheckUnary(const std::function<Tensor(const Tensor&)>& op, const std::function<double(double)>& ref,
                double lo = -3, double hi = 3) {
  Tensor x = te::placeholder(MakeShape({2, 19}), f32, "x");
  Data in = testing::Random(2 * 19, 11, lo, hi), want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = ref(in[i]);
  testing::CheckAllModes({x}, op(x), {in}, want);
}

TEST(TopiOnnxOps, FloatUnaryAndActivations) {
  CheckUnary([](const Tensor& x) { return float_unary(x, "erf"); }, [](double v) { return std::erf(v); });
  CheckUnary([](const Tensor& x) { return float_unary(x, "floor"); }, [](double v) { return std::floor(v); });
  CheckUnary([](const Tensor& x) { return float_unary(x, "ceil"); }, [](double v) { return std::ceil(v); });
  CheckUnary([](const Tensor& x) { return sign(x); }, [](double v) { return double((v > 0) - (v < 0)); });
  CheckUnary([](const Tensor& x) { return leaky_relu(x, 0.1); }, [](double v) { return v < 0 ? 0.1 * v : v; });
  CheckUnary([](const Tensor& x) { return elu(x, 2.0); }, [](double v) { return v < 0 ? 2 * (std::exp(v) - 1) : v; });
  CheckUnary([](const Tensor& x) { return softplus(x); }, [](double v) { return std::log1p(std::exp(v)); });
  CheckUnary([](const Tensor& x) { return softsign(x); }, [](double v) { return v / (1 + std::fabs(v)); });
  CheckUnary([](const Tensor& x) { return gelu(x, false); },
             [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  CheckUnary([](const Tensor& x) { return thresholded_relu(x, 1.0); }, [](double v) { return v > 1 ? v : 0.0; });
}

TEST(TopiOnnxOps, WhereBroadcastsAllThree) {
  Tensor a = te::placeholder(MakeShape({3, 1}), f32, "a");
  Tensor b = te::placeholder(MakeShape({1, 4}), f32, "b");
  Tensor c = te::placeholder(MakeShape({4}), f32, "c");
  Tensor y = where(greater(a, b), c, b);
  Data da = {0.5, -1, 2}, db = {0, 1, -2, 3}, dc = {10, 20, 30, 40}, want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) want.push_back(da[i] > db[j] ? dc[j] : db[j]);
  testing::CheckAllModes({a, b, c}, y, {da, db, dc}, want);
}

TEST(TopiOnnxOps, BitwiseAndShiftsIncludingOutOfRangeAmounts) {
  const DataType u8 = DataType::UInt(8), i32 = DataType::Int(32);
  Tensor a = te::placeholder(MakeShape({6}), u8, "a");
  Tensor b = te::placeholder(MakeShape({6}), u8, "b");
  Data da = {1, 0x81, 255, 16, 7, 200}, db = {0, 1, 7, 8, 9, 3};
  Data shl, shr, band, bor, bxor, bnot;
  for (int i = 0; i < 6; ++i) {
    const unsigned x = static_cast<unsigned>(da[i]), y = static_cast<unsigned>(db[i]);
    shl.push_back(y >= 8 ? 0 : (x << y) & 0xff);  // an amount >= 8 bits shifts everything out
    shr.push_back(y >= 8 ? 0 : x >> y);
    band.push_back(x & y);
    bor.push_back(x | y);
    bxor.push_back(x ^ y);
    bnot.push_back(~x & 0xff);
  }
  testing::CheckAllModes({a, b}, shift_left(a, b), {da, db}, shl);
  testing::CheckAllModes({a, b}, shift_right(a, b), {da, db}, shr);
  testing::CheckAllModes({a, b}, bitwise_and(a, b), {da, db}, band);
  testing::CheckAllModes({a, b}, bitwise_or(a, b), {da, db}, bor);
  testing::CheckAllModes({a, b}, bitwise_xor(a, b), {da, db}, bxor);
  testing::CheckAllModes({a}, bitwise_not(a), {da}, bnot);
  // Signed: arithmetic right shift keeps the sign.
  Tensor c = te::placeholder(MakeShape({2}), i32, "c"), d = te::placeholder(MakeShape({2}), i32, "d");
  testing::CheckAllModes({c, d}, shift_right(c, d), {{-16, 64}, {2, 3}}, {-4, 8});
  EXPECT_THROW(bitwise_and(a, c), UserError);
}

TEST(TopiOnnxOps, PadModes) {
  Tensor x = te::placeholder(MakeShape({4}), f32, "x");
  Data in = {1, 2, 3, 4};
  testing::CheckAllModes({x}, pad_mode(x, {2}, {1}, "reflect", 0), {in}, {3, 2, 1, 2, 3, 4, 3});
  testing::CheckAllModes({x}, pad_mode(x, {2}, {1}, "edge", 0), {in}, {1, 1, 1, 2, 3, 4, 4});
  testing::CheckAllModes({x}, pad_mode(x, {2}, {1}, "wrap", 0), {in}, {3, 4, 1, 2, 3, 4, 1});
  testing::CheckAllModes({x}, pad_mode(x, {1}, {-2}, "constant", 7), {in}, {7, 1, 2});
}

TEST(TopiOnnxOps, TileAndBroadcastTo) {
  Tensor x = te::placeholder(MakeShape({2, 1}), f32, "x");
  testing::CheckAllModes({x}, tile(x, {2, 3}), {{1, 2}}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  testing::CheckAllModes({x}, broadcast_to(x, {3, 1, 2}), {{1, 2}}, {1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(TopiOnnxOps, LogSoftmax) {
  Tensor x = te::placeholder(MakeShape({2, 3}), f32, "x");
  Data in = {1, 2, 3, -1, 0, 5}, want;
  for (int r = 0; r < 2; ++r) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += std::exp(in[r * 3 + j]);
    for (int j = 0; j < 3; ++j) want.push_back(in[r * 3 + j] - std::log(s));
  }
  testing::CheckAllModes({x}, log_softmax(x, 1), {in}, want);
}

}  // namespace
}  // namespace tessera::topi
