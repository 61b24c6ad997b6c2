#include "tessera/topi/nn/dense_pack.h"

#include <algorithm>

#include "tessera/support/error.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

void CheckTile(const GemmPackTile& t, const char* op) {
  TESSERA_CHECK(t.mr >= 1 && t.nv >= 1 && t.bn >= 1, op, ": invalid GEMM tile (mr ", t.mr, ", nv ", t.nv, ", bn ",
                t.bn, ")");
}

std::map<std::string, PrimExpr> GemmAttrs(const GemmPackTile& t, int64_t batch_loops) {
  return {{"gemm_mr", Index(t.mr)}, {"gemm_nv", Index(t.nv)}, {"gemm_batch", Index(batch_loops)}};
}

// out[..., m, n] for m < m_real, n < n_real from the padded GEMM result (a no-op when nothing
// is padded); m_real < 0: the rows are not padded.
Tensor Unpad(const Tensor& padded, int64_t m_real, int64_t n_real) {
  std::vector<int64_t> s = ConstShape(padded);
  const bool pad_m = m_real >= 0 && s.size() >= 2 && s[s.size() - 2] != m_real;
  if (s.back() == n_real && !pad_m) return padded;
  s.back() = n_real;
  if (pad_m) s[s.size() - 2] = m_real;
  return te::compute(
      MakeShape(s), [&](const std::vector<Var>& i) { return padded(AsExprs(i)); }, "T_gemm_unpad",
      tag::kInjective);
}

}  // namespace

Tensor pack_dense_weight(const Tensor& w, const GemmPackTile& tile) {
  CheckTile(tile, "pack_dense_weight");
  std::vector<int64_t> ws = ConstShape(w);
  TESSERA_CHECK(ws.size() == 2, "pack_dense_weight: the weight must be 2-D [N, K]");
  const int64_t n = ws[0], k = ws[1], bn = tile.bn, nb = tile.PaddedN(n) / bn;
  return te::compute(
      MakeShape({nb, k, bn}),
      [&](const std::vector<Var>& i) {
        PrimExpr col = PrimExpr(i[0]) * Index(bn) + PrimExpr(i[2]);
        if (nb * bn == n) return w({col, PrimExpr(i[1])});
        // Clamped so that a vectorized select never reads out of bounds.
        PrimExpr v = w({ir::min(col, Index(n - 1)), PrimExpr(i[1])});
        return ir::select(col < Index(n), v, ir::make_zero(w.dtype()));
      },
      "T_pack_b", tag::kInjective);
}

namespace {
// Equal at compile time: the same constant or the same shape var.
bool SameDim(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (ir::as_const_int(a, &x) && ir::as_const_int(b, &y)) return x == y;
  return a.same_as(b);
}

bool AllConst(const std::vector<PrimExpr>& shape) {
  for (const PrimExpr& d : shape)
    if (!d.as<ir::IntImmNode>()) return false;
  return true;
}

// The constant dims of shape (UserError naming `op` when one is symbolic).
std::vector<int64_t> ConstDims(const std::vector<PrimExpr>& shape, const char* op, const char* what) {
  std::vector<int64_t> out;
  for (const PrimExpr& d : shape) {
    int64_t v = 0;
    TESSERA_CHECK(ir::as_const_int(d, &v), op, ": the ", what, " dims must be static (dynamic shapes: only M, N and K ",
                  "may be symbolic)");
    out.push_back(v);
  }
  return out;
}

// pack_matmul_b with a symbolic N or K (dynamic shapes): NB = PaddedN(N) / bn as an expression
// (floordiv(N + nv * bn - 1, nv * bn) * nv), the padded columns zero.
Tensor PackMatmulBSymbolic(const Tensor& b, const GemmPackTile& tile, bool transposed) {
  const std::vector<PrimExpr>& bs = b.shape();
  const size_t r = bs.size();
  const PrimExpr n = transposed ? bs[r - 2] : bs[r - 1], k = transposed ? bs[r - 1] : bs[r - 2];
  const int64_t bn = tile.bn, panel = tile.nv * tile.bn;
  const PrimExpr nb = ir::floordiv(n + Index(panel - 1), Index(panel)) * Index(tile.nv);
  std::vector<PrimExpr> out(bs.begin(), bs.end() - 2);
  out.insert(out.end(), {nb, k, Index(bn)});
  return te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end() - 3);
        PrimExpr col = PrimExpr(i[r - 2]) * Index(bn) + PrimExpr(i[r]);
        PrimExpr kk = i[r - 1];
        PrimExpr c = ir::min(col, n - Index(1));
        if (transposed) idx.insert(idx.end(), {c, kk});
        else idx.insert(idx.end(), {kk, c});
        return ir::select(col < n, b(idx), ir::make_zero(b.dtype()));
      },
      "T_pack_b", tag::kInjective);
}
}  // namespace

