// Kernels with symbolic extents (dynamic shapes, Relay's Any; arXiv 2006.03031): TE with a
// shape var n -> create_prim_func -> the default x86 schedule -> LowerToFlat -> the reference
// interpreter (small n) and the LLVM JIT at n = 1, 3, 64, 129, against plain C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/multi_level_tiling.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#include "topi_test_util.h"
#ifdef TESSERA_TOPI_TEST_JIT
#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/ndarray.h"
#endif

namespace tessera::topi {
namespace {

using testing::Data;
using testing::PackRef;
using testing::Random;

const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

PrimExpr C(int64_t v) { return Index(v); }

// A compiled kernel of symbolic shape: the scheduled (block form) and flat PrimFuncs, and the
// JIT module when the build has the codegen.
struct Kernel {
  tir::PrimFunc unscheduled, scheduled, flat;
#ifdef TESSERA_TOPI_TEST_JIT
  std::optional<runtime::Module> jit;
#endif
};

Kernel Build(const std::vector<te::Tensor>& args, const std::string& name) {
  Kernel k;
  k.unscheduled = te::create_prim_func(args, name);
  k.scheduled = x86::DefaultSchedule(k.unscheduled, x86::ScheduleOptionsFor(testing::TestTarget()));
  k.flat = tir::transform::LowerToFlat(k.scheduled);
  if (std::getenv("TESSERA_DUMP")) std::cerr << k.scheduled << "\n" << k.flat << "\n";
#ifdef TESSERA_TOPI_TEST_JIT
  tir::IRModule mod;
  mod.Add(k.flat);
  k.jit = codegen::BuildJIT(mod, driver::HostTarget());
#endif
  return k;
}

// Elements of param p at the given shape var values.
int64_t Elements(const tir::PrimFunc& f, size_t p, const std::vector<int64_t>& values) {
  int64_t n = 1;
  for (const PrimExpr& d : f->params[p]->shape) {
    int64_t c = 0;
    if (ir::as_const_int(d, &c)) {
      n *= c;
      continue;
    }
    bool found = false;
    for (size_t i = 0; i < f->shape_vars.size(); ++i) {
      if (f->shape_vars[i].get() == d.get()) {
        n *= values[i];
        found = true;
      }
    }
    EXPECT_TRUE(found) << "dimension " << tir::AsText(d);
  }
  return n;
}

enum class How { kInterpUnscheduled, kInterpScheduled, kInterpFlat, kJIT };

// Runs the kernel on `inputs` (the first params) at shape var `values`; returns the outputs.
std::vector<Data> Run(const Kernel& k, const std::vector<Data>& inputs, const std::vector<int64_t>& values, How how) {
  const tir::PrimFunc& f = k.flat;
  std::vector<Data> storage = inputs;
  for (size_t p = inputs.size(); p < f->params.size(); ++p) storage.emplace_back(Elements(f, p, values), -777.0);
  for (size_t p = 0; p < inputs.size(); ++p) EXPECT_EQ(static_cast<int64_t>(inputs[p].size()), Elements(f, p, values));
  if (how == How::kJIT) {
#ifdef TESSERA_TOPI_TEST_JIT
    std::vector<std::vector<float>> mem;
    std::vector<void*> args;
    for (const Data& d : storage) mem.emplace_back(d.begin(), d.end());
    std::vector<runtime::NDArray> arrays;
    for (auto& m : mem) {
      arrays.push_back(runtime::NDArray::Empty({static_cast<int64_t>(std::max<size_t>(m.size(), 1))}, f32));
      std::copy(m.begin(), m.end(), static_cast<float*>(arrays.back().raw_data()));
      args.push_back(arrays.back().raw_data());
    }
    std::vector<int64_t> shape_values = values;
    args.push_back(shape_values.data());  // the extra slot of runtime/kernel_abi.h
    EXPECT_EQ(k.jit->GetKernel(f->name)(args.data()), 0);
    for (size_t p = 0; p < storage.size(); ++p) {
      const float* out = static_cast<const float*>(arrays[p].raw_data());
      for (size_t i = 0; i < storage[p].size(); ++i) storage[p][i] = out[i];
    }
#else
    ADD_FAILURE() << "no JIT";
#endif
  } else {
    const tir::PrimFunc& g = how == How::kInterpUnscheduled ? k.unscheduled
                             : how == How::kInterpScheduled ? k.scheduled
                                                            : k.flat;
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    tir::testing::RunPrimFunc(g, ptrs, values);
  }
  return std::vector<Data>(storage.begin() + static_cast<long>(inputs.size()), storage.end());
}

void ExpectNear(const Data& got, const Data& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
}

using Reference = std::function<std::vector<Data>(const std::vector<Data>& inputs, const std::vector<int64_t>& values)>;
using Inputs = std::function<std::vector<Data>(const std::vector<int64_t>& values)>;

// Checks the kernel at every value set: the JIT always, the interpreter (unscheduled, scheduled,
// flat) where `interp_max` bounds the values.
void Check(const Kernel& k, const Inputs& make_inputs, const Reference& ref,
           const std::vector<std::vector<int64_t>>& value_sets, double tol, int64_t interp_max) {
  for (const auto& values : value_sets) {
    std::string at = k.flat->name + " at";
    for (int64_t v : values) at += " " + std::to_string(v);
    const std::vector<Data> in = make_inputs(values);
    const std::vector<Data> want = ref(in, values);
    bool small = true;
    for (int64_t v : values) small &= v <= interp_max;
    if (small) {
      for (How how : {How::kInterpUnscheduled, How::kInterpScheduled, How::kInterpFlat}) {
        // TensorIR semantics: an init runs at the first reduction iteration, so an unscheduled
        // reduction over an empty symbolic domain leaves its output as it was; the default
        // schedule decomposes such inits (DecomposeSymbolicReductions).
        bool empty = false;
        for (int64_t v : values) empty |= v == 0;
        if (empty && how == How::kInterpUnscheduled) continue;
        const std::vector<Data> got = Run(k, in, values, how);
        for (size_t o = 0; o < want.size(); ++o) ExpectNear(got[o], want[o], tol, at + " (interpreter)");
      }
    }
    if (testing::HaveJIT()) {
      const std::vector<Data> got = Run(k, in, values, How::kJIT);
      for (size_t o = 0; o < want.size(); ++o) ExpectNear(got[o], want[o], tol, at + " (JIT)");
    }
  }
}

const std::vector<std::vector<int64_t>> kNs = {{0}, {1}, {3}, {64}, {129}};

// ---- contract: create_prim_func, printer, StructuralEqual ----

TEST(DynamicShape, CreatePrimFuncOrdersShapeVars) {
  Var n("n", i32), m("m", i32);
  te::Tensor a = te::placeholder({n, C(4)}, f32, "A");
  te::Tensor b = te::placeholder({m, n}, f32, "B");
  te::Tensor c = te::compute({m, n}, [&](const std::vector<Var>& i) { return a({i[1], C(0)}) + b({i[0], i[1]}); }, "C");
  tir::PrimFunc f = te::create_prim_func({a, b, c}, "f");
  ASSERT_EQ(f->shape_vars.size(), 2u);
  EXPECT_TRUE(f->shape_vars[0].same_as(n));
  EXPECT_TRUE(f->shape_vars[1].same_as(m));
  EXPECT_EQ(f->shape_vars[0]->name_hint, "n");
  EXPECT_EQ(f->shape_vars[0].dtype(), i32);
  // Order follows the params: B first gives m, n.
  tir::PrimFunc g = te::create_prim_func({b, a, c}, "g");
  ASSERT_EQ(g->shape_vars.size(), 2u);
  EXPECT_TRUE(g->shape_vars[0].same_as(m));
  EXPECT_TRUE(g->shape_vars[1].same_as(n));
  // Static kernels have none.
  te::Tensor s = te::placeholder({C(4)}, f32, "S");
  te::Tensor t = te::compute({C(4)}, [&](const std::vector<Var>& i) { return s({i[0]}) * 2.0f; }, "T");
  EXPECT_TRUE(te::create_prim_func({s, t}, "static")->shape_vars.empty());
  // WithBody keeps them.
  EXPECT_EQ(f.WithBody(f->body)->shape_vars.size(), 2u);
}

TEST(DynamicShape, ExpressionDimensionIsRefused) {
  Var n("n", i32);
  te::Tensor a = te::placeholder({n * 2}, f32, "A");
  te::Tensor b = te::compute({n * 2}, [&](const std::vector<Var>& i) { return a({i[0]}); }, "B");
  EXPECT_THROW(te::create_prim_func({a, b}, "f"), UnsupportedError);
}

TEST(DynamicShape, PrinterShowsShapeVars) {
  Var n("seq", i32);
  te::Tensor a = te::placeholder({n, C(8)}, f32, "A");
  te::Tensor b = te::compute({n, C(8)}, [&](const std::vector<Var>& i) { return a({i[0], i[1]}) * 2.0f; }, "B");
  const std::string text = tir::AsText(te::create_prim_func({a, b}, "f"));
  EXPECT_NE(text.find("# shape_vars: seq: int32"), std::string::npos) << text;
  EXPECT_NE(text.find("Buffer((seq, 8)"), std::string::npos) << text;
}

tir::PrimFunc Scale(const Var& n, int64_t cols, float by) {
  te::Tensor a = te::placeholder({n, C(cols)}, f32, "A");
  te::Tensor b = te::compute({n, C(cols)}, [&](const std::vector<Var>& i) { return a({i[0], i[1]}) * by; }, "B");
  return te::create_prim_func({a, b}, "f");
}

TEST(DynamicShape, StructuralEqualMapsShapeVars) {
  Var n("n", i32), m("m", i32);
  EXPECT_TRUE(tir::StructuralEqual(Scale(n, 8, 2.0f), Scale(m, 8, 2.0f)));  // vars map
  EXPECT_EQ(tir::StructuralHash(Scale(n, 8, 2.0f)), tir::StructuralHash(Scale(m, 8, 2.0f)));
  EXPECT_FALSE(tir::StructuralEqual(Scale(n, 8, 2.0f), Scale(n, 8, 3.0f)));
  // Symbolic against static: differ.
  te::Tensor a = te::placeholder({C(4), C(8)}, f32, "A");
  te::Tensor b = te::compute({C(4), C(8)}, [&](const std::vector<Var>& i) { return a({i[0], i[1]}) * 2.0f; }, "B");
  EXPECT_FALSE(tir::StructuralEqual(Scale(n, 8, 2.0f), te::create_prim_func({a, b}, "f")));
  // Same body, one more shape var listed: differ.
  tir::PrimFunc f = Scale(n, 8, 2.0f);
  tir::PrimFunc g = tir::PrimFunc::make(f->name, f->params, f->body, f->attrs, {n, Var("extra", i32)});
  EXPECT_FALSE(tir::StructuralEqual(f, g));
}

// ---- numerics ----

TEST(DynamicShape, ElementwiseChain) {
  Var n("n", i32);
  te::Tensor x = te::placeholder({n, C(768)}, f32, "x");
  te::Tensor a = te::compute({n, C(768)}, [&](const std::vector<Var>& i) { return x({i[0], i[1]}) * 2.0f; }, "a",
                             tag::kElemWise);
  te::Tensor b = te::compute({n, C(768)}, [&](const std::vector<Var>& i) { return a({i[0], i[1]}) + 1.0f; }, "b",
                             tag::kElemWise);
  te::Tensor c = te::compute(
      {n, C(768)}, [&](const std::vector<Var>& i) { return ir::max(b({i[0], i[1]}), ir::make_const(f32, 0.5)); }, "c",
      tag::kElemWise);
  Kernel k = Build({x, c}, "chain");
  Check(
      k, [](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * 768, 1)}; },
      [](const std::vector<Data>& in, const std::vector<int64_t>&) {
        Data out(in[0].size());
        for (size_t i = 0; i < out.size(); ++i) out[i] = std::max(in[0][i] * 2 + 1, 0.5);
        return std::vector<Data>{out};
      },
      kNs, 1e-6, 3);
}

