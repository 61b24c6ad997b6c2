// Local timing of BERT's dominant kernels, static (seq = 128 compiled in) against symbolic
// (seq a shape var, run at 128): the packed GEMM with bias + GELU, and the two attention
// batch_matmuls (static: the packed template; symbolic: the generic compute on the default
// schedule). Not a test.   topi_dynamic_shape_bench [threads] [seq]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/ir/op.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/schedule.h"

using namespace tessera;
using ir::PrimExpr;
using topi::Index;

namespace {

const DataType f32 = DataType::Float(32);

// Median ms of 21 runs of the kernel built from args (the last is the output) at shape values.
double Time(const std::vector<te::Tensor>& args, const std::vector<int64_t>& values) {
  const target::Target target = driver::HostTarget();
  tir::PrimFunc f = topi::x86::DefaultSchedule(te::create_prim_func(args, "k"), topi::x86::ScheduleOptionsFor(target));
  tir::IRModule mod;
  mod.Add(tir::transform::LowerToFlat(f));
  runtime::Module m = codegen::BuildJIT(mod, target);
  std::vector<runtime::NDArray> arrays;
  std::vector<void*> ptrs;
  for (const tir::Buffer& p : f->params) {
    int64_t n = 1;
    for (const PrimExpr& d : p->shape) {
      int64_t c = 0;
      if (ir::as_const_int(d, &c)) n *= c;
      else n *= values.at(0);  // every symbolic dim is seq here
    }
    arrays.push_back(runtime::NDArray::Empty({n}, f32));
    float* x = static_cast<float*>(arrays.back().raw_data());
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 13) * 0.01f;
    ptrs.push_back(arrays.back().raw_data());
  }
  std::vector<int64_t> shapes = values;
  if (!f->shape_vars.empty()) ptrs.push_back(shapes.data());
  auto kern = m.GetKernel("k");
  for (int i = 0; i < 3; ++i) kern(ptrs.data());
  std::vector<double> ms;
  for (int i = 0; i < 21; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    kern(ptrs.data());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[10];
}

// gelu(x · w + bias) over the packed weight; rows = seq (a constant or the shape var).
std::vector<te::Tensor> DenseGelu(const PrimExpr& rows, int64_t n, int64_t k, const topi::GemmPackTile& t) {
  te::Tensor x = te::placeholder({rows, Index(k)}, f32, "x");
  te::Tensor wp = te::placeholder(topi::MakeShape({t.PaddedN(n) / t.bn, k, t.bn}), f32, "wp");
  te::Tensor bias = te::placeholder({Index(n)}, f32, "bias");
  te::Tensor d = topi::dense_packed(x, wp, n, t);
  te::Tensor y = te::compute(
      {rows, Index(n)},
      [&](const std::vector<ir::Var>& i) {
        PrimExpr v = d({i[0], i[1]}) + bias({i[1]});
        return v * 0.5f * (ir::tanh(v * 0.7978845608f * (v * v * 0.044715f + 1.0f)) + 1.0f);
      },
      "gelu", topi::tag::kElemWise);
  return {x, wp, bias, y};
}

// [12, s, 64] x [12, s, 64]^T (scores) or [12, s, s] x [12, s, 64] (context).
std::vector<te::Tensor> Bmm(const PrimExpr& s, int64_t sc, bool scores, bool packed) {
  const PrimExpr h = Index(12), d = Index(64);
  te::Tensor x = te::placeholder({h, s, scores ? d : s}, f32, "x");
  te::Tensor y = te::placeholder(scores ? std::vector<PrimExpr>{h, s, d} : std::vector<PrimExpr>{h, s, d}, f32, "y");
  if (packed) {
    const bool symbolic = !s.as<ir::IntImmNode>();
    const int64_t n = scores ? sc : 64, k = scores ? 64 : sc;
    topi::GemmPackTile t = topi::x86::ChooseGemmTile(symbolic ? -1 : sc, symbolic && scores ? -1 : n,
                                                     symbolic && !scores ? -1 : k, driver::HostTarget());
    if (std::getenv("BENCH_STATIC_TILE")) t = topi::x86::ChooseGemmTile(sc, n, k, driver::HostTarget());
    std::printf("  (%s tile %lldx%lld)\n", symbolic ? "symbolic" : "static", static_cast<long long>(t.mr),
                static_cast<long long>(t.nv));
    return {x, y, topi::batch_matmul_packed(x, topi::pack_matmul_b(y, t, scores), scores ? s : Index(64), t)};
  }
  const PrimExpr kext = scores ? d : s;
  te::IterVar k = te::reduce_axis(ir::Range(Index(0), kext), "k");
  te::Tensor z = te::compute(
      {h, s, scores ? s : d},
      [&](const std::vector<ir::Var>& i) {
        PrimExpr yv = scores ? y({i[0], i[2], k.var}) : y({i[0], k.var, i[2]});
        return te::sum(x({i[0], i[1], k.var}) * yv, {k});
      },
      "T_batch_matmul", topi::tag::kDense);
  return {x, y, z};
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int64_t seq = argc > 2 ? std::atoll(argv[2]) : 128;
  runtime::SetNumThreads(threads);
  const target::Target target = driver::HostTarget();
  ir::Var s("seq");
  std::printf("threads=%d seq=%lld target=%s\n", threads, static_cast<long long>(seq), target.str().c_str());
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{768, 768}, {3072, 768}, {768, 3072}}) {
    const topi::GemmPackTile ts = topi::x86::ChooseGemmTile(seq, n, k, target);
    const topi::GemmPackTile td = topi::x86::ChooseGemmTile(-1, n, k, target);
    const double a = Time(DenseGelu(Index(seq), n, k, ts), {});
    const double b = Time(DenseGelu(s, n, k, td), {seq});
    const double c = Time(DenseGelu(s, n, k, ts), {seq});
    std::printf("dense+gelu %lldx%lldx%lld: static %.3f ms (tile %lldx%lld), symbolic %.3f ms (tile %lldx%lld, %.2fx), "
                "symbolic with the static tile %.3f ms (%.2fx)\n",
                static_cast<long long>(seq), static_cast<long long>(n), static_cast<long long>(k), a,
                static_cast<long long>(ts.mr), static_cast<long long>(ts.nv), b, static_cast<long long>(td.mr),
                static_cast<long long>(td.nv), b / a, c, c / a);
  }
  for (bool scores : {true, false}) {
    const double a = Time(Bmm(Index(seq), seq, scores, true), {});
    const double b = Time(Bmm(s, seq, scores, false), {seq});
    const double c = Time(Bmm(s, seq, scores, true), {seq});
    std::printf("batch_matmul %s: static packed %.3f ms, symbolic packed %.3f ms (%.2fx), symbolic generic %.3f ms "
                "(%.2fx)\n",
                scores ? "Q.K^T [12,s,64]x[12,s,64]^T" : "P.V [12,s,s]x[12,s,64]", a, c, c / a, b, b / a);
  }
  return 0;
}
