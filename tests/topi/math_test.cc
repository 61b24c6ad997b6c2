// Elementwise math and broadcast binary ops against straightforward C++ references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/bias_add.h"
#include "tessera/topi/tags.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

const DataType f32 = DataType::Float(32);

void CheckUnary(const std::function<Tensor(const Tensor&)>& op, const std::function<double(double)>& ref,
                double lo = -4, double hi = 4) {
  Tensor x = te::placeholder(MakeShape({3, 37}), f32, "x");
  Tensor y = op(x);
  EXPECT_EQ(y.op()->tag, tag::kElemWise);
  Data in = testing::Random(3 * 37, 7, lo, hi), want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = ref(in[i]);
  testing::CheckAllModes({x}, y, {in}, want);
}

TEST(TopiMath, Unary) {
  CheckUnary([](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); });
  CheckUnary([](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); });
  CheckUnary([](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); });
  CheckUnary([](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, 0, 4);
  CheckUnary([](const Tensor& x) { return negative(x); }, [](double v) { return -v; });
  CheckUnary([](const Tensor& x) { return relu(x); }, [](double v) { return std::max(v, 0.0); });
  CheckUnary([](const Tensor& x) { return clip(x, -0.5, 1.5); }, [](double v) { return std::clamp(v, -0.5, 1.5); });
  CheckUnary([](const Tensor& x) { return hard_sigmoid(x, 0.2, 0.5); },
             [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); });
  CheckUnary([](const Tensor& x) { return hard_swish(x); },
             [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); });
}

TEST(TopiMath, CastToIntTruncates) {
  Tensor x = te::placeholder(MakeShape({5}), f32, "x");
  Tensor y = cast(x, DataType::Int(32));
  EXPECT_EQ(y.dtype(), DataType::Int(32));
  testing::CheckAllModes({x}, y, {{1.5, -1.5, 2.9, -0.2, 7}}, {1, -1, 2, 0, 7});
}

TEST(TopiBroadcast, Shapes) {
  EXPECT_EQ(BroadcastShape({2, 1, 4}, {3, 1}), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(BroadcastShape({}, {5}), (std::vector<int64_t>{5}));
  EXPECT_THROW(BroadcastShape({2, 3}, {4}), UserError);
}

TEST(TopiBroadcast, BinaryOps) {
  using Fn = std::function<Tensor(const Tensor&, const Tensor&)>;
  struct Case {
    Fn op;
    std::function<double(double, double)> ref;
  };
  std::vector<Case> cases = {
      {[](auto& a, auto& b) { return add(a, b); }, [](double a, double b) { return a + b; }},
      {[](auto& a, auto& b) { return subtract(a, b); }, [](double a, double b) { return a - b; }},
      {[](auto& a, auto& b) { return multiply(a, b); }, [](double a, double b) { return a * b; }},
      {[](auto& a, auto& b) { return divide(a, b); }, [](double a, double b) { return a / b; }},
      {[](auto& a, auto& b) { return power(a, b); }, [](double a, double b) { return std::pow(a, b); }},
      {[](auto& a, auto& b) { return maximum(a, b); }, [](double a, double b) { return std::max(a, b); }},
      {[](auto& a, auto& b) { return minimum(a, b); }, [](double a, double b) { return std::min(a, b); }},
  };
  // a [2, 1, 19], b [3, 1] -> [2, 3, 19]
  Tensor a = te::placeholder(MakeShape({2, 1, 19}), f32, "a");
  Tensor b = te::placeholder(MakeShape({3, 1}), f32, "b");
  Data da = testing::Random(2 * 19, 1, 0.5, 2), db = testing::Random(3, 2, 0.5, 2);
  for (const Case& c : cases) {
    Tensor out = c.op(a, b);
    EXPECT_EQ(out.op()->tag, tag::kBroadcast);
    Data want;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 19; ++k) want.push_back(c.ref(da[i * 19 + k], db[j]));
    testing::CheckAllModes({a, b}, out, {da, db}, want);
  }
}

TEST(TopiBroadcast, BiasAdd) {
  Tensor x = te::placeholder(MakeShape({2, 3, 5}), f32, "x");
  Tensor b = te::placeholder(MakeShape({3}), f32, "b");
  Data dx = testing::Random(30, 3), db = testing::Random(3, 4), want(30);
  for (int i = 0; i < 30; ++i) want[i] = dx[i] + db[(i / 5) % 3];
  testing::CheckAllModes({x, b}, bias_add(x, b, 1), {dx, db}, want);
}

}  // namespace
}  // namespace tessera::topi