TEST(DynamicShape, BroadcastAdd) {
  Var n("n", i32);
  te::Tensor x = te::placeholder({n, C(768)}, f32, "x");
  te::Tensor y = te::placeholder({C(768)}, f32, "y");
  te::Tensor z = te::compute({n, C(768)}, [&](const std::vector<Var>& i) { return x({i[0], i[1]}) + y({i[1]}); },
                             "z", tag::kBroadcast);
  Kernel k = Build({x, y, z}, "badd");
  Check(
      k, [](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * 768, 1), Random(768, 2)}; },
      [](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(v[0] * 768);
        for (int64_t r = 0; r < v[0]; ++r)
          for (int64_t c = 0; c < 768; ++c) out[r * 768 + c] = in[0][r * 768 + c] + in[1][c];
        return std::vector<Data>{out};
      },
      kNs, 1e-6, 3);
}

TEST(DynamicShape, SoftmaxLastAxis) {
  Var n("n", i32);
  const int64_t w = 128;
  te::Tensor x = te::placeholder({n, C(w)}, f32, "x");
  te::IterVar k1 = te::reduce_axis(Range(C(0), C(w)), "k1");
  te::Tensor mx = te::compute({n}, [&](const std::vector<Var>& i) { return te::max(x({i[0], k1.var}), {k1}); }, "mx",
                              tag::kSoftmax);
  te::Tensor e = te::compute(
      {n, C(w)}, [&](const std::vector<Var>& i) { return ir::exp(x({i[0], i[1]}) - mx({i[0]})); }, "e",
      tag::kSoftmax);
  te::IterVar k2 = te::reduce_axis(Range(C(0), C(w)), "k2");
  te::Tensor s = te::compute({n}, [&](const std::vector<Var>& i) { return te::sum(e({i[0], k2.var}), {k2}); }, "s",
                             tag::kSoftmax);
  te::Tensor y = te::compute({n, C(w)}, [&](const std::vector<Var>& i) { return e({i[0], i[1]}) / s({i[0]}); }, "y",
                             tag::kSoftmax);
  Kernel k = Build({x, y}, "softmax");
  Check(
      k, [&](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * w, 3, -4, 4)}; },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(v[0] * w);
        for (int64_t r = 0; r < v[0]; ++r) {
          double m = -INFINITY, sum = 0;
          for (int64_t c = 0; c < w; ++c) m = std::max(m, in[0][r * w + c]);
          for (int64_t c = 0; c < w; ++c) sum += std::exp(in[0][r * w + c] - m);
          for (int64_t c = 0; c < w; ++c) out[r * w + c] = std::exp(in[0][r * w + c] - m) / sum;
        }
        return std::vector<Data>{out};
      },
      kNs, 1e-5, 3);
}

