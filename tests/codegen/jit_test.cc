// Hand-built flat PrimFuncs, JIT-compiled and compared with C++ references.
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "tessera/runtime/kernel_abi.h"
#include "tessera/tir/stmt.h"
#include "test_util.h"

namespace tessera::codegen {
namespace {

using namespace tessera::ir;
using namespace tessera::tir;
using testing::AlignedArray;
using testing::Buf1D;
using testing::JIT;

const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);
const DataType i64 = DataType::Int(64);

PrimExpr Load(const Buffer& b, PrimExpr i) { return BufferLoadNode::make(b, {std::move(i)}); }
Stmt Store(const Buffer& b, PrimExpr v, PrimExpr i) { return BufferStoreNode::make(b, std::move(v), {std::move(i)}); }

// A launcher that records the task ids it ran; runs 8 tasks on 8 threads.
std::mutex g_mu;
std::set<int> g_task_ids;
std::atomic<int> g_launches{0};
int32_t RecordingLaunch(TesseraParallelTaskFn task, void* closure, int32_t num_tasks) {
  int n = num_tasks > 0 ? num_tasks : 8;
  g_launches++;
  std::vector<std::thread> threads;
  std::atomic<int32_t> rc{0};
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      int32_t r = task(t, n, closure);
      if (r != 0) rc = r;
      std::lock_guard<std::mutex> lock(g_mu);
      g_task_ids.insert(t);
    });
  }
  for (auto& th : threads) th.join();
  return rc;
}

