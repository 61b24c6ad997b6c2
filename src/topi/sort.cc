// ONNX TopK's indices (topi/indexing.h topk_indices) as extern stages (te::extern_op): a sorted
// selection list for a small k, a bottom-up merge sort otherwise; the rows in parallel. Also the
// statement builders of sort_util.h (the merge sort, local state) that NMS and Unique share.
#include <algorithm>

#include "sort_util.h"
#include "tessera/support/error.h"
#include "tessera/tir/stmt.h"
#include "tessera/topi/indexing.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace detail {

MergeSortScratch MergeSortScratch::Make(const std::string& prefix, int64_t rows, int64_t n, DataType key_dtype) {
  const DataType i32 = DataType::Int(32);
  const std::vector<PrimExpr> shape = MakeShape({rows, std::max<int64_t>(n, 1)});
  return {tir::Buffer::make(prefix + "_a", i32, shape), tir::Buffer::make(prefix + "_b", i32, shape),
          tir::Buffer::make(prefix + "_ka", key_dtype, shape), tir::Buffer::make(prefix + "_kb", key_dtype, shape)};
}

tir::Stmt WithLocal(const std::string& name, DataType dtype, int64_t n,
                    const std::function<tir::Stmt(const tir::Buffer&)>& body) {
  const tir::Buffer b = tir::Buffer::make(name, dtype, MakeShape({n}), "local");
  return tir::AllocateNode::make(b, body(b));
}

std::pair<tir::Stmt, tir::Buffer> MergeSortRow(const MergeSortScratch& s, const PrimExpr& row, const PrimExpr& count,
                                               int64_t n, const PairOrder& before) {
  const tir::Buffer state = tir::Buffer::make("merge_state", DataType::Int(32), MakeShape({2}), "local");
  std::vector<tir::Stmt> seq;
  const tir::Buffer *src = &s.a, *dst = &s.b, *ksrc = &s.ka, *kdst = &s.kb;
  const DataType kt = s.ka->dtype;
  for (int64_t w = 1; w < n; w *= 2) {
    Var blk("blk", DataType::Int(32)), q("q", DataType::Int(32));
    const PrimExpr lo = PrimExpr(blk) * Index(2 * w);
    const PrimExpr mid = ir::min(lo + Index(w), count), hi = ir::min(lo + Index(2 * w), count);
    // One output of the merge: the read positions i, j and the pairs there, bound once.
    Var i("i", DataType::Int(32)), j("j", DataType::Int(32)), ai("ai", DataType::Int(32)), bj("bj", DataType::Int(32));
    Var ki("ki", kt), kj("kj", kt);
    const PrimExpr from_a = PrimExpr(i) < mid && (PrimExpr(j) >= hi || !before(kj, bj, ki, ai));
    const PrimExpr out = lo + q;
    tir::Stmt step = If(from_a,
                        tir::SeqStmtNode::make({Store(*dst, ai, {row, out}), Store(*kdst, ki, {row, out}),
                                                Store(state, i + Index(1), {Index(0)})}),
                        tir::SeqStmtNode::make({Store(*dst, bj, {row, out}), Store(*kdst, kj, {row, out}),
                                                Store(state, j + Index(1), {Index(1)})}));
    const PrimExpr ic = ir::min(PrimExpr(i), Index(n - 1)), jc = ir::min(PrimExpr(j), Index(n - 1));
    step = tir::LetStmtNode::make(kj, Load(*ksrc, {row, jc}), step);
    step = tir::LetStmtNode::make(ki, Load(*ksrc, {row, ic}), step);
    step = tir::LetStmtNode::make(bj, Load(*src, {row, jc}), step);
    step = tir::LetStmtNode::make(ai, Load(*src, {row, ic}), step);
    step = tir::LetStmtNode::make(j, Load(state, {Index(1)}), step);
    step = tir::LetStmtNode::make(i, Load(state, {Index(0)}), step);
    const PrimExpr blocks = ir::floordiv(count + Index(2 * w - 1), Index(2 * w));
    seq.push_back(Loop(blk, blocks,
                       tir::SeqStmtNode::make({Store(state, lo, {Index(0)}), Store(state, mid, {Index(1)}),
                                               Loop(q, hi - lo, step)})));
    std::swap(src, dst);
    std::swap(ksrc, kdst);
  }
  if (seq.empty()) return {tir::EvaluateNode::make(Index(0)), *src};
  return {tir::AllocateNode::make(state, tir::SeqStmtNode::make(seq)), *src};
}

}  // namespace detail

namespace {

using namespace detail;  // NOLINT
using tir::Buffer;
using tir::Stmt;

const DataType kI32 = DataType::Int(32);

// x as rows (every index but the axis) of n positions.
struct Rows {
  std::vector<int64_t> outer, inner;  // the dims before and after the axis
  int64_t count = 0, inner_size = 1;

  // The index of position p of row r in a tensor of these rows' shape (the axis' extent any).
  std::vector<PrimExpr> At(const PrimExpr& r, const PrimExpr& p) const {
    std::vector<PrimExpr> idx = Unravel(ir::floordiv(r, Index(inner_size)), outer);
    idx.push_back(p);
    for (const PrimExpr& e : Unravel(ir::floormod(r, Index(inner_size)), inner)) idx.push_back(e);
    return idx;
  }
};

}  // namespace

