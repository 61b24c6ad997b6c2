#include "tessera/topi/nonzero.h"

#include <functional>

#include "sort_util.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

using namespace detail;  // NOLINT
using tir::Stmt;

// Chunks of the flattened input that NonZero counts and writes in parallel.
constexpr int64_t kChunks = 64;

// x's extents, a scalar read as one element.
std::vector<PrimExpr> Extents(const Tensor& x) {
  return x.shape().empty() ? std::vector<PrimExpr>{Index(1)} : x.shape();
}

PrimExpr IsNonZero(const PrimExpr& v) { return v != ir::make_zero(v.dtype()); }

}  // namespace

Tensor nonzero_count(const Tensor& x) {
  const std::vector<PrimExpr> ext = Extents(x);
  std::vector<te::IterVar> axes;
  for (size_t d = 0; d < ext.size(); ++d)
    axes.push_back(te::reduce_axis(Range(Index(0), ext[d]), "k" + std::to_string(d)));
  return te::compute(
      {Index(1)},
      [&](const std::vector<Var>&) {
        std::vector<PrimExpr> idx;
        if (!x.shape().empty())
          for (const auto& a : axes) idx.push_back(a.var);
        return te::sum(ir::cast(DataType::Int(64), IsNonZero(x(idx))), axes);
      },
      "T_nonzero_count", tag::kCommReduce);
}

Tensor nonzero(const Tensor& x, const PrimExpr& count) {
  const std::vector<PrimExpr> ext = Extents(x);
  const int rank = static_cast<int>(ext.size());
  const PrimExpr n = ExtentProduct(ext);
  int64_t n_static = 0;
  const bool is_static = ir::as_const_int(n, &n_static);
  const int64_t chunks = is_static ? std::max<int64_t>(1, std::min<int64_t>(kChunks, n_static)) : kChunks;
  const PrimExpr chunk = ir::floordiv(n + Index(chunks - 1), Index(chunks));
  const tir::Buffer offsets = tir::Buffer::make("nonzero_offsets", DataType::Int(32), MakeShape({chunks}));
  auto body = [&](const std::vector<tir::Buffer>&, const tir::Buffer& out) {
    // A loop over one chunk's elements; `per_element` gets the element's flat position and whether it
    // is non-zero. Each call makes its own loop variable (a variable is bound by one loop only).
    auto over_chunk = [&](const Var& ch, const std::function<Stmt(PrimExpr, PrimExpr)>& per_element) {
      Var p("p", DataType::Int(32));
      const PrimExpr begin = PrimExpr(ch) * chunk, end = ir::min(begin + chunk, n);
      const PrimExpr pos = begin + PrimExpr(p);
      return Loop(p, ir::max(end - begin, Index(0)), per_element(pos, IsNonZero(x(Unravel(pos, x.shape())))));
    };
    // 1. Each chunk counts its non-zero elements (in parallel).
    Var ch1("ch", DataType::Int(32));
    Stmt count_chunks = Loop(ch1, Index(chunks), WithLocal("nonzero_count", DataType::Int(32), 1, [&](const tir::Buffer& c) {
      return tir::SeqStmtNode::make({Store(c, Index(0), {Index(0)}),
                                     over_chunk(ch1, [&](PrimExpr, PrimExpr hit) {
                                       return If(hit, Store(c, Load(c, {Index(0)}) + Index(1), {Index(0)}));
                                     }),
                                     Store(offsets, Load(c, {Index(0)}), {ch1})});
    }), tir::ForKind::kParallel);
    // 2. The chunks' first output columns: an exclusive prefix sum of the counts.
    Var k("k", DataType::Int(32));
    Stmt prefix = WithLocal("nonzero_run", DataType::Int(32), 2, [&](const tir::Buffer& run) {
      return tir::SeqStmtNode::make(
          {Store(run, Index(0), {Index(0)}),
           Loop(k, Index(chunks), tir::SeqStmtNode::make({Store(run, Load(offsets, {k}), {Index(1)}),
                                                         Store(offsets, Load(run, {Index(0)}), {k}),
                                                         Store(run, Load(run, {Index(0)}) + Load(run, {Index(1)}), {Index(0)})}))});
    });
    // 3. Each chunk writes its elements' coordinates from its first column on (in parallel; a column
    // at or past `count` is never written).
    Var ch2("ch", DataType::Int(32));
    Stmt write = Loop(ch2, Index(chunks), WithLocal("nonzero_column", DataType::Int(32), 1, [&](const tir::Buffer& col) {
      const PrimExpr c = Load(col, {Index(0)});
      Stmt per_chunk = over_chunk(ch2, [&](PrimExpr pos, PrimExpr hit) {
        std::vector<Stmt> coords;
        const std::vector<PrimExpr> coord = Unravel(pos, ext);
        for (int dim = 0; dim < rank; ++dim)
          coords.push_back(Store(out, ir::cast(DataType::Int(64), coord[dim]), {Index(dim), c}));
        coords.push_back(Store(col, c + Index(1), {Index(0)}));
        return If(hit && c < count, tir::SeqStmtNode::make(coords));
      });
      return tir::SeqStmtNode::make({Store(col, Load(offsets, {ch2}), {Index(0)}), per_chunk});
    }), tir::ForKind::kParallel);
    return tir::SeqStmtNode::make({count_chunks, prefix, write});
  };
  return te::extern_op({Index(rank), count}, DataType::Int(64), {x}, body, "T_nonzero", "extern", {offsets});
}

}  // namespace tessera::topi