TEST(DynamicShape, LayerNormRows) {
  Var n("n", i32);
  const int64_t w = 768;
  te::Tensor x = te::placeholder({n, C(w)}, f32, "x");
  te::IterVar k1 = te::reduce_axis(Range(C(0), C(w)), "k1");
  te::Tensor s1 = te::compute({n}, [&](const std::vector<Var>& i) { return te::sum(x({i[0], k1.var}), {k1}); }, "s1",
                              tag::kCommReduce);
  te::Tensor mean = te::compute({n}, [&](const std::vector<Var>& i) { return s1({i[0]}) * (1.0f / w); }, "mean",
                                tag::kElemWise);
  te::Tensor d = te::compute({n, C(w)}, [&](const std::vector<Var>& i) { return x({i[0], i[1]}) - mean({i[0]}); },
                             "d", tag::kBroadcast);
  te::IterVar k2 = te::reduce_axis(Range(C(0), C(w)), "k2");
  te::Tensor s2 = te::compute(
      {n}, [&](const std::vector<Var>& i) { return te::sum(d({i[0], k2.var}) * d({i[0], k2.var}), {k2}); }, "s2",
      tag::kCommReduce);
  te::Tensor y = te::compute(
      {n, C(w)},
      [&](const std::vector<Var>& i) { return d({i[0], i[1]}) / ir::sqrt(s2({i[0]}) * (1.0f / w) + 1e-5f); }, "y",
      tag::kBroadcast);
  Kernel k = Build({x, y}, "layernorm");
  Check(
      k, [&](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * w, 4, -2, 3)}; },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(v[0] * w);
        for (int64_t r = 0; r < v[0]; ++r) {
          double m = 0, var = 0;
          for (int64_t c = 0; c < w; ++c) m += in[0][r * w + c];
          m /= w;
          for (int64_t c = 0; c < w; ++c) var += (in[0][r * w + c] - m) * (in[0][r * w + c] - m);
          var /= w;
          for (int64_t c = 0; c < w; ++c) out[r * w + c] = (in[0][r * w + c] - m) / std::sqrt(var + 1e-5);
        }
        return std::vector<Data>{out};
      },
      kNs, 1e-4, 3);
}

