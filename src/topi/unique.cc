#include "tessera/topi/unique.h"

#include "sort_util.h"
#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

using namespace detail;  // NOLINT
using tir::Stmt;

const DataType kI64 = DataType::Int(64);

// numpy.unique's order of elements: NaNs equal to each other and after every number.
PrimExpr IsNaN(const PrimExpr& v) { return v != v; }
PrimExpr Equal(const PrimExpr& a, const PrimExpr& b) {
  return a.dtype().is_floating() ? (a == b || (IsNaN(a) && IsNaN(b))) : a == b;
}
PrimExpr Less(const PrimExpr& a, const PrimExpr& b) {
  return a.dtype().is_floating() ? (a < b || (!IsNaN(a) && IsNaN(b))) : a < b;
}

// x viewed as n slices of m elements: slice i, element p (row-major over the other dims).
struct Slices {
  const Tensor* x;
  int axis;  // -1: the flattened elements (m = 1)
  int64_t n, m;
  std::vector<int64_t> shape;

  PrimExpr At(const PrimExpr& i, const PrimExpr& p) const {
    if (axis < 0) return (*x)(Unravel(i, shape));
    std::vector<int64_t> rest;
    for (size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int>(d) != axis) rest.push_back(shape[d]);
    std::vector<PrimExpr> idx = Unravel(p, rest);
    idx.insert(idx.begin() + axis, i);
    return (*x)(idx);
  }
};

// The inverse of the flattened elements by sorting (an extern stage): (value, position) pairs
// merge-sorted, equal runs numbered in order (the sorted inverse), and for sorted = 0 the runs
// renumbered by their first positions (a second sort of the runs by first position). O(n log n).
Tensor FlatInverseBySorting(const Tensor& x, int64_t n, bool sorted) {
  const std::vector<int64_t> xs = ConstShape(x);
  const DataType i32 = DataType::Int(32);
  const MergeSortScratch by_value = MergeSortScratch::Make("unique_values", 1, n, x.dtype());
  const MergeSortScratch by_first = MergeSortScratch::Make("unique_runs", 1, n, i32);
  const tir::Buffer run = tir::Buffer::make("unique_run", i32, MakeShape({n}));  // run number per sorted slot
  const tir::Buffer rank = tir::Buffer::make("unique_rank", i32, MakeShape({n}));  // sorted=0: run -> position
  auto body = [&](const std::vector<tir::Buffer>& in, const tir::Buffer& out) {
    Var p("p", i32), q("q", i32), w("w", i32), z("z", i32);
    auto order = [](PrimExpr k1, PrimExpr p1, PrimExpr k2, PrimExpr p2) {
      return Less(k1, k2) || (Equal(k1, k2) && p1 < p2);
    };
    auto [sort_values, by_val] = MergeSortRow(by_value, Index(0), Index(n), n, order);
    const tir::Buffer& keys = by_val.same_as(by_value.a) ? by_value.ka : by_value.kb;  // the sorted values
    const PrimExpr kq = Load(keys, {Index(0), q});
    const PrimExpr kprev = Load(keys, {Index(0), ir::max(PrimExpr(q) - Index(1), Index(0))});
    const PrimExpr pos_q = Load(by_val, {Index(0), q});
    return WithLocal("unique_runs", i32, 1, [&](const tir::Buffer& runs) {
      const PrimExpr count = Load(runs, {Index(0)});
      // Number the runs of equal values; a run's first slot holds its first position.
      Stmt number = Loop(q, Index(n), tir::SeqStmtNode::make(
          {If(PrimExpr(q) == Index(0) || !Equal(kq, kprev),
              tir::SeqStmtNode::make({Store(by_first.a, count, {Index(0), count}), Store(by_first.ka, pos_q, {Index(0), count}),
                                      Store(runs, count + Index(1), {Index(0)})})),
           Store(run, count - Index(1), {q})}));
      Stmt init = Loop(z, Index(n), tir::SeqStmtNode::make({Store(by_value.a, z, {Index(0), z}),
                                                            Store(by_value.ka, Load(in[0], Unravel(z, xs)), {Index(0), z})}));
      std::vector<Stmt> seq = {init, sort_values, Store(runs, Index(0), {Index(0)}), number};
      // Slot w of the sorted order: its position gets its run's number (or rank).
      const PrimExpr pos_w = Load(by_val, {Index(0), w});
      PrimExpr value = Load(run, {w});
      if (!sorted) {
        auto by_position = [](PrimExpr k1, PrimExpr, PrimExpr k2, PrimExpr) { return k1 < k2; };
        auto [sort_runs, runs_sorted] = MergeSortRow(by_first, Index(0), count, n, by_position);
        seq.push_back(sort_runs);
        seq.push_back(Loop(p, count, Store(rank, p, {Load(runs_sorted, {Index(0), p})})));
        value = Load(rank, {value});
      }
      seq.push_back(Loop(w, Index(n), Store(out, ir::cast(kI64, value), {pos_w})));
      return tir::SeqStmtNode::make(seq);
    });
  };
  std::vector<tir::Buffer> scratch = by_value.buffers();
  for (const tir::Buffer& b : by_first.buffers()) scratch.push_back(b);
  scratch.push_back(run);
  scratch.push_back(rank);
  return te::extern_op(MakeShape({n}), kI64, {x}, body, "T_unique_inverse", "extern", scratch);
}

}  // namespace