Tensor pack_matmul_b(const Tensor& b, const GemmPackTile& tile, bool transposed) {
  CheckTile(tile, "pack_matmul_b");
  if (b.ndim() >= 2 && !AllConst(b.shape())) {
    ConstDims(std::vector<PrimExpr>(b.shape().begin(), b.shape().end() - 2), "pack_matmul_b", "batch");
    return PackMatmulBSymbolic(b, tile, transposed);
  }
  std::vector<int64_t> bs = ConstShape(b);
  TESSERA_CHECK(bs.size() >= 2, "pack_matmul_b: the operand must have rank >= 2");
  const size_t r = bs.size();
  const int64_t n = transposed ? bs[r - 2] : bs[r - 1], k = transposed ? bs[r - 1] : bs[r - 2];
  const int64_t bn = tile.bn, nb = tile.PaddedN(n) / bn;
  std::vector<int64_t> out(bs.begin(), bs.end() - 2);
  out.insert(out.end(), {nb, k, bn});
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end() - 3);
        PrimExpr col = PrimExpr(i[r - 2]) * Index(bn) + PrimExpr(i[r]);
        PrimExpr kk = i[r - 1];
        PrimExpr c = nb * bn == n ? col : ir::min(col, Index(n - 1));
        if (transposed) idx.insert(idx.end(), {c, kk});
        else idx.insert(idx.end(), {kk, c});
        PrimExpr v = b(idx);
        if (nb * bn == n) return v;
        return ir::select(col < Index(n), v, ir::make_zero(b.dtype()));
      },
      "T_pack_b", tag::kInjective);
}

namespace {
// dense_packed over an x whose row dimension (the one before K) is symbolic (dynamic shapes,
// e.g. [seq, K], [1, seq, K], [batch, seq, K]; leading dims may be symbolic too). The rows are padded to
// floordiv(m + mr - 1, mr) * mr (padded rows read row m - 1), so the schedule splits them into
// whole tiles, and T_gemm_unpad slices off the real rows and columns.
Tensor DensePackedSymbolicRows(const Tensor& x, const Tensor& wp, int64_t n, const GemmPackTile& tile) {
  const std::vector<PrimExpr>& xs = x.shape();
  const std::vector<int64_t> ps = ConstShape(wp);
  const size_t r = xs.size();
  int64_t kx = 0;
  if (!ir::as_const_int(xs.back(), &kx)) {
    TESSERA_THROW(UnsupportedError, "dense_packed: the packed GEMM needs a static K (the last dimension of x)");
  }
  TESSERA_CHECK(ps.size() == 3 && kx == ps[1], "dense_packed: reduction extents differ (", kx, " vs ", ps[1], ")");
  TESSERA_CHECK(ps[2] == tile.bn && ps[0] * ps[2] == tile.PaddedN(n), "dense_packed: packed weight does not match N = ",
                n, " and the tile");
  TESSERA_CHECK(x.dtype() == wp.dtype(), "dense_packed: dtypes differ");
  const int64_t bn = tile.bn;
  const PrimExpr m = xs[r - 2];
  const PrimExpr mpad = ir::floordiv(m + Index(tile.mr - 1), Index(tile.mr)) * Index(tile.mr);
  std::vector<PrimExpr> out = xs;
  out[r - 2] = mpad;
  out.back() = Index(ps[0] * bn);
  te::IterVar k = te::reduce_axis(Range(Index(0), Index(kx)), "k");
  Tensor y = te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> xi = AsExprs(i);
        xi[r - 2] = ir::min(xi[r - 2], m - Index(1));
        xi.back() = k.var;
        PrimExpr nn = i.back();
        return te::sum(x(xi) * wp({ir::floordiv(nn, Index(bn)), k.var, ir::floormod(nn, Index(bn))}), {k});
      },
      "T_gemm_packed", tag::kDense, GemmAttrs(tile, 0));
  std::vector<PrimExpr> real = xs;
  real.back() = Index(n);
  return te::compute(
      real, [&](const std::vector<Var>& i) { return y(AsExprs(i)); }, "T_gemm_unpad", tag::kInjective);
}
}  // namespace