TEST(DynamicShape, SumOverSymbolicAxis) {
  Var n("n", i32);
  te::Tensor x = te::placeholder({n, C(64)}, f32, "x");
  te::IterVar k = te::reduce_axis(Range(C(0), n), "k");
  te::Tensor s = te::compute({C(64)}, [&](const std::vector<Var>& i) { return te::sum(x({k.var, i[0]}), {k}); }, "s",
                             tag::kCommReduce);
  Kernel kern = Build({x, s}, "colsum");
  Check(
      kern, [](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * 64, 5)}; },
      [](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(64, 0.0);
        for (int64_t r = 0; r < v[0]; ++r)
          for (int64_t c = 0; c < 64; ++c) out[c] += in[0][r * 64 + c];
        return std::vector<Data>{out};
      },
      kNs, 1e-5, 3);
}

// A whole reduction over a symbolic axis (nothing to vectorize): at n = 0 the output is the
// init, which the default schedule decomposes out of the empty reduction loop.
TEST(DynamicShape, TotalOverSymbolicAxisIncludingEmpty) {
  Var n("n", i32);
  te::Tensor x = te::placeholder({n}, f32, "x");
  te::IterVar k = te::reduce_axis(Range(C(0), n), "k");
  te::Tensor s = te::compute({C(1)}, [&](const std::vector<Var>&) { return te::sum(x({k.var}) * 2.0f, {k}); }, "s",
                             tag::kCommReduce);
  Kernel kern = Build({x, s}, "total");
  Check(
      kern, [](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0], 5)}; },
      [](const std::vector<Data>& in, const std::vector<int64_t>&) {
        double t = 0;
        for (double v : in[0]) t += 2 * v;
        return std::vector<Data>{{t}};
      },
      kNs, 1e-5, 3);
}