Tensor unique_inverse(const Tensor& x, std::optional<int64_t> axis_in, bool sorted) {
  const std::vector<int64_t> xs = ConstShape(x);
  if (!axis_in && Product(xs) > 0) return FlatInverseBySorting(x, Product(xs), sorted);
  Slices sl{&x, -1, Product(xs), 1, xs};
  if (axis_in) {
    sl.axis = NormalizeAxis(*axis_in, static_cast<int>(xs.size()), "unique");
    sl.n = xs[sl.axis];
    sl.m = Product(xs) / std::max<int64_t>(sl.n, 1);
    if (sl.n == 0) sl.m = 1;
  }
  const int64_t n = sl.n, m = sl.m;
  const PrimExpr none = Index(n);
  auto reduce_k = [&](const char* name) { return te::reduce_axis(Range(Index(0), Index(std::max<int64_t>(n, 1))), name); };

  // Equality and order of slices i and k. Slices of several elements compare at their first
  // difference (a pairwise table, fd[i, k] = m when equal); an empty slice equals every other.
  std::function<PrimExpr(PrimExpr, PrimExpr)> eq, lt;
  if (sl.axis < 0 || m == 1) {
    eq = [&](PrimExpr i, PrimExpr k) { return Equal(sl.At(i, Index(0)), sl.At(k, Index(0))); };
    lt = [&](PrimExpr i, PrimExpr k) { return Less(sl.At(i, Index(0)), sl.At(k, Index(0))); };
  } else if (m == 0) {
    eq = [](PrimExpr, PrimExpr) { return ir::make_const(DataType::Bool(), 1); };
    lt = [](PrimExpr, PrimExpr) { return ir::make_const(DataType::Bool(), 0); };
  } else {
    te::IterVar p = te::reduce_axis(Range(Index(0), Index(m)), "p");
    Tensor fd = te::compute(
        MakeShape({n, n}),
        [&](const std::vector<Var>& ik) {
          return te::min(ir::select(Equal(sl.At(ik[0], p.var), sl.At(ik[1], p.var)), Index(m), PrimExpr(p.var)), {p});
        },
        "T_unique_first_difference", tag::kCommReduce);
    eq = [fd, m](PrimExpr i, PrimExpr k) { return fd({i, k}) == Index(m); };
    lt = [fd, m, &sl](PrimExpr i, PrimExpr k) {
      const PrimExpr at = ir::min(fd({i, k}), Index(m - 1));
      return fd({i, k}) < Index(m) && Less(sl.At(i, at), sl.At(k, at));
    };
  }
  // fo[i]: the first slice equal to slice i (i itself when it is the first).
  te::IterVar k1 = reduce_k("k");
  Tensor fo = te::compute(
      MakeShape({n}),
      [&](const std::vector<Var>& i) {
        const PrimExpr k = k1.var;
        return te::min(ir::select(k == PrimExpr(i[0]) || eq(k, i[0]), k, none), {k1});
      },
      "T_unique_first", tag::kCommReduce);
  // The position of slice i's value: the first occurrences that sort before it (sorted), or that
  // occur before its first occurrence.
  te::IterVar k2 = reduce_k("k");
  return te::compute(
      MakeShape({n}),
      [&](const std::vector<Var>& i) {
        const PrimExpr k = k2.var;
        const PrimExpr first_k = fo({k}) == k;
        const PrimExpr before = sorted ? lt(k, i[0]) : k < fo({i[0]});
        return te::sum(ir::select(first_k && before, ir::make_const(kI64, 1), ir::make_const(kI64, 0)), {k2});
      },
      "T_unique_inverse", tag::kCommReduce);
}

Tensor unique_select(const Tensor& inverse, const PrimExpr& count, const std::string& kind) {
  TESSERA_CHECK(kind == "first" || kind == "counts", "unique_select: kind must be first or counts, got '", kind, "'");
  TESSERA_CHECK(inverse.shape().size() == 1 && inverse.dtype() == kI64, "unique_select: the inverse must be int64 [n]");
  const PrimExpr n = inverse.shape()[0];
  // One pass over the inverse (an extern stage): the first k of each value j, or its count. O(n + count).
  auto body = [&](const std::vector<tir::Buffer>& in, const tir::Buffer& out) {
    Var j("j", DataType::Int(32)), k("k", DataType::Int(32));
    const PrimExpr v = ir::cast(DataType::Int(32), Load(in[0], {k}));
    const bool first = kind == "first";
    Stmt init = Loop(j, count, Store(out, first ? ir::cast(kI64, n) : ir::make_const(kI64, 0), {j}));
    // (A value outside [0, count) is skipped: the inverse's maximum + 1 is the count.)
    Stmt visit = If(v >= Index(0) && v < count,
                    first ? Store(out, ir::min(Load(out, {v}), ir::cast(kI64, k)), {v})
                          : Store(out, Load(out, {v}) + ir::make_const(kI64, 1), {v}));
    return tir::SeqStmtNode::make({init, Loop(k, n, visit)});
  };
  return te::extern_op({count}, kI64, {inverse}, body, kind == "first" ? "T_unique_indices" : "T_unique_counts");
}

}  // namespace tessera::topi