PrimFunc ElementwiseAdd(int64_t n, ForKind kind) {
  Buffer a = Buf1D("A", f32, n), b = Buf1D("B", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  Stmt body = ForNode::make(i, 0, make_const(i32, n), kind, Store(c, Load(a, i) + Load(b, i), i));
  return PrimFunc::make("add", {a, b, c}, body);
}

TEST(CodegenJIT, ParallelElementwiseAddUsesManyTasks) {
  const int64_t n = 1003;
  runtime::Module m = JIT(ElementwiseAdd(n, ForKind::kParallel));
  AlignedArray<float> a(n), b(n), c(n);
  a.FillUniform(-1, 1, 1);
  b.FillUniform(-1, 1, 2);
  void* args[] = {a.data(), b.data(), c.data()};
  auto kernel = m.GetKernel("add");

  // The runtime pool (stored by the Module on construction).
  ASSERT_EQ(kernel(args), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;

  // Our recording launcher: every one of the 8 tasks runs, and each covers its share.
  auto** launch = static_cast<TesseraParallelLaunchFn*>(m.Lookup(runtime::kParallelLaunchSymbol));
  ASSERT_NE(launch, nullptr);
  TesseraParallelLaunchFn saved = *launch;
  *launch = &RecordingLaunch;
  std::memset(c.data(), 0, n * sizeof(float));
  g_task_ids.clear();
  ASSERT_EQ(kernel(args), 0);
  EXPECT_EQ(g_launches.load(), 1);
  EXPECT_EQ(g_task_ids.size(), 8u);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;

  // A null launcher: the task runs serially as (0, 1).
  *launch = nullptr;
  std::memset(c.data(), 0, n * sizeof(float));
  ASSERT_EQ(kernel(args), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  *launch = saved;
}

TEST(CodegenJIT, NestedParallelRunsInnerSerially) {
  const int rows = 37, cols = 19;
  Buffer a = Buf1D("A", f32, rows * cols), c = Buf1D("C", f32, rows * cols);
  Var i("i"), j("j");
  Stmt inner = ForNode::make(j, 0, make_const(i32, cols), ForKind::kParallel,
                             Store(c, Load(a, i * cols + j) * 2.0f + cast(f32, i), i * cols + j));
  Stmt body = ForNode::make(i, 0, make_const(i32, rows), ForKind::kParallel, inner);
  runtime::Module m = JIT(PrimFunc::make("nested", {a, c}, body));
  AlignedArray<float> av(rows * cols), cv(rows * cols);
  av.FillUniform(-2, 2, 3);
  void* args[] = {av.data(), cv.data()};
  ASSERT_EQ(m.GetKernel("nested")(args), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k)
      ASSERT_FLOAT_EQ(cv[r * cols + k], av[r * cols + k] * 2.0f + static_cast<float>(r));
}

TEST(CodegenJIT, VectorAddWithRampAndBroadcast) {
  const int64_t n = 256;
  Buffer a = Buf1D("A", f32, n), b = Buf1D("B", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  PrimExpr idx = RampNode::make(i * 16, 1, 16);
  PrimExpr v = Load(a, idx) + Load(b, idx) * BroadcastNode::make(PrimExpr(0.5f), 16);
  Stmt body = ForNode::make(i, 0, make_const(i32, n / 16), ForKind::kSerial, Store(c, v, idx));
  runtime::Module m = JIT(PrimFunc::make("vadd", {a, b, c}, body));
  AlignedArray<float> av(n), bv(n), cv(n);
  av.FillUniform(-1, 1, 4);
  bv.FillUniform(-1, 1, 5);
  void* args[] = {av.data(), bv.data(), cv.data()};
  ASSERT_EQ(m.GetKernel("vadd")(args), 0);
  for (int64_t k = 0; k < n; ++k) ASSERT_FLOAT_EQ(cv[k], av[k] + bv[k] * 0.5f) << k;
}

TEST(CodegenJIT, StridedRampGathersAndScatters) {
  const int64_t n = 64;  // C[2k] = A[k] * 3 (scatter), D[k] = A[2k mod n] (gather)
  Buffer a = Buf1D("A", f32, n), c = Buf1D("C", f32, 2 * n), d = Buf1D("D", f32, n / 2);
  Var i("i");
  Stmt s1 = Store(c, Load(a, RampNode::make(i * 8, 1, 8)) * 3.0f, RampNode::make(i * 16, 2, 8));
  Stmt s2 = ForNode::make(i, 0, make_const(i32, n / 16), ForKind::kSerial,
                          Store(d, Load(a, RampNode::make(i * 16, 2, 8)), RampNode::make(i * 8, 1, 8)));
  Stmt body = SeqStmtNode::make({ForNode::make(i, 0, make_const(i32, n / 8), ForKind::kSerial, s1), s2});
  runtime::Module m = JIT(PrimFunc::make("strided", {a, c, d}, body));
  AlignedArray<float> av(n), cv(2 * n), dv(n / 2);
  av.FillUniform(-1, 1, 6);
  void* args[] = {av.data(), cv.data(), dv.data()};
  ASSERT_EQ(m.GetKernel("strided")(args), 0);
  for (int64_t k = 0; k < n; ++k) ASSERT_FLOAT_EQ(cv[2 * k], av[k] * 3.0f);
  for (int64_t k = 0; k < n / 2; ++k) ASSERT_FLOAT_EQ(dv[k], av[2 * k]);
}

TEST(CodegenJIT, MatmulWithLocalAccumulator) {
  const int M = 33, N = 47, K = 65;
  Buffer a = Buf1D("A", f32, M * K), b = Buf1D("B", f32, K * N), c = Buf1D("C", f32, M * N);
  Buffer acc = tir::Buffer::make("acc", f32, {PrimExpr(1)}, "local");
  Var i("i"), j("j"), k("k");
  Stmt red = ForNode::make(k, 0, make_const(i32, K), ForKind::kSerial,
                           Store(acc, Load(acc, 0) + Load(a, i * K + k) * Load(b, k * N + j), 0));
  Stmt jbody = AllocateNode::make(acc, SeqStmtNode::make({Store(acc, PrimExpr(0.0f), 0), red,
                                                          Store(c, Load(acc, 0), i * N + j)}));
  Stmt body = ForNode::make(i, 0, make_const(i32, M), ForKind::kParallel,
                            ForNode::make(j, 0, make_const(i32, N), ForKind::kSerial, jbody));
  runtime::Module m = JIT(PrimFunc::make("matmul", {a, b, c}, body));
  AlignedArray<float> av(M * K), bv(K * N), cv(M * N);
  av.FillUniform(-1, 1, 7);
  bv.FillUniform(-1, 1, 8);
  void* args[] = {av.data(), bv.data(), cv.data()};
  ASSERT_EQ(m.GetKernel("matmul")(args), 0);
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t q = 0; q < N; ++q) {
      double ref = 0;
      for (int64_t p = 0; p < K; ++p) ref += static_cast<double>(av[r * K + p]) * bv[p * N + q];
      ASSERT_NEAR(cv[r * N + q], ref, 1e-4 * (1 + std::fabs(ref))) << r << "," << q;
    }
  }
}

TEST(CodegenJIT, GlobalScopeAllocateUsesHeap) {
  const int n = 100000;  // a 400 KB temporary: heap allocated and freed
  Buffer a = Buf1D("A", f32, n), c = Buf1D("C", f32, n);
  Buffer tmp = tir::Buffer::make("tmp", f32, {make_const(i32, n)}, "global");
  Var i("i"), j("j");
  Stmt body = AllocateNode::make(
      tmp, SeqStmtNode::make({ForNode::make(i, 0, make_const(i32, n), ForKind::kSerial, Store(tmp, Load(a, i) + 1.0f, i)),
                              ForNode::make(j, 0, make_const(i32, n), ForKind::kSerial,
                                            Store(c, Load(tmp, PrimExpr(n - 1) - j), j))}));
  runtime::Module m = JIT(PrimFunc::make("heap", {a, c}, body));
  AlignedArray<float> av(n), cv(n);
  av.FillUniform(-1, 1, 9);
  void* args[] = {av.data(), cv.data()};
  ASSERT_EQ(m.GetKernel("heap")(args), 0);
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(cv[k], av[n - 1 - k] + 1.0f);
}

// out[k] = data[checked_index(idx[k], n)] over a loop of `kind`; with a heap Allocate around it
// when `with_heap` (an early return must free it: LeakSanitizer checks under --sanitize).
PrimFunc CheckedGather(int64_t n, int64_t m, ForKind kind, bool with_heap) {
  Buffer data = Buf1D("data", f32, n), idx = Buf1D("idx", i64, m), out = Buf1D("out", f32, m);
  Var k("k");
  Stmt loop = ForNode::make(k, 0, make_const(i32, m), kind,
                            Store(out, Load(data, cast(i32, checked_index(Load(idx, k), n))), k));
  if (with_heap) {
    Buffer tmp = tir::Buffer::make("tmp", f32, {make_const(i32, 100000)}, "global");
    loop = AllocateNode::make(tmp, SeqStmtNode::make({Store(tmp, PrimExpr(1.0f), 0), loop}));
  }
  return PrimFunc::make("checked_gather", {data, idx, out}, loop);
}

TEST(CodegenJIT, CheckedIndexNormalizesInRangeAndFailsOutOfRange) {
  const int64_t n = 10, m = 37;
  for (ForKind kind : {ForKind::kSerial, ForKind::kParallel}) {
    for (bool with_heap : {false, true}) {
      runtime::Module mod = JIT(CheckedGather(n, m, kind, with_heap));
      AlignedArray<float> data(n), out(m);
      AlignedArray<int64_t> idx(m);
      data.FillUniform(-1, 1, 11);
      idx.FillUniform(-n, n - 1, 12);
      void* args[] = {data.data(), idx.data(), out.data()};
      ASSERT_EQ(mod.GetKernel("checked_gather")(args), runtime::kKernelOk);
      for (int64_t q = 0; q < m; ++q) ASSERT_EQ(out[q], data[idx[q] < 0 ? idx[q] + n : idx[q]]) << q;
      for (int64_t bad : {n, -n - 1, int64_t{1} << 40, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max()}) {
        idx[m / 2] = bad;
        EXPECT_EQ(mod.GetKernel("checked_gather")(args), runtime::kKernelIndexOutOfRange)
            << bad << " kind " << ForKindName(kind) << " heap " << with_heap;
      }
    }
  }
}

TEST(CodegenJIT, CheckedIndexInVectorLanes) {
  const int64_t n = 5, lanes = 8;
  Buffer data = Buf1D("data", f32, n), idx = Buf1D("idx", i32, lanes), out = Buf1D("out", f32, lanes);
  PrimExpr ramp = RampNode::make(0, 1, lanes);
  Stmt body = Store(out, Load(data, cast(DataType::Int(32, lanes), checked_index(Load(idx, ramp), n))), ramp);
  runtime::Module mod = JIT(PrimFunc::make("vgather", {data, idx, out}, body));
  AlignedArray<float> dv(n), ov(lanes);
  AlignedArray<int32_t> iv(lanes);
  dv.FillUniform(-1, 1, 13);
  const int32_t good[lanes] = {0, 4, -1, -5, 2, 3, 1, -2};
  for (int q = 0; q < lanes; ++q) iv[q] = good[q];
  void* args[] = {dv.data(), iv.data(), ov.data()};
  ASSERT_EQ(mod.GetKernel("vgather")(args), runtime::kKernelOk);
  for (int q = 0; q < lanes; ++q) ASSERT_EQ(ov[q], dv[good[q] < 0 ? good[q] + n : good[q]]) << q;
  for (int lane : {0, 7}) {
    iv[lane] = lane == 0 ? 5 : -6;
    EXPECT_EQ(mod.GetKernel("vgather")(args), runtime::kKernelIndexOutOfRange) << lane;
    iv[lane] = good[lane];
  }
}

// A select whose condition is one index condition for every lane evaluates only the taken
// operand (codegen_expr.cc). out = k < n ? data[checked_index(k, n)] : data2[k - n], a two-input
// concatenate: for k >= n the untaken operand's index is out of range, and evaluating it would
// make the kernel return kKernelIndexOutOfRange. Scalar and broadcast (vector) conditions.
TEST(CodegenJIT, IndexConditionSelectEvaluatesOnlyTheTakenOperand) {
  const int64_t n = 16, lanes = 8;
  for (bool vector : {false, true}) {
    Buffer data = Buf1D("data", f32, n), data2 = Buf1D("data2", f32, n), out = Buf1D("out", f32, 2 * n);
    Var k("k");
    const int64_t step = vector ? lanes : 1;
    PrimExpr base = k * static_cast<int32_t>(step);
    auto at = [&](PrimExpr i) { return vector ? PrimExpr(RampNode::make(i, 1, lanes)) : i; };
    auto lane_cond = [&](PrimExpr c) { return vector ? PrimExpr(BroadcastNode::make(c, lanes)) : c; };
    DataType it = vector ? DataType::Int(32, lanes) : i32;
    PrimExpr lo = Load(data, cast(it, checked_index(at(base), n)));
    PrimExpr hi = Load(data2, cast(it, checked_index(at(base - static_cast<int32_t>(n)), n)));
    Stmt body = ForNode::make(k, 0, make_const(i32, 2 * n / step), ForKind::kSerial,
                              Store(out, select(lane_cond(base < static_cast<int32_t>(n)), lo, hi), at(base)));
    runtime::Module mod = JIT(PrimFunc::make("concat2", {data, data2, out}, body));
    AlignedArray<float> dv(n), d2v(n), ov(2 * n);
    dv.FillUniform(-1, 1, 21);
    d2v.FillUniform(-1, 1, 22);
    void* args[] = {dv.data(), d2v.data(), ov.data()};
    ASSERT_EQ(mod.GetKernel("concat2")(args), runtime::kKernelOk) << "vector " << vector;
    for (int64_t q = 0; q < 2 * n; ++q) ASSERT_EQ(ov[q], q < n ? dv[q] : d2v[q - n]) << q << " vector " << vector;
  }
}

int64_t RefFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t RefFloorMod(int64_t a, int64_t b) { return a - RefFloorDiv(a, b) * b; }

TEST(CodegenJIT, Int64FloorDivModOnNegatives) {
  const int64_t n = 500;
  Buffer a = Buf1D("A", i64, n), b = Buf1D("B", i64, n);
  Buffer q = Buf1D("Q", i64, n), r = Buf1D("R", i64, n), q4 = Buf1D("Q4", i64, n), r3 = Buf1D("R3", i64, n);
  Var i("i", i64);
  Stmt body = ForNode::make(
      i, make_const(i64, 0), make_const(i64, n), ForKind::kSerial,
      SeqStmtNode::make({Store(q, floordiv(Load(a, i), Load(b, i)), i),
                         Store(r, floormod(Load(a, i), Load(b, i)), i),
                         Store(q4, floordiv(Load(a, i), make_const(i64, 4)), i),
                         Store(r3, floormod(Load(a, i), make_const(i64, -3)), i)}));
  runtime::Module m = JIT(PrimFunc::make("fdiv", {a, b, q, r, q4, r3}, body));
  AlignedArray<int64_t> av(n), bv(n), qv(n), rv(n), q4v(n), r3v(n);
  av.FillUniform(-1000, 1000, 10);
  bv.FillUniform(-9, 9, 11);
  for (int64_t k = 0; k < n; ++k) if (bv[k] == 0) bv[k] = -7;
  av[0] = -7; bv[0] = 2;  // -4, 1
  av[1] = 7; bv[1] = -2;  // -4, -1
  av[2] = -8; bv[2] = 2;  // exact
  void* args[] = {av.data(), bv.data(), qv.data(), rv.data(), q4v.data(), r3v.data()};
  ASSERT_EQ(m.GetKernel("fdiv")(args), 0);
  EXPECT_EQ(qv[0], -4);
  EXPECT_EQ(rv[0], 1);
  EXPECT_EQ(qv[1], -4);
  EXPECT_EQ(rv[1], -1);
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_EQ(qv[k], RefFloorDiv(av[k], bv[k])) << av[k] << " " << bv[k];
    ASSERT_EQ(rv[k], RefFloorMod(av[k], bv[k])) << av[k] << " " << bv[k];
    ASSERT_EQ(q4v[k], RefFloorDiv(av[k], 4)) << av[k];
    ASSERT_EQ(r3v[k], RefFloorMod(av[k], -3)) << av[k];
  }
}

TEST(CodegenJIT, SelectMinMax) {
  const int64_t n = 300;
  Buffer a = Buf1D("A", f32, n), b = Buf1D("B", f32, n), c = Buf1D("C", f32, n);
  Buffer x = Buf1D("X", i32, n), y = Buf1D("Y", i32, n);
  Var i("i");
  PrimExpr av = Load(a, i), bv = Load(b, i);
  Stmt body = ForNode::make(
      i, 0, make_const(i32, n), ForKind::kSerial,
      SeqStmtNode::make({Store(c, select(av > bv, max(av, bv) - 1.0f, min(av, bv) * 2.0f), i),
                         Store(y, max(min(Load(x, i), 5), -5) + select(Load(x, i) == 3, 100, 0), i)}));
  runtime::Module m = JIT(PrimFunc::make("sel", {a, b, x, c, y}, body));
  AlignedArray<float> ad(n), bd(n), cd(n);
  AlignedArray<int32_t> xd(n), yd(n);
  ad.FillUniform(-3, 3, 12);
  bd.FillUniform(-3, 3, 13);
  xd.FillUniform(-10, 10, 14);
  void* args[] = {ad.data(), bd.data(), xd.data(), cd.data(), yd.data()};
  ASSERT_EQ(m.GetKernel("sel")(args), 0);
  for (int64_t k = 0; k < n; ++k) {
    float ref = ad[k] > bd[k] ? std::max(ad[k], bd[k]) - 1.0f : std::min(ad[k], bd[k]) * 2.0f;
    ASSERT_EQ(cd[k], ref);
    ASSERT_EQ(yd[k], std::clamp(xd[k], -5, 5) + (xd[k] == 3 ? 100 : 0));
  }
}

TEST(CodegenJIT, VectorSelectAndCompare) {
  const int64_t n = 128;  // relu on float32x8 lanes: C = select(A > 0, A, 0)
  Buffer a = Buf1D("A", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  PrimExpr idx = RampNode::make(i * 8, 1, 8);
  PrimExpr v = Load(a, idx);
  PrimExpr zero = BroadcastNode::make(PrimExpr(0.0f), 8);
  Stmt body = ForNode::make(i, 0, make_const(i32, n / 8), ForKind::kSerial, Store(c, select(v > zero, v, zero), idx));
  runtime::Module m = JIT(PrimFunc::make("relu8", {a, c}, body));
  AlignedArray<float> ad(n), cd(n);
  ad.FillUniform(-1, 1, 15);
  void* args[] = {ad.data(), cd.data()};
  ASSERT_EQ(m.GetKernel("relu8")(args), 0);
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(cd[k], ad[k] > 0 ? ad[k] : 0.0f);
}

void ExpectClose(float got, double ref, const char* what, float x) {
  double tol = 1e-5 * std::fabs(ref) + 1e-7;
  ASSERT_NEAR(got, ref, tol) << what << "(" << x << ")";
}

TEST(CodegenJIT, TranscendentalsMatchStd) {
  const int64_t n = 512;
  const char* names[] = {"exp", "sigmoid", "tanh", "erf", "log", "sqrt", "floor", "round"};
  const int nf = 8;
  Buffer a = Buf1D("A", f32, n);
  std::vector<Buffer> outs, vouts;
  for (int f = 0; f < nf; ++f) outs.push_back(Buf1D(std::string("S") + names[f], f32, n));
  for (int f = 0; f < nf; ++f) vouts.push_back(Buf1D(std::string("V") + names[f], f32, n));
  auto apply = [&](int f, PrimExpr x) -> PrimExpr {
    switch (f) {
      case 0: return exp(x);
      case 1: return sigmoid(x);
      case 2: return tanh(x);
      case 3: return erf(x);
      case 4: return log(fabs(x) + 1.0f);
      case 5: return sqrt(fabs(x));
      case 6: return floor(x);
      default: return round(x * 2.0f);
    }
  };
  Var i("i"), j("j");
  std::vector<Stmt> scalar, vector;
  PrimExpr vidx = RampNode::make(j * 16, 1, 16);
  for (int f = 0; f < nf; ++f) {
    scalar.push_back(Store(outs[f], apply(f, Load(a, i)), i));
    vector.push_back(Store(vouts[f], apply(f, Load(a, vidx)), vidx));
  }
  Stmt body = SeqStmtNode::make(
      {ForNode::make(i, 0, make_const(i32, n), ForKind::kSerial, SeqStmtNode::make(scalar)),
       ForNode::make(j, 0, make_const(i32, n / 16), ForKind::kSerial, SeqStmtNode::make(vector))});
  std::vector<Buffer> params = {a};
  params.insert(params.end(), outs.begin(), outs.end());
  params.insert(params.end(), vouts.begin(), vouts.end());
  runtime::Module m = JIT(PrimFunc::make("transc", params, body));
  AlignedArray<float> ad(n);
  ad.FillUniform(-8, 8, 16);
  ad[0] = 0.0f;
  ad[1] = 1e-4f;
  ad[2] = -1e-4f;
  ad[3] = 1.25f;  // round(2.5) = 2 (half to even)
  std::vector<std::unique_ptr<AlignedArray<float>>> od;
  std::vector<void*> args = {ad.data()};
  for (int f = 0; f < 2 * nf; ++f) {
    od.push_back(std::make_unique<AlignedArray<float>>(n));
    args.push_back(od.back()->data());
  }
  ASSERT_EQ(m.GetKernel("transc")(args.data()), 0);
  for (int64_t k = 0; k < n; ++k) {
    double x = ad[k];
    double refs[] = {std::exp(x), 1.0 / (1.0 + std::exp(-x)), std::tanh(x), std::erf(x),
                     std::log(std::fabs(x) + 1.0), std::sqrt(std::fabs(x)), std::floor(x),
                     std::nearbyint(x * 2.0)};
    for (int f = 0; f < nf; ++f) {
      ExpectClose((*od[f])[k], refs[f], names[f], ad[k]);
      ExpectClose((*od[nf + f])[k], refs[f], names[f], ad[k]);
    }
  }
}

TEST(CodegenJIT, InlineErfAndTanhAtSeriesBoundariesAndSpecials) {
  // codegen_math.cc switches formulas at |x| = 0.5 (erf) and 0.125 (tanh): check both sides,
  // tiny and huge inputs, signed zero, infinities and NaN, scalar and 8-lane.
  const int n = 64;
  Buffer a = Buf1D("A", f32, n), se = Buf1D("SE", f32, n), st = Buf1D("ST", f32, n), ve = Buf1D("VE", f32, n),
         vt = Buf1D("VT", f32, n);
  Var i("i"), j("j");
  PrimExpr vidx = RampNode::make(j * 8, 1, 8);
  Stmt body = SeqStmtNode::make(
      {ForNode::make(i, 0, n, ForKind::kSerial,
                     SeqStmtNode::make({Store(se, erf(Load(a, i)), i), Store(st, tanh(Load(a, i)), i)})),
       ForNode::make(j, 0, n / 8, ForKind::kSerial,
                     SeqStmtNode::make({Store(ve, erf(Load(a, vidx)), vidx), Store(vt, tanh(Load(a, vidx)), vidx)}))});
  runtime::Module m = JIT(PrimFunc::make("erftanh", {a, se, st, ve, vt}, body));
  AlignedArray<float> ad(n), sed(n), std_(n), ved(n), vtd(n);
  ad.FillUniform(-3, 3, 5);
  const float specials[] = {0.0f, -0.0f, 0.4999999f, 0.5f, 0.5000001f, -0.5f, 0.1249999f, 0.125f, -0.125f,
                            1e-30f, -1e-20f, 1e-6f, 3.9f, 4.5f, 9.5f, 20.0f, -20.0f, 1e30f, INFINITY, -INFINITY, NAN};
  for (size_t k = 0; k < sizeof(specials) / sizeof(float); ++k) ad[k] = specials[k];
  void* args[] = {ad.data(), sed.data(), std_.data(), ved.data(), vtd.data()};
  ASSERT_EQ(m.GetKernel("erftanh")(args), 0);
  for (int k = 0; k < n; ++k) {
    const float x = ad[k];
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(sed[k]) && std::isnan(std_[k]) && std::isnan(ved[k]) && std::isnan(vtd[k]));
      continue;
    }
    for (float got : {sed[k], ved[k]}) {
      ExpectClose(got, std::erf(static_cast<double>(x)), "erf", x);
      EXPECT_EQ(std::signbit(got), std::signbit(x)) << "erf(" << x << ")";
    }
    for (float got : {std_[k], vtd[k]}) {
      ExpectClose(got, std::tanh(static_cast<double>(x)), "tanh", x);
      EXPECT_EQ(std::signbit(got), std::signbit(x)) << "tanh(" << x << ")";
    }
  }
}

