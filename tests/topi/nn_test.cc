// Neural-network computes against direct C++ references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tessera/topi/nn/batch_norm.h"
#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/pooling.h"
#include "tessera/topi/nn/softmax.h"
#include "tessera/topi/tags.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Conv2DParams p;
};

Data ConvRef(const ConvCase& cc, const Data& x, const Data& wt, int64_t oh, int64_t ow) {
  const auto& p = cc.p;
  int64_t cg = cc.c / p.groups, opg = cc.o / p.groups;
  Data out;
  for (int64_t n = 0; n < cc.n; ++n)
    for (int64_t o = 0; o < cc.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < cc.kh; ++ky)
              for (int64_t kx = 0; kx < cc.kw; ++kx) {
                int64_t iy = y * p.strides[0] + ky * p.dilation[0] - p.padding[0];
                int64_t ix = xx * p.strides[1] + kx * p.dilation[1] - p.padding[1];
                if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
                int64_t ci = (o / opg) * cg + c;
                acc += x[((n * cc.c + ci) * cc.h + iy) * cc.w + ix] * wt[((o * cg + c) * cc.kh + ky) * cc.kw + kx];
              }
          out.push_back(acc);
        }
  return out;
}

void CheckConv(const ConvCase& cc) {
  Tensor x = te::placeholder(MakeShape({cc.n, cc.c, cc.h, cc.w}), f32, "x");
  Tensor w = te::placeholder(MakeShape({cc.o, cc.c / cc.p.groups, cc.kh, cc.kw}), f32, "w");
  Tensor y = conv2d_nchw(x, w, cc.p);
  EXPECT_EQ(y.op()->tag, tag::kConv2dNCHW);
  std::vector<int64_t> os = ConstShape(y);
  Data dx = testing::Random(cc.n * cc.c * cc.h * cc.w, 1), dw = testing::Random(Product(ConstShape(w)), 2);
  testing::CheckAllModes({x, w}, y, {dx, dw}, ConvRef(cc, dx, dw, os[2], os[3]));
}

TEST(TopiConv2d, Plain) { CheckConv({1, 3, 7, 9, 4, 3, 3, {}}); }
TEST(TopiConv2d, Stride2Padding) { CheckConv({2, 3, 9, 8, 5, 3, 3, {{2, 2}, {1, 1, 1, 1}, {1, 1}, 1}}); }
TEST(TopiConv2d, AsymmetricPaddingDilation) { CheckConv({1, 2, 9, 10, 3, 3, 2, {{1, 2}, {2, 0, 1, 3}, {2, 1}, 1}}); }
TEST(TopiConv2d, Depthwise) { CheckConv({1, 4, 8, 7, 4, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 4}}); }
TEST(TopiConv2d, Groups2) { CheckConv({1, 4, 6, 6, 6, 3, 3, {{2, 1}, {1, 1, 1, 1}, {1, 1}, 2}}); }

TEST(TopiDense, Dense) {
  Tensor x = te::placeholder(MakeShape({3, 21}), f32, "x");
  Tensor w = te::placeholder(MakeShape({18, 21}), f32, "w");
  Data dx = testing::Random(63, 1), dw = testing::Random(18 * 21, 2), want;
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 18; ++n) {
      double acc = 0;
      for (int k = 0; k < 21; ++k) acc += dx[m * 21 + k] * dw[n * 21 + k];
      want.push_back(acc);
    }
  Tensor y = dense(x, w);
  EXPECT_EQ(y.op()->tag, tag::kDense);
  testing::CheckAllModes({x, w}, y, {dx, dw}, want);
}

TEST(TopiDense, BatchMatmulBroadcast) {
  // x [1, 4, 5] broadcast against y [3, 6, 5] (transpose_b): out [3, 4, 6].
  Tensor x = te::placeholder(MakeShape({1, 4, 5}), f32, "x");
  Tensor y = te::placeholder(MakeShape({3, 6, 5}), f32, "y");
  Data dx = testing::Random(20, 3), dy = testing::Random(90, 4), want;
  for (int b = 0; b < 3; ++b)
    for (int m = 0; m < 4; ++m)
      for (int n = 0; n < 6; ++n) {
        double acc = 0;
        for (int k = 0; k < 5; ++k) acc += dx[m * 5 + k] * dy[(b * 6 + n) * 5 + k];
        want.push_back(acc);
      }
  testing::CheckAllModes({x, y}, batch_matmul(x, y), {dx, dy}, want);
}

TEST(TopiDense, MatmulNumpyBroadcast) {
  // a [2, 1, 3, 4] @ b [5, 4, 2] -> [2, 5, 3, 2]
  Tensor a = te::placeholder(MakeShape({2, 1, 3, 4}), f32, "a");
  Tensor b = te::placeholder(MakeShape({5, 4, 2}), f32, "b");
  Tensor y = matmul(a, b);
  EXPECT_EQ(ConstShape(y), (std::vector<int64_t>{2, 5, 3, 2}));
  Data da = testing::Random(24, 5), db = testing::Random(40, 6), want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 2; ++n) {
          double acc = 0;
          for (int k = 0; k < 4; ++k) acc += da[(i * 3 + m) * 4 + k] * db[(j * 4 + k) * 2 + n];
          want.push_back(acc);
        }
  testing::CheckAllModes({a, b}, y, {da, db}, want);
  // Vector operands: [4] @ [5, 4, 2] -> [5, 2].
  Tensor v = te::placeholder(MakeShape({4}), f32, "v");
  EXPECT_EQ(ConstShape(matmul(v, b)), (std::vector<int64_t>{5, 2}));
}