Tensor dense_packed(const Tensor& x, const Tensor& wp, int64_t n, const GemmPackTile& tile) {
  CheckTile(tile, "dense_packed");
  if (x.ndim() >= 2 && !x.shape()[x.ndim() - 2].as<ir::IntImmNode>()) return DensePackedSymbolicRows(x, wp, n, tile);
  std::vector<int64_t> xs = ConstShape(x), ps = ConstShape(wp);
  TESSERA_CHECK(!xs.empty() && ps.size() == 3, "dense_packed: need x of rank >= 1 and a packed weight [NB, K, bn]");
  TESSERA_CHECK(xs.back() == ps[1], "dense_packed: reduction extents differ (", xs.back(), " vs ", ps[1], ")");
  TESSERA_CHECK(ps[2] == tile.bn && ps[0] * ps[2] == tile.PaddedN(n), "dense_packed: packed weight ", ps[0], "x",
                ps[1], "x", ps[2], " does not match N = ", n, " and the tile");
  TESSERA_CHECK(x.dtype() == wp.dtype(), "dense_packed: dtypes differ");
  const int64_t bn = tile.bn;
  std::vector<int64_t> out = xs;
  out.back() = ps[0] * bn;
  // A 2-D x: rows padded to a multiple of mr (the padded rows read row M - 1 and are sliced
  // off), so the micro-kernel needs no predicate.
  const int64_t m = xs.size() == 2 ? xs[0] : -1;
  if (m > 0) out[0] = (m + tile.mr - 1) / tile.mr * tile.mr;
  te::IterVar k = te::reduce_axis(Range(Index(0), Index(xs.back())), "k");
  Tensor y = te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> xi = AsExprs(i);
        if (m > 0 && out[0] != m) xi[0] = ir::min(xi[0], Index(m - 1));
        xi.back() = k.var;
        PrimExpr nn = i.back();
        return te::sum(x(xi) * wp({ir::floordiv(nn, Index(bn)), k.var, ir::floormod(nn, Index(bn))}), {k});
      },
      "T_gemm_packed", tag::kDense, GemmAttrs(tile, 0));
  return Unpad(y, m, n);
}

Tensor batch_matmul_packed(const Tensor& a, const Tensor& bp, const PrimExpr& n, const GemmPackTile& tile,
                           bool transpose_a) {
  int64_t nc = 0;
  if (ir::as_const_int(n, &nc) && AllConst(a.shape()) && AllConst(bp.shape()))
    return batch_matmul_packed(a, bp, nc, tile, transpose_a);
  CheckTile(tile, "batch_matmul_packed");
  const std::vector<PrimExpr>& as = a.shape();
  const std::vector<PrimExpr>& ps = bp.shape();
  TESSERA_CHECK(as.size() >= 2 && ps.size() >= 3, "batch_matmul_packed: need a of rank >= 2 and bp of rank >= 3");
  TESSERA_CHECK(a.dtype() == bp.dtype(), "batch_matmul_packed: dtypes differ");
  const size_t ra = as.size(), rp = ps.size();
  const PrimExpr m = transpose_a ? as[ra - 1] : as[ra - 2], ka = transpose_a ? as[ra - 2] : as[ra - 1];
  TESSERA_CHECK(SameDim(ka, ps[rp - 2]), "batch_matmul_packed: reduction extents differ");
  int64_t bnc = 0;
  TESSERA_CHECK(ir::as_const_int(ps[rp - 1], &bnc) && bnc == tile.bn, "batch_matmul_packed: packed operand does not ",
                "match the tile");
  const std::vector<int64_t> ab = ConstDims({as.begin(), as.end() - 2}, "batch_matmul_packed", "batch");
  const std::vector<int64_t> pb = ConstDims({ps.begin(), ps.end() - 3}, "batch_matmul_packed", "batch");
  const std::vector<int64_t> batch = BroadcastShape(ab, pb);
  const size_t nb = batch.size();
  const int64_t bn = tile.bn;
  // Rows padded to a multiple of mr (padded rows read row m - 1): whole row tiles.
  const PrimExpr mpad = ir::floordiv(m + Index(tile.mr - 1), Index(tile.mr)) * Index(tile.mr);
  std::vector<PrimExpr> out = MakeShape(batch);
  out.insert(out.end(), {mpad, ps[rp - 3] * Index(bn)});
  te::IterVar k = te::reduce_axis(Range(Index(0), ka), "k");
  auto batch_index = [&](const std::vector<int64_t>& ts, const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < ts.size(); ++d) idx.push_back(ts[d] == 1 ? Index(0) : PrimExpr(i[nb - ts.size() + d]));
    return idx;
  };
  Tensor y = te::compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ai = batch_index(ab, i), bi = batch_index(pb, i);
        PrimExpr mm = ir::min(PrimExpr(i[nb]), m - Index(1)), nn = i[nb + 1];
        if (transpose_a) ai.insert(ai.end(), {k.var, mm});
        else ai.insert(ai.end(), {mm, k.var});
        bi.insert(bi.end(), {ir::floordiv(nn, Index(bn)), k.var, ir::floormod(nn, Index(bn))});
        return te::sum(a(ai) * bp(bi), {k});
      },
      "T_gemm_packed", tag::kDense, GemmAttrs(tile, static_cast<int64_t>(nb)));
  std::vector<PrimExpr> real = MakeShape(batch);
  real.insert(real.end(), {m, n});
  return te::compute(
      real, [&](const std::vector<Var>& i) { return y(AsExprs(i)); }, "T_gemm_unpad", tag::kInjective);
}