// The generic dense / matmul compute of topi (nn/dense.cc) on a symbolic row count.
te::Tensor Matmul(const te::Tensor& a, const te::Tensor& b, const PrimExpr& m, int64_t kext, int64_t next) {
  te::IterVar k = te::reduce_axis(Range(C(0), C(kext)), "k");
  return te::compute(
      {m, C(next)}, [&](const std::vector<Var>& i) { return te::sum(a({i[0], k.var}) * b({k.var, i[1]}), {k}); },
      "T_matmul", tag::kDense);
}

TEST(DynamicShape, Matmul) {
  Var n("n", i32);
  const int64_t K = 768, N = 3072;
  te::Tensor a = te::placeholder({n, C(K)}, f32, "a");
  te::Tensor b = te::placeholder({C(K), C(N)}, f32, "b");
  te::Tensor c = Matmul(a, b, n, K, N);
  Kernel k = Build({a, b, c}, "matmul");
  Check(
      k, [&](const std::vector<int64_t>& v) { return std::vector<Data>{Random(v[0] * K, 6), Random(K * N, 7)}; },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(v[0] * N, 0.0);
        for (int64_t r = 0; r < v[0]; ++r)
          for (int64_t kk = 0; kk < K; ++kk) {
            const double x = in[0][r * K + kk];
            for (int64_t c = 0; c < N; ++c) out[r * N + c] += x * in[1][kk * N + c];
          }
        return std::vector<Data>{out};
      },
      kNs, 1e-4, 0);
}

