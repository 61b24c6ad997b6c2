// The extern stages that sort: TopK's selection list (k * 8 <= n) and merge sort (src/topi/sort.cc),
// along a middle axis, largest and smallest, with ties, against std::stable_sort; NonMaxSuppression's
// greedy selection (src/topi/nms.cc) against a transcription of the ONNX reference; every mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <tuple>
#include <numeric>

#include "tessera/topi/indexing.h"
#include "tessera/topi/nms.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

TEST(TopiSort, TopKIndicesMatchAStableSortInEveryMode) {
  const int64_t outer = 3, n = 37, inner = 2;
  Data x = testing::Random(outer * n * inner, 9);
  for (size_t i = 0; i < x.size(); i += 4) x[i] = 0.25;  // ties: equal values keep their order
  for (bool largest : {true, false}) {
    for (int64_t k : {int64_t{1}, int64_t{4}, int64_t{20}, n}) {  // 1 and 4: the selection list
      SCOPED_TRACE((largest ? "largest k = " : "smallest k = ") + std::to_string(k));
      Data want(static_cast<size_t>(outer * k * inner));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t p) { return x[static_cast<size_t>((o * n + p) * inner + i)]; };
          std::vector<int64_t> pos(static_cast<size_t>(n));
          std::iota(pos.begin(), pos.end(), 0);
          std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
          for (int64_t r = 0; r < k; ++r) want[static_cast<size_t>((o * k + r) * inner + i)] = static_cast<double>(pos[static_cast<size_t>(r)]);
        }
      }
      Tensor in = te::placeholder(MakeShape({outer, n, inner}), DataType::Float(32), "x");
      testing::CheckAllModes({in}, topk_indices(in, k, 1, largest), {x}, want);
    }
  }
}

// The ONNX reference's greedy NMS for one batch and class ([y1, x1, y2, x2] boxes): 1 + the selected
// box indices in order, 0 after.
std::vector<double> NmsReference(const Data& boxes, const Data& scores, int64_t n, int64_t max_out, double iou,
                                 double score_thr) {
  std::vector<int64_t> cand;
  for (int64_t p = 0; p < n; ++p)
    if (scores[static_cast<size_t>(p)] > score_thr) cand.push_back(p);
  std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  auto ext = [&](int64_t p) {  // xlo, xhi, ylo, yhi
    const double* v = &boxes[static_cast<size_t>(4 * p)];
    return std::array<double, 4>{std::min(v[1], v[3]), std::max(v[1], v[3]), std::min(v[0], v[2]), std::max(v[0], v[2])};
  };
  std::vector<int64_t> kept;
  for (int64_t p : cand) {
    if (static_cast<int64_t>(kept.size()) >= max_out) break;
    bool suppressed = false;
    for (int64_t q : kept) {
      const auto a = ext(q), b = ext(p);
      const double iw = std::min(a[1], b[1]) - std::max(a[0], b[0]), ih = std::min(a[3], b[3]) - std::max(a[2], b[2]);
      if (iw <= 0 || ih <= 0) continue;
      const double inter = iw * ih, ua = (a[1] - a[0]) * (a[3] - a[2]) + (b[1] - b[0]) * (b[3] - b[2]) - inter;
      if (inter / ua > iou) suppressed = true;
    }
    if (!suppressed) kept.push_back(p);
  }
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  for (size_t s = 0; s < kept.size(); ++s) out[s] = static_cast<double>(kept[s] + 1);
  return out;
}

TEST(TopiSort, NonMaxSuppressionMatchesTheReferenceInEveryMode) {
  const int64_t classes = 2, n = 9;
  Data boxes;
  for (int64_t p = 0; p < n; ++p) {  // overlapping boxes in a row, some corners flipped
    const double x = 0.6 * static_cast<double>(p % 5), y = 0.3 * static_cast<double>(p / 5);
    const bool flip = p % 3 == 0;
    for (double v : {y, x, y + 1.0, x + 1.0}) boxes.push_back(v);
    if (flip) std::swap(boxes[boxes.size() - 4], boxes[boxes.size() - 2]);
  }
  Data scores = testing::Random(static_cast<size_t>(classes * n), 4, 0.0, 1.0);
  scores[3] = scores[5];  // a tie
  for (auto [max_out, iou, score_thr] : {std::tuple{100, 0.2, 0.1}, std::tuple{2, 0.5, -1.0}, std::tuple{0, 0.5, 0.0}}) {
    SCOPED_TRACE("max_out " + std::to_string(max_out) + " iou " + std::to_string(iou));
    Data want;
    for (int64_t c = 0; c < classes; ++c) {
      Data sc(scores.begin() + c * n, scores.begin() + (c + 1) * n);
      for (double v : NmsReference(boxes, sc, n, max_out, iou, score_thr)) want.push_back(v);
    }
    Tensor b = te::placeholder(MakeShape({1, n, 4}), DataType::Float(32), "boxes");
    Tensor s = te::placeholder(MakeShape({1, classes, n}), DataType::Float(32), "scores");
    Tensor m = te::placeholder(MakeShape({1}), DataType::Int(64), "max_out");
    Tensor i = te::placeholder(MakeShape({1}), DataType::Float(32), "iou");
    Tensor t = te::placeholder(MakeShape({1}), DataType::Float(32), "score_threshold");
    testing::CheckAllModes({b, s, m, i, t}, non_max_suppression(b, s, m, i, t, false, true),
                           {boxes, scores, {static_cast<double>(max_out)}, {iou}, {score_thr}}, want);
  }
}

}  // namespace
}  // namespace tessera::topi
