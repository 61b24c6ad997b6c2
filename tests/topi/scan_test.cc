// te::scan and the computes built on it: CumSum / CumProd along every axis in every mode, the
// scan's default schedule (the ordered loop stays serial, the others are parallel / vectorized),
// NonZero's prefix count + binary search and Unique's inverse / selections against C++ references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "tessera/te/tensor.h"
#include "tessera/topi/nonzero.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/unique.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

const DataType f32 = DataType::Float(32);

// The reference cumulative sum / product of a row-major [d0, d1, d2] array along `axis`.
Data CumulativeRef(const Data& x, const std::vector<int64_t>& shape, int axis, bool exclusive, bool reverse,
                   bool product) {
  Data out(x.size());
  const int64_t n = shape[axis];
  int64_t stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
  for (size_t flat = 0; flat < x.size(); ++flat) {
    const int64_t i = (static_cast<int64_t>(flat) / stride) % n;
    const int64_t base = static_cast<int64_t>(flat) - i * stride;
    double acc = product ? 1.0 : 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const bool in = reverse ? (exclusive ? k > i : k >= i) : (exclusive ? k < i : k <= i);
      if (!in) continue;
      const double v = x[static_cast<size_t>(base + k * stride)];
      acc = product ? acc * v : acc + v;
    }
    out[flat] = acc;
  }
  return out;
}

TEST(TopiScan, CumulativeAlongEveryAxisInEveryMode) {
  const std::vector<int64_t> shape = {3, 5, 8};
  const Data x = testing::Random(3 * 5 * 8, 11, 0.5, 1.5);
  for (int axis = 0; axis < 3; ++axis) {
    for (bool product : {false, true}) {
      for (int flags = 0; flags < 4; ++flags) {
        const bool exclusive = flags & 1, reverse = flags & 2;
        SCOPED_TRACE("axis " + std::to_string(axis) + (product ? " prod" : " sum") + (exclusive ? " exclusive" : "") +
                     (reverse ? " reverse" : ""));
        Tensor in = te::placeholder(MakeShape(shape), f32, "x");
        Tensor y = product ? cumprod(in, axis, exclusive, reverse) : cumsum(in, axis, exclusive, reverse);
        testing::CheckAllModes({in}, y, {x}, CumulativeRef(x, shape, axis, exclusive, reverse, product), 1e-5);
      }
    }
  }
}

TEST(TopiScan, ScanLoopStaysSerialWhileTheOthersRunInParallel) {
  Tensor in = te::placeholder(MakeShape({16, 64, 256}), f32, "x");
  Tensor y = cumsum(in, 1, false, false);  // along rows: each step a whole row of lanes
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({in, y}, "cumsum"), x86::ScheduleOptionsFor(testing::TestTarget()));
  testing::LoopKinds kinds;
  kinds.VisitStmt(f->body);
  EXPECT_TRUE(kinds.blocks.count("T_cumsum"));
  EXPECT_GE(kinds.vectorized, 1);
  EXPECT_GE(kinds.parallel, 1);
  // A scan cannot be parallelized along its ordered axis.
  tir::Schedule sch(te::create_prim_func({in, y}, "cumsum"));
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block("T_cumsum"));
  EXPECT_THROW(sch.parallel(loops[1]), tir::ScheduleError);
  EXPECT_THROW(sch.vectorize(loops[1]), tir::ScheduleError);
  EXPECT_NO_THROW(sch.parallel(loops[0]));
  try {  // nor inlined into its consumer (each point reads the earlier ones)
    sch.compute_inline(sch.get_block("T_cumsum"));
    FAIL() << "expected ScheduleError";
  } catch (const tir::ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("block 'T_cumsum' is a scan"), std::string::npos) << e.what();
  }
}

// A scan whose step is a reduction over the earlier points (the form of NonMaxSuppression's
// selection): s[t] = x[t] + sum over k < t of s[k].
TEST(TopiScan, ScanWithAReductionOverEarlierPointsInEveryModeAndNoRfactor) {
  const int64_t rows = 3, n = 9;
  const Data x = testing::Random(rows * n, 3);
  Data want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double prefix = 0;  // the sum of s over the earlier points
    for (int64_t t = 0; t < n; ++t) {
      want[r * n + t] = x[r * n + t] + prefix;
      prefix += want[r * n + t];
    }
  }
  Tensor in = te::placeholder(MakeShape({rows, n}), f32, "x");
  te::IterVar k = te::reduce_axis(Range(Index(0), Index(n)), "k");
  Tensor s = te::scan(
      MakeShape({rows, n}), f32, 1,
      [&](const std::vector<Var>& i, const Tensor& self) {
        const PrimExpr zero = ir::make_zero(f32);
        const PrimExpr earlier = ir::select(PrimExpr(k.var) < PrimExpr(i[1]), self({i[0], k.var}), zero);
        return te::sum(earlier + ir::select(PrimExpr(k.var) == Index(0), in({i[0], i[1]}), zero), {k});
      },
      "T_scan_sum");
  testing::CheckAllModes({in}, s, {x}, want, 1e-4);
  tir::Schedule sch(te::create_prim_func({in, s}, "scan_sum"));
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block("T_scan_sum"));
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_THROW(sch.rfactor(loops[2], 0), tir::ScheduleError);
  EXPECT_THROW(sch.parallel(loops[1]), tir::ScheduleError);
}