Tensor topk_indices(const Tensor& x, int64_t k, int64_t axis_in, bool largest) {
  const std::vector<int64_t> xs = ConstShape(x);
  const int nd = static_cast<int>(xs.size());
  const int axis = NormalizeAxis(axis_in, nd, "topk");
  const int64_t n = xs[axis];
  TESSERA_CHECK(k >= 0 && k <= n, "topk: k = ", k, " must be in [0, ", n, "] (the extent of axis ", axis, ")");
  Rows rows;
  rows.outer.assign(xs.begin(), xs.begin() + axis);
  rows.inner.assign(xs.begin() + axis + 1, xs.end());
  rows.inner_size = Product(rows.inner);
  rows.count = Product(rows.outer) * rows.inner_size;
  std::vector<int64_t> out_shape = xs;
  out_shape[axis] = k;
  if (k == 0 || rows.count == 0)
    return te::compute(
        MakeShape(out_shape), [](const std::vector<Var>&) { return ir::make_const(DataType::Int(64), 0); },
        "T_topk_indices", tag::kInjective);

  Var r("r", kI32);
  const Buffer& xb = x.buffer();
  // Position p1 of row r before p2: the larger (smaller) value first, equal values by position
  // (the spec's tie rule), a strict total order.
  auto before = [&](const PrimExpr& p1, const PrimExpr& p2) {
    const PrimExpr v1 = Load(xb, rows.At(r, p1)), v2 = Load(xb, rows.At(r, p2));
    return (largest ? v1 > v2 : v1 < v2) || (v1 == v2 && p1 < p2);
  };
  auto write_out = [&](const Buffer& out, const Buffer& list) {
    Var s("s", kI32);
    return Loop(s, Index(k), Store(out, ir::cast(DataType::Int(64), Load(list, {r, s})), rows.At(r, s)));
  };
  std::vector<Buffer> scratch;
  std::function<Stmt(const Buffer&)> per_row;
  if (k * 8 <= n) {
    // Selection: the k best positions so far, sorted; a position better than the last one is
    // inserted (the entries after it shift down, the last drops). O(n + insertions * k).
    const Buffer list = Buffer::make("topk_list", kI32, MakeShape({rows.count, k}));
    scratch = {list};
    per_row = [&, list](const Buffer& out) {
      // Local state: count, insertion point, the last entry's position and (once full) its value.
      return WithLocal("topk_state", kI32, 3, [&](const Buffer& state) {
        return WithLocal("topk_last_value", x.dtype(), 1, [&](const Buffer& last_value) {
          Var p("p", kI32), e("e", kI32);
          const PrimExpr cnt = Load(state, {Index(0)}), at = Load(state, {Index(1)});
          const PrimExpr filled = ir::min(cnt, Index(k - 1));  // entries that may shift
          const PrimExpr m = filled - Index(1) - PrimExpr(e);   // from the last one up
          Stmt shift = If(at == m + Index(1) && before(p, Load(list, {r, m})),
                          tir::SeqStmtNode::make({Store(list, Load(list, {r, m}), {r, m + Index(1)}), Store(state, m, {Index(1)})}));
          const PrimExpr last = Load(list, {r, Index(k - 1)});
          Stmt insert = tir::SeqStmtNode::make(
              {Store(state, filled, {Index(1)}), Loop(e, filled, shift), Store(list, p, {r, at}),
               Store(state, ir::min(cnt + Index(1), Index(k)), {Index(0)}),
               If(cnt == Index(k), tir::SeqStmtNode::make({Store(state, last, {Index(2)}),
                                                            Store(last_value, Load(xb, rows.At(r, last)), {Index(0)})}))});
          // Position p beats the last entry: compared with the cached value, no gather.
          const PrimExpr v = Load(xb, rows.At(r, p)), lv = Load(last_value, {Index(0)});
          const PrimExpr beats = (largest ? v > lv : v < lv) || (v == lv && PrimExpr(p) < Load(state, {Index(2)}));
          return tir::SeqStmtNode::make({Store(state, Index(0), {Index(0)}), Store(state, Index(0), {Index(2)}),
                                         Store(last_value, ir::make_zero(x.dtype()), {Index(0)}),
                                         Loop(p, Index(n), If(cnt < Index(k) || beats, insert)), write_out(out, list)});
        });
      });
    };
  } else {
    // Bottom-up merge sort of the (value, position) pairs. O(n log n).
    const MergeSortScratch sort = MergeSortScratch::Make("topk", rows.count, n, x.dtype());
    scratch = sort.buffers();
    per_row = [&, sort](const Buffer& out) {
      Var p("p", kI32);
      auto order = [&](PrimExpr k1, PrimExpr p1, PrimExpr k2, PrimExpr p2) {
        return (largest ? k1 > k2 : k1 < k2) || (k1 == k2 && p1 < p2);
      };
      auto [passes, sorted] = MergeSortRow(sort, r, Index(n), n, order);
      Stmt init = Loop(p, Index(n), tir::SeqStmtNode::make({Store(sort.a, p, {r, p}), Store(sort.ka, Load(xb, rows.At(r, p)), {r, p})}));
      return tir::SeqStmtNode::make({init, passes, write_out(out, sorted)});
    };
  }
  return te::extern_op(
      MakeShape(out_shape), DataType::Int(64), {x},
      [&](const std::vector<Buffer>&, const Buffer& out) {
        return Loop(r, Index(rows.count), per_row(out), tir::ForKind::kParallel);
      },
      "T_topk_indices", "extern", scratch);
}

}  // namespace tessera::topi