TEST(CodegenJIT, ExpOverTheWholeFloatRange) {
  const int n = 4096;  // inline float32 exp: scalar and float32x16, normal / denormal / inf / NaN
  Buffer a = Buf1D("A", f32, n), s = Buf1D("S", f32, n), v = Buf1D("V", f32, n), g = Buf1D("G", f32, n);
  Var i("i"), j("j");
  PrimExpr vidx = RampNode::make(j * 16, 1, 16);
  Stmt body = SeqStmtNode::make(
      {ForNode::make(i, 0, n, ForKind::kSerial,
                     SeqStmtNode::make({Store(s, exp(Load(a, i)), i), Store(g, sigmoid(Load(a, i)), i)})),
       ForNode::make(j, 0, n / 16, ForKind::kSerial, Store(v, exp(Load(a, vidx)), vidx))});
  runtime::Module m = JIT(PrimFunc::make("expr", {a, s, v, g}, body));
  AlignedArray<float> ad(n), sd(n), vd(n), gd(n);
  ad.FillUniform(-110, 95, 21);
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.72f, 88.73f, -87.3f, -103.9f, -104.5f, 1e-8f,
                            INFINITY, -INFINITY, NAN, 0.5f * 0.6931472f, -0.5f * 0.6931472f};
  for (size_t k = 0; k < sizeof(specials) / sizeof(float); ++k) ad[k] = specials[k];
  void* args[] = {ad.data(), sd.data(), vd.data(), gd.data()};
  ASSERT_EQ(m.GetKernel("expr")(args), 0);
  for (int k = 0; k < n; ++k) {
    double x = ad[k];
    double ref = std::exp(x), sref = 1.0 / (1.0 + std::exp(-x));
    for (float got : {sd[k], vd[k]}) {
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(got));
      } else if (ref > 3.4028234663852886e38) {
        ASSERT_TRUE(std::isinf(got)) << x;
      } else {
        ASSERT_NEAR(got, ref, 3e-7 * ref + 1.5e-45) << x;
      }
    }
    // sigmoid(x) for x < -88.7 underflows to 0 in float32 (exp(-x) overflows), as with libm.
    if (!std::isnan(x)) {
      ASSERT_NEAR(gd[k], sref, 1e-6 * sref + 1e-37) << x;
    }
  }
}