TEST(TopiScan, NonZeroFindsEveryNonZeroElementInRowMajorOrder) {
  const std::vector<int64_t> shape = {3, 4, 7};
  Data x = testing::Random(3 * 4 * 7, 5);
  for (size_t i = 0; i < x.size(); ++i)
    if (i % 3 == 0 || x[i] < -0.3) x[i] = 0;
  x[x.size() - 1] = 2;  // the last position is one of them
  std::vector<size_t> flat;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0) flat.push_back(i);
  const int64_t k = static_cast<int64_t>(flat.size());
  Data want(static_cast<size_t>(3 * k));
  for (int64_t j = 0; j < k; ++j) {
    const size_t p = flat[static_cast<size_t>(j)];
    want[static_cast<size_t>(j)] = static_cast<double>(p / 28);
    want[static_cast<size_t>(k + j)] = static_cast<double>((p / 7) % 4);
    want[static_cast<size_t>(2 * k + j)] = static_cast<double>(p % 7);
  }
  Tensor in = te::placeholder(MakeShape(shape), f32, "x");
  testing::CheckAllModes({in}, nonzero_count(in), {x}, {static_cast<double>(k)});
  testing::CheckAllModes({in}, nonzero(in, Index(k)), {x}, want);
}

// Unique's inverse (sorted and by first occurrence, of elements and of rows) and its selections,
// against a C++ reference over std::vector rows.
TEST(TopiUnique, InverseFirstOccurrencesAndCountsInEveryMode) {
  const int64_t rows = 7, cols = 3;
  Data x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7 + i / 5) % 4);
  for (int64_t c = 0; c < cols; ++c) x[5 * cols + c] = x[1 * cols + c];  // row 5 repeats row 1
  for (bool by_row : {false, true}) {
    for (bool sorted : {true, false}) {
      SCOPED_TRACE(std::string(by_row ? "rows" : "elements") + (sorted ? " sorted" : " unsorted"));
      std::vector<std::vector<double>> items;
      if (by_row) {
        for (int64_t r = 0; r < rows; ++r) items.emplace_back(x.begin() + r * cols, x.begin() + (r + 1) * cols);
      } else {
        for (double v : x) items.push_back({v});
      }
      std::vector<std::vector<double>> distinct;  // in order of first occurrence
      std::vector<size_t> first;
      for (size_t i = 0; i < items.size(); ++i) {
        if (std::find(distinct.begin(), distinct.end(), items[i]) == distinct.end()) {
          distinct.push_back(items[i]);
          first.push_back(i);
        }
      }
      std::vector<size_t> order(distinct.size());
      for (size_t j = 0; j < order.size(); ++j) order[j] = j;
      if (sorted) std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distinct[a] < distinct[b]; });
      Data inverse, want_first, want_counts;
      for (const auto& item : items) {
        const size_t d = std::find(distinct.begin(), distinct.end(), item) - distinct.begin();
        inverse.push_back(static_cast<double>(std::find(order.begin(), order.end(), d) - order.begin()));
      }
      for (size_t j : order) {
        want_first.push_back(static_cast<double>(first[j]));
        want_counts.push_back(static_cast<double>(std::count(items.begin(), items.end(), distinct[j])));
      }
      Tensor in = te::placeholder(MakeShape({rows, cols}), f32, "x");
      Tensor inv = unique_inverse(in, by_row ? std::optional<int64_t>(0) : std::nullopt, sorted);
      testing::CheckAllModes({in}, inv, {x}, inverse);
      Tensor inv_in = te::placeholder(MakeShape({static_cast<int64_t>(inverse.size())}), DataType::Int(64), "inverse");
      const PrimExpr count = Index(static_cast<int64_t>(distinct.size()));
      testing::CheckAllModes({inv_in}, unique_select(inv_in, count, "first"), {inverse}, want_first);
      testing::CheckAllModes({inv_in}, unique_select(inv_in, count, "counts"), {inverse}, want_counts);
    }
  }
}

}  // namespace
}  // namespace tessera::topi