TEST(DynamicShape, BatchMatmulSymbolicBothSides) {
  Var n("n", i32);
  const int64_t B = 12, K = 64;
  te::Tensor x = te::placeholder({C(B), n, C(K)}, f32, "x");
  te::Tensor y = te::placeholder({C(B), C(K), n}, f32, "y");
  te::IterVar k = te::reduce_axis(Range(C(0), C(K)), "k");
  te::Tensor z = te::compute(
      {C(B), n, n},
      [&](const std::vector<Var>& i) { return te::sum(x({i[0], i[1], k.var}) * y({i[0], k.var, i[2]}), {k}); },
      "T_batch_matmul", tag::kDense);
  Kernel kern = Build({x, y, z}, "bmm");
  Check(
      kern,
      [&](const std::vector<int64_t>& v) { return std::vector<Data>{Random(B * v[0] * K, 8), Random(B * K * v[0], 9)}; },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        const int64_t s = v[0];
        Data out(B * s * s, 0.0);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t i = 0; i < s; ++i)
            for (int64_t j = 0; j < s; ++j) {
              double acc = 0;
              for (int64_t kk = 0; kk < K; ++kk) acc += in[0][(b * s + i) * K + kk] * in[1][(b * K + kk) * s + j];
              out[(b * s + i) * s + j] = acc;
            }
        return std::vector<Data>{out};
      },
      kNs, 1e-4, 3);
}

TEST(DynamicShape, TwoShapeVars) {
  Var b("batch_size", i32), s("seq", i32);
  te::Tensor x = te::placeholder({b, s, C(32)}, f32, "x");
  te::Tensor y = te::placeholder({s, C(32)}, f32, "y");
  te::IterVar k = te::reduce_axis(Range(C(0), C(32)), "k");
  te::Tensor t = te::compute(
      {b, s, C(32)}, [&](const std::vector<Var>& i) { return x({i[0], i[1], i[2]}) * y({i[1], i[2]}); }, "t",
      tag::kBroadcast);
  te::Tensor z = te::compute({b, s}, [&](const std::vector<Var>& i) { return te::sum(t({i[0], i[1], k.var}), {k}); },
                             "z", tag::kCommReduce);
  Kernel kern = Build({x, y, z}, "two_vars");
  ASSERT_EQ(kern.flat->shape_vars.size(), 2u);
  EXPECT_EQ(kern.flat->shape_vars[0]->name_hint, "batch_size");
  EXPECT_EQ(kern.flat->shape_vars[1]->name_hint, "seq");
  Check(
      kern,
      [&](const std::vector<int64_t>& v) {
        return std::vector<Data>{Random(v[0] * v[1] * 32, 10), Random(v[1] * 32, 11)};
      },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        Data out(v[0] * v[1], 0.0);
        for (int64_t i = 0; i < v[0]; ++i)
          for (int64_t j = 0; j < v[1]; ++j)
            for (int64_t c = 0; c < 32; ++c) out[i * v[1] + j] += in[0][(i * v[1] + j) * 32 + c] * in[1][j * 32 + c];
        return std::vector<Data>{out};
      },
      {{1, 1}, {3, 5}, {2, 64}, {5, 129}}, 1e-5, 5);
}