// PyTorch-style pooling reference.
Data PoolRef(const Data& x, int64_t n, int64_t c, int64_t h, int64_t w, const Pool2DParams& p, bool is_max,
             int64_t oh, int64_t ow) {
  Data out;
  for (int64_t b = 0; b < n * c; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double acc = is_max ? -1e30 : 0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < p.pool_size[0]; ++ky)
          for (int64_t kx = 0; kx < p.pool_size[1]; ++kx) {
            int64_t iy = y * p.strides[0] + ky * p.dilation[0] - p.padding[0];
            int64_t ix = xx * p.strides[1] + kx * p.dilation[1] - p.padding[1];
            bool in_pad = iy < h + p.padding[2] && ix < w + p.padding[3];
            bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            if (p.count_include_pad ? in_pad : inside) ++count;
            if (!inside) continue;
            double v = x[(b * h + iy) * w + ix];
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        out.push_back(is_max ? acc : acc / std::max<int64_t>(count, 1));
      }
  return out;
}

void CheckPool(bool is_max, const Pool2DParams& p, int64_t h, int64_t w, std::vector<int64_t> want_hw) {
  Tensor x = te::placeholder(MakeShape({2, 3, h, w}), f32, "x");
  Tensor y = is_max ? max_pool2d(x, p) : avg_pool2d(x, p);
  std::vector<int64_t> os = ConstShape(y);
  EXPECT_EQ(os[2], want_hw[0]);
  EXPECT_EQ(os[3], want_hw[1]);
  Data d = testing::Random(6 * h * w, 8);
  testing::CheckAllModes({x}, y, {d}, PoolRef(d, 2, 3, h, w, p, is_max, os[2], os[3]));
}

TEST(TopiPool, MaxPool) {
  CheckPool(true, {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false}, 8, 7, {4, 4});
  // ceil_mode: floor would give 3 x 3.
  CheckPool(true, {{2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, false}, 7, 7, {4, 4});
  CheckPool(true, {{3, 2}, {2, 1}, {2, 1}, {1, 0, 1, 1}, true, false}, 9, 6, {4, 6});
}

TEST(TopiPool, AvgPool) {
  CheckPool(false, {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, true}, 8, 7, {4, 4});
  CheckPool(false, {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false}, 8, 7, {4, 4});
  CheckPool(false, {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, true}, 8, 8, {5, 5});
  CheckPool(false, {{3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, false}, 8, 8, {4, 4});
}

TEST(TopiPool, GlobalAvgPool) {
  Tensor x = te::placeholder(MakeShape({2, 3, 5, 7}), f32, "x");
  Data d = testing::Random(210, 3), want(6, 0);
  for (int i = 0; i < 210; ++i) want[i / 35] += d[i] / 35;
  testing::CheckAllModes({x}, global_avg_pool2d(x), {d}, want);
}

TEST(TopiSoftmax, SeveralAxes) {
  Tensor x = te::placeholder(MakeShape({3, 4, 5}), f32, "x");
  Data d = testing::Random(60, 12, -20, 20);
  const int64_t dims[3] = {3, 4, 5};
  for (int axis : {0, 1, 2, -1}) {
    int a = axis < 0 ? axis + 3 : axis;
    int64_t stride = 1;
    for (int k = a + 1; k < 3; ++k) stride *= dims[k];
    Data want(60);
    for (int i = 0; i < 60; ++i) {
      int64_t base = i - ((i / stride) % dims[a]) * stride;
      double m = -1e30, s = 0;
      for (int64_t k = 0; k < dims[a]; ++k) m = std::max(m, d[base + k * stride]);
      for (int64_t k = 0; k < dims[a]; ++k) s += std::exp(d[base + k * stride] - m);
      want[i] = std::exp(d[i] - m) / s;
    }
    testing::CheckAllModes({x}, softmax(x, axis), {d}, want);
  }
}

TEST(TopiBatchNorm, Inference) {
  Tensor x = te::placeholder(MakeShape({2, 3, 4}), f32, "x");
  std::vector<Tensor> p;
  for (const char* n : {"gamma", "beta", "mean", "var"}) p.push_back(te::placeholder(MakeShape({3}), f32, n));
  Data dx = testing::Random(24, 1), g = testing::Random(3, 2), b = testing::Random(3, 3), m = testing::Random(3, 4),
       v = testing::Random(3, 5, 0.1, 2), want;
  for (int i = 0; i < 24; ++i) {
    int c = (i / 4) % 3;
    want.push_back((dx[i] - m[c]) / std::sqrt(v[c] + 1e-3) * g[c] + b[c]);
  }
  testing::CheckAllModes({x, p[0], p[1], p[2], p[3]}, batch_norm_inference(x, p[0], p[1], p[2], p[3], 1, 1e-3),
                         {dx, g, b, m, v}, want);
}

}  // namespace
}  // namespace tessera::topi