TEST(CodegenJIT, IfThenElse) {
  const int64_t n = 101;
  Buffer a = Buf1D("A", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  Stmt body = ForNode::make(i, 0, make_const(i32, n), ForKind::kSerial,
                            IfThenElseNode::make(floormod(i, 3) == 0, Store(c, Load(a, i), i),
                                                 Store(c, PrimExpr(0.0f) - Load(a, i), i)));
  Var j("j");
  Stmt only_then = ForNode::make(j, 0, make_const(i32, n), ForKind::kSerial,
                                 IfThenElseNode::make(j > 90, Store(c, PrimExpr(7.0f), j)));
  runtime::Module m = JIT(PrimFunc::make("ite", {a, c}, SeqStmtNode::make({body, only_then})));
  AlignedArray<float> ad(n), cd(n);
  ad.FillUniform(-1, 1, 17);
  void* args[] = {ad.data(), cd.data()};
  ASSERT_EQ(m.GetKernel("ite")(args), 0);
  for (int64_t k = 0; k < n; ++k) {
    float ref = k > 90 ? 7.0f : (k % 3 == 0 ? ad[k] : -ad[k]);
    ASSERT_EQ(cd[k], ref) << k;
  }
}

TEST(CodegenJIT, LetStmtAndLetExpr) {
  const int64_t n = 77;
  Buffer a = Buf1D("A", f32, n), c = Buf1D("C", f32, n), d = Buf1D("D", f32, n);
  Var i("i"), t("t", f32), u("u", f32);
  Stmt body = ForNode::make(
      i, 0, make_const(i32, n), ForKind::kParallel,
      LetStmtNode::make(t, Load(a, i) * 2.0f,
                        SeqStmtNode::make({Store(c, t + t * t, i),
                                           Store(d, LetNode::make(u, t - 1.0f, u * u), i)})));
  runtime::Module m = JIT(PrimFunc::make("let", {a, c, d}, body));
  AlignedArray<float> ad(n), cd(n), dd(n);
  ad.FillUniform(-1, 1, 18);
  void* args[] = {ad.data(), cd.data(), dd.data()};
  ASSERT_EQ(m.GetKernel("let")(args), 0);
  for (int64_t k = 0; k < n; ++k) {
    float tv = ad[k] * 2.0f;
    ASSERT_NEAR(cd[k], tv + tv * tv, 1e-6f);
    ASSERT_NEAR(dd[k], (tv - 1.0f) * (tv - 1.0f), 1e-6f);
  }
}

TEST(CodegenJIT, CastsAndBoolBuffers) {
  const int64_t n = 64;
  Buffer a = Buf1D("A", f32, n), m8 = Buf1D("M", DataType::Bool(), n), c = Buf1D("C", i32, n);
  Var i("i");
  Stmt body = ForNode::make(i, 0, make_const(i32, n), ForKind::kSerial,
                            SeqStmtNode::make({Store(m8, Load(a, i) > 0.0f, i),
                                               Store(c, cast(i32, Load(a, i) * 10.0f) +
                                                            cast(i32, Load(m8, i)), i)}));
  runtime::Module m = JIT(PrimFunc::make("casts", {a, m8, c}, body));
  AlignedArray<float> ad(n);
  AlignedArray<uint8_t> md(n);
  AlignedArray<int32_t> cd(n);
  ad.FillUniform(-5, 5, 19);
  void* args[] = {ad.data(), md.data(), cd.data()};
  ASSERT_EQ(m.GetKernel("casts")(args), 0);
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_EQ(md[k], ad[k] > 0 ? 1 : 0);
    ASSERT_EQ(cd[k], static_cast<int32_t>(ad[k] * 10.0f) + (ad[k] > 0 ? 1 : 0));
  }
}