// ---- the packed GEMM (topi/nn/dense_pack.h, topi/x86/dense.h) with a symbolic row count ----


// Whether a statement has an `if` or a block predicate under a loop whose var is named `name`.
bool GuardedUnder(const tir::Stmt& s, const std::string& name) {
  struct V : tir::StmtExprVisitor {
    std::string name;
    int depth = 0;
    bool found = false;
    void VisitStmt_(const tir::ForNode* op) override {
      const bool in = op->loop_var->name_hint == name;
      depth += in;
      tir::StmtExprVisitor::VisitStmt_(op);
      depth -= in;
    }
    void VisitStmt_(const tir::IfThenElseNode* op) override {
      found |= depth > 0;
      tir::StmtExprVisitor::VisitStmt_(op);
    }
  } v;
  v.name = name;
  v.VisitStmt(s);
  return v.found;
}

// y = gelu(x · wᵀ + bias) (tanh form) over x [rows..., K] with symbolic rows, w prepacked.
void CheckGemmSymbolicRows(const std::vector<PrimExpr>& xshape, int64_t N, int64_t K, int64_t interp_max,
                           const std::vector<std::vector<int64_t>>& ns) {
  GemmPackTile t = x86::ChooseGemmTile(-1, N, K, testing::TestTarget());
  te::Tensor x = te::placeholder(xshape, f32, "x");
  te::Tensor wp = te::placeholder(MakeShape({t.PaddedN(N) / t.bn, K, t.bn}), f32, "wp");
  te::Tensor bias = te::placeholder({C(N)}, f32, "bias");
  te::Tensor d = dense_packed(x, wp, N, t);
  std::vector<PrimExpr> oshape = xshape;
  oshape.back() = C(N);
  const size_t r = oshape.size();
  te::Tensor y = te::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = d(AsExprs(i)) + bias({i[r - 1]});
        return v * 0.5f * (ir::tanh(v * 0.7978845608f * (v * v * 0.044715f + 1.0f)) + 1.0f);
      },
      "gelu", tag::kElemWise);
  Kernel k = Build({x, wp, bias, y}, "gemm_dyn");
  // The micro-kernel: no guard inside the reduction loop (whole tiles of mr rows), parallel tiles.
  EXPECT_FALSE(GuardedUnder(k.flat->body, "k")) << k.flat;
  testing::LoopKinds kinds;
  kinds.VisitStmt(k.scheduled->body);
  EXPECT_GE(kinds.parallel, 1) << k.scheduled;
  EXPECT_GE(kinds.unrolled, 1) << k.scheduled;
  Check(
      k,
      [&](const std::vector<int64_t>& v) {
        int64_t rows = 1;
        for (int64_t x : v) rows *= x;
        return std::vector<Data>{Random(rows * K, 21), PackRef(Random(N * K, 22), N, K, t), Random(N, 23)};
      },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        const Data w = Random(N * K, 22);
        int64_t rows = 1;
        for (int64_t x : v) rows *= x;
        Data out(rows * N);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double a = 0;
            for (int64_t kk = 0; kk < K; ++kk) a += in[0][i * K + kk] * w[j * K + kk];
            a += in[2][j];
            out[i * N + j] = 0.5 * a * (1 + std::tanh(0.7978845608 * (a + 0.044715 * a * a * a)));
          }
        return std::vector<Data>{out};
      },
      ns, 2e-4, interp_max);
}

TEST(DynamicShape, PackedGemmSymbolicRowsSmall) {
  Var n("n", i32);
  CheckGemmSymbolicRows({n, C(40)}, 45, 40, 13, {{1}, {3}, {7}, {13}, {64}, {129}});
}

