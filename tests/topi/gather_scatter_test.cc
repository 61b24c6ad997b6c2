// gather_nd / scatter_elements / scatter_nd (topi/gather_scatter.h) against sequential C++
// references written from the ONNX spec's pseudo-code, in every mode (interpreted, scheduled,
// flat, JIT): negative indices, batch_dims, duplicate targets under every reduction.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/topi/gather_scatter.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

const DataType f32 = DataType::Float(32);
const DataType i64 = DataType::Int(64);

double Combine(const std::string& r, double a, double b) {
  if (r == "add") return a + b;
  if (r == "mul") return a * b;
  if (r == "max") return std::max(a, b);
  if (r == "min") return std::min(a, b);
  return b;  // none: the later update wins
}

TEST(TopiGatherScatter, GatherNDWithBatchDimsAndNegativeIndices) {
  // data [2, 3, 4], indices [2, 1, 1] with batch_dims 1: out[b, i, :] = data[b, idx[b, i, 0], :].
  Tensor data = te::placeholder(MakeShape({2, 3, 4}), f32, "data");
  Tensor idx = te::placeholder(MakeShape({2, 1, 1}), i64, "idx");
  Data d = testing::Random(24, 5), ix = {2, -3};  // -3 is row 0
  Data want;
  for (int b = 0; b < 2; ++b) {
    const int row = ix[b] < 0 ? static_cast<int>(ix[b]) + 3 : static_cast<int>(ix[b]);
    for (int j = 0; j < 4; ++j) want.push_back(d[(b * 3 + row) * 4 + j]);
  }
  testing::CheckAllModes({data, idx}, gather_nd(data, idx, 1), {d, ix}, want);
  // No batch dims, full index tuples: indices [3, 2] into [3, 4] -> 3 scalars.
  Tensor data2 = te::placeholder(MakeShape({3, 4}), f32, "data2");
  Tensor idx2 = te::placeholder(MakeShape({3, 2}), i64, "idx2");
  Data d2 = testing::Random(12, 6), ix2 = {0, 3, 2, -1, 1, 1};
  testing::CheckAllModes({data2, idx2}, gather_nd(data2, idx2, 0), {d2, ix2}, {d2[3], d2[11], d2[5]});
}

TEST(TopiGatherScatter, ScatterElementsEveryReductionWithDuplicates) {
  // data [3, 4]; indices / updates [2, 3] along axis 1, two updates aimed at (0, 1).
  Tensor data = te::placeholder(MakeShape({3, 4}), f32, "data");
  Tensor idx = te::placeholder(MakeShape({2, 3}), i64, "idx");
  Tensor upd = te::placeholder(MakeShape({2, 3}), f32, "upd");
  Data d = testing::Random(12, 7), ix = {1, -3, 3, 0, 2, 2}, u = testing::Random(6, 8, 2, 3);
  for (const char* r : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(r);
    Data want = d;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        const int col = ix[i * 3 + j] < 0 ? static_cast<int>(ix[i * 3 + j]) + 4 : static_cast<int>(ix[i * 3 + j]);
        double& dst = want[i * 4 + col];
        dst = Combine(r, dst, u[i * 3 + j]);
      }
    testing::CheckAllModes({data, idx, upd}, scatter_elements(data, idx, upd, -1, r), {d, ix, u}, want);
  }
}

TEST(TopiGatherScatter, ScatterNDRowsAndElementsEveryReduction) {
  // data [4, 3]; indices [3, 1] write whole rows (row 2 twice); indices [2, 2] write elements.
  Tensor data = te::placeholder(MakeShape({4, 3}), f32, "data");
  Tensor idx = te::placeholder(MakeShape({3, 1}), i64, "idx");
  Tensor upd = te::placeholder(MakeShape({3, 3}), f32, "upd");
  Data d = testing::Random(12, 9), ix = {2, 0, -2}, u = testing::Random(9, 10, 2, 3);
  for (const char* r : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(r);
    Data want = d;
    for (int i = 0; i < 3; ++i) {
      const int row = ix[i] < 0 ? static_cast<int>(ix[i]) + 4 : static_cast<int>(ix[i]);
      for (int j = 0; j < 3; ++j) want[row * 3 + j] = Combine(r, want[row * 3 + j], u[i * 3 + j]);
    }
    testing::CheckAllModes({data, idx, upd}, scatter_nd(data, idx, upd, r), {d, ix, u}, want);
  }
  Tensor idx2 = te::placeholder(MakeShape({2, 2}), i64, "idx2");
  Tensor upd2 = te::placeholder(MakeShape({2}), f32, "upd2");
  Data ix2 = {3, 2, 0, 1}, u2 = {7, 8}, want = d;
  want[3 * 3 + 2] = 7;
  want[0 * 3 + 1] = 8;
  testing::CheckAllModes({data, idx2, upd2}, scatter_nd(data, idx2, upd2, "none"), {d, ix2, u2}, want);
}

TEST(TopiGatherScatter, RejectsMismatchedShapes) {
  Tensor data = te::placeholder(MakeShape({4, 3}), f32, "data");
  Tensor idx = te::placeholder(MakeShape({3, 1}), i64, "idx");
  Tensor upd = te::placeholder(MakeShape({3, 2}), f32, "upd");
  EXPECT_THROW(scatter_nd(data, idx, upd, "none"), UserError);
  EXPECT_THROW(scatter_nd(data, idx, te::placeholder(MakeShape({3, 3}), f32, "u"), "sum"), UserError);
  EXPECT_THROW(scatter_elements(data, idx, te::placeholder(MakeShape({3, 1}), f32, "u"), 2, "none"), UserError);
  EXPECT_THROW(gather_nd(data, te::placeholder(MakeShape({2, 3}), i64, "i"), 0), UserError);
}

}  // namespace
}  // namespace tessera::topi