TEST(CodegenJIT, ModuleSymbolsAndExtras) {
  ModuleExtras extras;
  extras.graph_json = "{\"nodes\": []}";
  extras.params_blob = std::string("ab\0cd", 5);
  runtime::Module m = BuildJIT(testing::ModuleOf(ElementwiseAdd(16, ForKind::kSerial)), driver::HostTarget(), extras);
  EXPECT_TRUE(m.HasSymbol("add"));
  EXPECT_FALSE(m.HasSymbol("no_such_kernel"));
  EXPECT_THROW(m.GetKernel("no_such_kernel"), UserError);
  EXPECT_EQ(m.GraphJson(), extras.graph_json);
  EXPECT_EQ(m.ParamsBlob(), extras.params_blob);
}

TEST(CodegenJIT, ConcurrentBuildsAndTwoKernelsPerModule) {
  // Tuning builds candidates from several threads; each build has its own context.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      const int64_t n = 64 + t;
      tir::IRModule mod;
      mod.Add(ElementwiseAdd(n, ForKind::kParallel));
      PrimFunc f2 = ElementwiseAdd(n, ForKind::kVectorized);
      mod.Add(PrimFunc::make("add_vec", f2->params, f2->body));
      runtime::Module m = BuildJIT(mod, driver::HostTarget());
      AlignedArray<float> a(n), b(n), c(n), d(n);
      a.FillUniform(-1, 1, 20 + t);
      b.FillUniform(-1, 1, 30 + t);
      void* args1[] = {a.data(), b.data(), c.data()};
      void* args2[] = {a.data(), b.data(), d.data()};
      if (m.GetKernel("add")(args1) != 0 || m.GetKernel("add_vec")(args2) != 0) return;
      for (int64_t i = 0; i < n; ++i) if (c[i] != a[i] + b[i] || d[i] != c[i]) return;
      ok++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 3);
}