Tensor batch_matmul_packed(const Tensor& a, const Tensor& bp, int64_t n, const GemmPackTile& tile, bool transpose_a) {
  CheckTile(tile, "batch_matmul_packed");
  if (!AllConst(a.shape()) || !AllConst(bp.shape())) return batch_matmul_packed(a, bp, Index(n), tile, transpose_a);
  std::vector<int64_t> as = ConstShape(a), ps = ConstShape(bp);
  TESSERA_CHECK(as.size() >= 2 && ps.size() >= 3, "batch_matmul_packed: need a of rank >= 2 and bp of rank >= 3");
  TESSERA_CHECK(a.dtype() == bp.dtype(), "batch_matmul_packed: dtypes differ");
  const size_t ra = as.size(), rp = ps.size();
  const int64_t m = transpose_a ? as[ra - 1] : as[ra - 2], ka = transpose_a ? as[ra - 2] : as[ra - 1];
  TESSERA_CHECK(ka == ps[rp - 2], "batch_matmul_packed: reduction extents differ (", ka, " vs ", ps[rp - 2], ")");
  TESSERA_CHECK(ps[rp - 1] == tile.bn && ps[rp - 3] * ps[rp - 1] == tile.PaddedN(n), "batch_matmul_packed: packed ",
                "operand does not match N = ", n, " and the tile");
  std::vector<int64_t> ab(as.begin(), as.end() - 2), pb(ps.begin(), ps.end() - 3);
  std::vector<int64_t> batch = BroadcastShape(ab, pb);
  const size_t nb = batch.size();
  const int64_t bn = tile.bn;
  std::vector<int64_t> out = batch;
  const int64_t mpad = (m + tile.mr - 1) / tile.mr * tile.mr;  // padded rows read row m - 1
  out.insert(out.end(), {mpad, ps[rp - 3] * bn});
  te::IterVar k = te::reduce_axis(Range(Index(0), Index(ka)), "k");
  auto batch_index = [&](const std::vector<int64_t>& ts, const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < ts.size(); ++d) idx.push_back(ts[d] == 1 ? Index(0) : PrimExpr(i[nb - ts.size() + d]));
    return idx;
  };
  Tensor y = te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ai = batch_index(ab, i), bi = batch_index(pb, i);
        PrimExpr mm = mpad == m ? PrimExpr(i[nb]) : ir::min(PrimExpr(i[nb]), Index(m - 1)), nn = i[nb + 1];
        if (transpose_a) ai.insert(ai.end(), {k.var, mm});
        else ai.insert(ai.end(), {mm, k.var});
        bi.insert(bi.end(), {ir::floordiv(nn, Index(bn)), k.var, ir::floormod(nn, Index(bn))});
        return te::sum(a(ai) * bp(bi), {k});
      },
      "T_gemm_packed", tag::kDense, GemmAttrs(tile, static_cast<int64_t>(nb)));
  return Unpad(y, m, n);
}

}  // namespace tessera::topi