TEST(DynamicShape, PackedGemmSymbolicRowsBert) {
  Var n("seq", i32);
  CheckGemmSymbolicRows({n, C(768)}, 768, 768, 0, kNs);
  CheckGemmSymbolicRows({C(1), n, C(768)}, 3072, 768, 0, {{1}, {129}});
}

TEST(DynamicShape, PackedGemmSymbolicBatchAndRows) {
  Var b("batch_size", i32), s("seq", i32);
  CheckGemmSymbolicRows({b, s, C(40)}, 45, 40, 7, {{1, 1}, {2, 7}, {3, 0}, {3, 50}});
}

// BERT's attention products with a symbolic sequence length through the packed template (the
// right operand packed in the kernel): scores [12, s, 64] x [12, s, 64]^T (symbolic M and N),
// context [12, s, s] x [12, s, 64] (symbolic M and K).
void CheckBatchMatmulPacked(bool scores) {
  Var s("seq", i32);
  const int64_t H = 12, D = 64;
  te::Tensor x = te::placeholder({C(H), s, scores ? C(D) : PrimExpr(s)}, f32, "x");
  te::Tensor y = te::placeholder({C(H), s, C(D)}, f32, "y");
  GemmPackTile t = x86::ChooseGemmTile(-1, scores ? -1 : D, scores ? D : -1, testing::TestTarget());
  te::Tensor z = batch_matmul_packed(x, pack_matmul_b(y, t, /*transposed=*/scores), scores ? PrimExpr(s) : C(D), t);
  Kernel k = Build({x, y, z}, scores ? "bmm_scores" : "bmm_context");
  EXPECT_FALSE(GuardedUnder(k.flat->body, "k")) << k.flat;
  testing::LoopKinds kinds;
  kinds.VisitStmt(k.scheduled->body);
  EXPECT_GE(kinds.parallel, 2) << k.scheduled;  // the packing and the GEMM tiles
  Check(
      k,
      [&](const std::vector<int64_t>& v) {
        return std::vector<Data>{Random(H * v[0] * (scores ? D : v[0]), 31), Random(H * v[0] * D, 32)};
      },
      [&](const std::vector<Data>& in, const std::vector<int64_t>& v) {
        const int64_t S = v[0], N = scores ? S : D, K = scores ? D : S;
        Data out(H * S * N, 0.0);
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < S; ++i)
            for (int64_t j = 0; j < N; ++j) {
              double acc = 0;
              for (int64_t kk = 0; kk < K; ++kk) {
                const double b = scores ? in[1][(h * S + j) * D + kk] : in[1][(h * S + kk) * D + j];
                acc += in[0][(h * S + i) * K + kk] * b;
              }
              out[(h * S + i) * N + j] = acc;
            }
        return std::vector<Data>{out};
      },
      kNs, 1e-4, 3);
}

TEST(DynamicShape, PackedBatchMatmulScores) { CheckBatchMatmulPacked(true); }
TEST(DynamicShape, PackedBatchMatmulContext) { CheckBatchMatmulPacked(false); }

// MultiLevelTiling (and its "<block>.rule" knob) is not offered for a block with a symbolic loop.
TEST(DynamicShape, MultiLevelTilingIsNotOffered) {
  Var n("n", i32);
  te::Tensor a = te::placeholder({n, C(64)}, f32, "a");
  te::Tensor b = te::placeholder({C(64), C(32)}, f32, "b");
  te::Tensor c = Matmul(a, b, n, 64, 32);
  tir::Schedule sch(te::create_prim_func({a, b, c}, "mm"));
  EXPECT_FALSE(x86::MultiLevelTilingApplies(sch, "T_matmul"));
  te::Tensor sa = te::placeholder({C(16), C(64)}, f32, "a");
  te::Tensor sc = Matmul(sa, b, C(16), 64, 32);
  tir::Schedule ssch(te::create_prim_func({sa, b, sc}, "mm"));
  EXPECT_TRUE(x86::MultiLevelTilingApplies(ssch, "T_matmul"));
}

}  // namespace
}  // namespace tessera::topi