// Dynamic shapes (runtime/kernel_abi.h): a kernel with shape_vars reads their values from one
// extra slot, args[num_buffer_params], a const int64_t* in shape_vars order; a parallel loop
// captures them like any other variable; heap temporaries of symbolic size work.
TEST(CodegenJIT, ShapeVarsComeFromTheExtraSlot) {
  Var rows("rows", i32), cols("cols", i32);
  Buffer a = tir::Buffer::make("A", f32, {rows, cols}), c = tir::Buffer::make("C", f32, {rows, cols});
  Buffer tmp = tir::Buffer::make("tmp", f32, {cols}, "global");
  Var i("i"), j("j"), j2("j2");
  // C[i, j] = A[i, cols - 1 - j] * rows + cols, through a per-row temporary of `cols` floats.
  Stmt row = AllocateNode::make(
      tmp, SeqStmtNode::make({ForNode::make(j, 0, cols, ForKind::kSerial, Store(tmp, Load(a, i * cols + j), j)),
                              ForNode::make(j2, 0, cols, ForKind::kSerial,
                                            Store(c,
                                                  Load(tmp, cols - 1 - j2) * ir::cast(f32, rows) + ir::cast(f32, cols),
                                                  i * cols + j2))}));
  PrimFunc f = PrimFunc::make("dyn", {a, c}, ForNode::make(i, 0, rows, ForKind::kParallel, row), {}, {rows, cols});
  runtime::Module m = JIT(f);
  for (auto [r, q] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {64, 129}, {129, 7}}) {
    AlignedArray<float> av(r * q), cv(r * q);
    av.FillUniform(-1, 1, 3);
    int64_t shapes[] = {r, q};
    void* args[] = {av.data(), cv.data(), shapes};
    ASSERT_EQ(m.GetKernel("dyn")(args), 0);
    for (int64_t x = 0; x < r; ++x)
      for (int64_t y = 0; y < q; ++y)
        ASSERT_NEAR(cv[x * q + y], av[x * q + q - 1 - y] * static_cast<float>(r) + static_cast<float>(q), 1e-4 * r)
            << r << "x" << q;
  }
}

}  // namespace
}  // namespace tessera::codegen
