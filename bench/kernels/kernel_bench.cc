// tessera_kernel_bench: GFLOP/s of one library's GEMM and conv2d kernels, driven by
// bench/run_kernels (one process per library and thread count, so thread pools of different
// libraries never spin against each other). OpenBLAS is linked into every run and starts its
// worker threads when it is loaded; they busy-wait (sched_yield) for ~0.1 s before sleeping and
// so take a core from the library under test (a 2-thread Tessera or oneDNN kernel timed in that
// window ran at 1-thread speed). Unless OpenBLAS is the library under test, the bench therefore
// runs with OPENBLAS_NUM_THREADS=1 (re-executing itself when the variable says otherwise).
//
//   tessera_kernel_bench --lib tessera|onednn|openblas --threads T [--repeats R] [--only NAME]
//                        [--conv C,H,W,K,R[,STRIDE[,GROUPS]] ...]   (extra conv shapes instead of the list)
//
// Prints one JSON object per line: {"name", "shape", "threads", "lib", "gflops", "ms"}.
// GEMM: C[M, N] = A[M, K] B[K, N], 2 M N K FLOPs. Tessera: nn.dense through the real pipeline
// (te compute -> default x86 schedule -> LowerToFlat -> codegen::BuildJIT) with the weight
// packed once before timing (what graph_lower::PackGemmWeights does at compile time).
// oneDNN: dnnl_sgemm; OpenBLAS: cblas_sgemm. conv2d (batch 1, fp32): Tessera runs the NCHWc
// kernel AlterOpLayout + graph lowering produce for it (TesseraConv); oneDNN runs its
// convolution primitive with the layouts it picks (format_tag::any; reorders outside the timed
// loop). FLOPs are nominal: 2 OH OW K C/g R S. Each sample times enough calls to last >= 2 ms
// (after a warm-up); the result is the median sample.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <cblas.h>
#include <dnnl.h>
#include <dnnl.hpp>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/driver/build.h"
#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/schedule.h"

namespace {

using namespace tessera;

struct Gemm {
  std::string name;
  int64_t m, n, k;
};
struct Conv {
  std::string name;
  int64_t c, h, w, k, r, groups;
  int64_t stride = 1;
  int64_t oh() const { return (h + 2 * (r / 2) - r) / stride + 1; }
  int64_t ow() const { return (w + 2 * (r / 2) - r) / stride + 1; }
};

const std::vector<Gemm> kGemms = {
    {"gemm_1024x1024x1024", 1024, 1024, 1024}, {"gemm_128x768x768", 128, 768, 768},
    {"gemm_128x3072x768", 128, 3072, 768},     {"gemm_196x256x2304", 196, 256, 2304},
    {"gemm_3136x64x576", 3136, 64, 576},       {"gemm_1x1000x2048", 1, 1000, 2048},
};
const std::vector<Conv> kConvs = {
    {"conv3x3_56x56x64", 64, 56, 56, 64, 3, 1},       {"conv3x3_28x28x128", 128, 28, 28, 128, 3, 1},
    {"conv3x3_14x14x256", 256, 14, 14, 256, 3, 1},    {"conv3x3_7x7x512", 512, 7, 7, 512, 3, 1},
    {"conv1x1_56x56x64to256", 64, 56, 56, 256, 1, 1}, {"dwconv3x3_112x112x32", 32, 112, 112, 32, 3, 32},
    {"dwconv3x3_14x14x576", 576, 14, 14, 576, 3, 576},
};

double ConvFlops(const Conv& c) { return 2.0 * c.oh() * c.ow() * c.k * (c.c / c.groups) * c.r * c.r; }
std::string ConvShape(const Conv& c) {
  return std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) + "->" + std::to_string(c.k) +
         " " + std::to_string(c.r) + "x" + std::to_string(c.r) + (c.stride > 1 ? " stride " + std::to_string(c.stride) : "") +
         (c.groups > 1 ? " depthwise" : "");
}

std::vector<float> RandomVec(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Median over `repeats` samples of the per-call time in ms.
double MedianMs(const std::function<void()>& fn, int repeats) {
  using clk = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) fn();
  auto t0 = clk::now();
  fn();
  double once = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
  int iters = std::max(1, static_cast<int>(2.0 / std::max(once, 1e-4)));
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    auto a = clk::now();
    for (int i = 0; i < iters; ++i) fn();
    samples.push_back(std::chrono::duration<double, std::milli>(clk::now() - a).count() / iters);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void Report(const std::string& name, const std::string& shape, int threads, const std::string& lib, double flops,
            double ms) {
  std::printf("{\"name\": \"%s\", \"shape\": \"%s\", \"threads\": %d, \"lib\": \"%s\", \"gflops\": %.3f, \"ms\": %.5f}\n",
              name.c_str(), shape.c_str(), threads, lib.c_str(), flops / (ms * 1e6), ms);
  std::fflush(stdout);
}

std::string GemmShape(const Gemm& g) {
  return std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k);
}

// ------------------------------------------------------------------ Tessera
runtime::Module Compile(const std::vector<te::Tensor>& args, const std::string& name) {
  tir::PrimFunc f = te::create_prim_func(args, name);
  f = topi::x86::DefaultSchedule(f, topi::x86::ScheduleOptionsFor(driver::HostTarget()));
  tir::IRModule mod;
  mod.Add(tir::transform::LowerToFlat(f));
  return codegen::BuildJIT(mod, driver::HostTarget());
}

runtime::NDArray Array(const std::vector<int64_t>& shape, uint32_t seed) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  auto v = RandomVec(a.NumElements(), seed);
  std::memcpy(a.raw_data(), v.data(), v.size() * sizeof(float));
  return a;
}

void TesseraGemm(const Gemm& g, int threads, int repeats) {
  const DataType f32 = DataType::Float(32);
  topi::GemmPackTile tile = topi::x86::ChooseGemmTile(g.m, g.n, g.k, driver::HostTarget());
  te::Tensor w = te::placeholder(topi::MakeShape({g.n, g.k}), f32, "w");
  te::Tensor wp = topi::pack_dense_weight(w, tile);
  runtime::Module pack = Compile({w, wp}, "pack");
  te::Tensor x = te::placeholder(topi::MakeShape({g.m, g.k}), f32, "x");
  te::Tensor wpp = te::placeholder(wp.shape(), f32, "wp");
  te::Tensor y = topi::dense_packed(x, wpp, g.n, tile);
  runtime::Module gemm = Compile({x, wpp, y}, "gemm");
  auto dw = Array({g.n, g.k}, 1), dx = Array({g.m, g.k}, 2);
  auto dwp = runtime::NDArray::Empty(topi::ConstShape(wp), f32), dy = runtime::NDArray::Empty({g.m, g.n}, f32);
  void* pargs[] = {dw.raw_data(), dwp.raw_data()};
  pack.GetKernel("pack")(pargs);
  void* gargs[] = {dx.raw_data(), dwp.raw_data(), dy.raw_data()};
  auto kernel = gemm.GetKernel("gemm");
  double ms = MedianMs([&] { kernel(gargs); }, repeats);
  Report(g.name, GemmShape(g) + " (mr " + std::to_string(tile.mr) + ", nv " + std::to_string(tile.nv) + ")",
         threads, "tessera", 2.0 * g.m * g.n * g.k, ms);
}

// The kernel a model runs for this conv: AlterOpLayout's nn.contrib_conv2d_NCHWc (data in
// NCHW<c>c with c the largest divisor of C <= 16, weights packed to [K/16, C/c, R, S, c, 16];
// depthwise NCHW16c with [C/16, 1, R, S, 1, 16]), lowered as graph_lower's compute does
// (topi::x86::Conv2dNCHWc / depthwise_conv2d_NCHWc, default x86 schedule). As with oneDNN's primitive
// (reorders untimed), the NCHW <-> NCHWc layout_transforms at a graph's boundary are not timed:
// inside a model consecutive convolutions stay in NCHWc.
void TesseraConv(const Conv& c, int threads, int repeats) {
  const DataType f32 = DataType::Float(32);
  const bool dw = c.groups > 1;
  const int64_t kb = 16;
  int64_t cb = dw ? kb : std::min<int64_t>(c.c, 16);
  while (c.c % cb != 0) --cb;
  topi::Conv2DParams p;
  const int64_t pad = c.r / 2;
  p.padding = {pad, pad, pad, pad};
  p.strides = {c.stride, c.stride};
  p.groups = c.groups;
  te::Tensor data = te::placeholder(topi::MakeShape({1, c.c / cb, c.h, c.w, cb}), f32, "data");
  te::Tensor kernel =
      dw ? te::placeholder(topi::MakeShape({c.c / kb, 1, c.r, c.r, 1, kb}), f32, "kernel")
         : te::placeholder(topi::MakeShape({(c.k + kb - 1) / kb, c.c / cb, c.r, c.r, cb, kb}), f32, "kernel");
  te::Tensor out = dw ? topi::depthwise_conv2d_NCHWc(data, kernel, p)
                      : topi::x86::Conv2dNCHWc(data, kernel, p, driver::HostTarget());
  runtime::Module m = Compile({data, kernel, out}, "conv");
  auto dd = Array(topi::ConstShape(data), 4), dk = Array(topi::ConstShape(kernel), 3);
  auto dy = runtime::NDArray::Empty(topi::ConstShape(out), f32);
  void* args[] = {dd.raw_data(), dk.raw_data(), dy.raw_data()};
  auto fn = m.GetKernel("conv");
  double ms = MedianMs([&] { fn(args); }, repeats);
  Report(c.name, ConvShape(c), threads, "tessera", ConvFlops(c), ms);
}

// ------------------------------------------------------------------ oneDNN
void OneDnnGemm(const Gemm& g, int threads, int repeats) {
  auto a = RandomVec(g.m * g.k, 1), b = RandomVec(g.k * g.n, 2);
  std::vector<float> c(g.m * g.n);
  double ms = MedianMs(
      [&] {
        dnnl_sgemm('N', 'N', g.m, g.n, g.k, 1.f, a.data(), g.k, b.data(), g.n, 0.f, c.data(), g.n);
      },
      repeats);
  Report(g.name, GemmShape(g), threads, "onednn", 2.0 * g.m * g.n * g.k, ms);
}

void OneDnnConv(const Conv& c, int threads, int repeats) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const int64_t pad = c.r / 2;
  memory::dims src_d = {1, c.c, c.h, c.w}, dst_d = {1, c.k, c.oh(), c.ow()};
  memory::dims w_d = c.groups > 1 ? memory::dims{c.groups, c.k / c.groups, c.c / c.groups, c.r, c.r}
                                  : memory::dims{c.k, c.c, c.r, c.r};
  auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  auto desc = convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, any(src_d),
                                        any(w_d), any(dst_d), {c.stride, c.stride}, {pad, pad}, {pad, pad});
  auto pd = convolution_forward::primitive_desc(desc, eng);
  auto src_user = memory({src_d, memory::data_type::f32, memory::format_tag::nchw}, eng);
  auto w_user = memory({w_d, memory::data_type::f32, c.groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw},
                       eng);
  auto fill = [](memory& m, uint32_t seed) {
    size_t n = m.get_desc().get_size() / sizeof(float);
    auto v = RandomVec(n, seed);
    std::memcpy(m.get_data_handle(), v.data(), n * sizeof(float));
  };
  fill(src_user, 1);
  fill(w_user, 2);
  memory src = src_user, wts = w_user;
  if (pd.src_desc() != src_user.get_desc()) {
    src = memory(pd.src_desc(), eng);
    reorder(src_user, src).execute(s, src_user, src);
  }
  if (pd.weights_desc() != w_user.get_desc()) {
    wts = memory(pd.weights_desc(), eng);
    reorder(w_user, wts).execute(s, w_user, wts);
  }
  memory dst(pd.dst_desc(), eng);
  convolution_forward prim(pd);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst}};
  s.wait();
  double ms = MedianMs(
      [&] {
        prim.execute(s, args);
        s.wait();
      },
      repeats);
  Report(c.name, ConvShape(c), threads, "onednn", ConvFlops(c), ms);
}

// ------------------------------------------------------------------ OpenBLAS
void OpenBlasGemm(const Gemm& g, int threads, int repeats) {
  auto a = RandomVec(g.m * g.k, 1), b = RandomVec(g.k * g.n, 2);
  std::vector<float> c(g.m * g.n);
  double ms = MedianMs(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, 1.f, a.data(), g.k, b.data(), g.n, 0.f,
                    c.data(), g.n);
      },
      repeats);
  Report(g.name, GemmShape(g), threads, "openblas", 2.0 * g.m * g.n * g.k, ms);
}

}  // namespace

// --dump M,N,K: the scheduled TIR and the assembly of Tessera's GEMM kernel, for inspection.
int DumpGemm(const std::string& spec) {
  Gemm g{"dump", 0, 0, 0};
  if (std::sscanf(spec.c_str(), "%ld,%ld,%ld", &g.m, &g.n, &g.k) != 3) return 2;
  const DataType f32 = DataType::Float(32);
  topi::GemmPackTile tile = topi::x86::ChooseGemmTile(g.m, g.n, g.k, driver::HostTarget());
  te::Tensor x = te::placeholder(topi::MakeShape({g.m, g.k}), f32, "x");
  te::Tensor wp = te::placeholder(topi::MakeShape({tile.PaddedN(g.n) / 16, g.k, 16}), f32, "wp");
  te::Tensor y = topi::dense_packed(x, wp, g.n, tile);
  tir::Schedule sch = topi::x86::ScheduleDefault(te::create_prim_func({x, wp, y}, "gemm"),
                                                 topi::x86::ScheduleOptionsFor(driver::HostTarget()));
  std::printf("%s\n", sch.trace().str().c_str());
  tir::PrimFunc flat = tir::transform::LowerToFlat(sch.func());
  std::printf("%s\n", tir::AsText(flat).c_str());
  tir::IRModule mod;
  mod.Add(flat);
  std::printf("%s\n", codegen::EmitAssembly(mod, driver::HostTarget()).c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--dump") return DumpGemm(argv[2]);
  std::string lib = "tessera", only;
  int threads = 1, repeats = 15;
  std::vector<Conv> extra_convs;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--lib") lib = argv[i + 1];
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--repeats") repeats = std::atoi(argv[i + 1]);
    else if (a == "--only") only = argv[i + 1];
    else if (a == "--conv") {
      // An extra conv shape: C,H,W,K,R[,STRIDE[,GROUPS]] (batch 1, pad R/2).
      Conv c{"conv_" + std::string(argv[i + 1]), 0, 0, 0, 0, 0, 1};
      if (std::sscanf(argv[i + 1], "%ld,%ld,%ld,%ld,%ld,%ld,%ld", &c.c, &c.h, &c.w, &c.k, &c.r, &c.stride,
                      &c.groups) < 5) {
        std::fprintf(stderr, "--conv wants C,H,W,K,R[,STRIDE[,GROUPS]], got %s\n", argv[i + 1]);
        return 2;
      }
      extra_convs.push_back(c);
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (lib != "openblas") {
    // OpenBLAS's threads (created at load time) must not spin against the library under test.
    const char* ob = std::getenv("OPENBLAS_NUM_THREADS");
    if (!ob || std::string(ob) != "1") {
      setenv("OPENBLAS_NUM_THREADS", "1", 1);
      execv("/proc/self/exe", argv);
      std::fprintf(stderr, "warning: could not re-execute with OPENBLAS_NUM_THREADS=1; OpenBLAS threads may "
                   "take a core from %s\n", lib.c_str());
    }
  }
  auto wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  try {
    if (lib == "tessera") runtime::SetNumThreads(threads);
    if (lib == "openblas") openblas_set_num_threads(threads);
    if (lib == "onednn") omp_set_num_threads(threads);
    for (const Gemm& g : kGemms) {
      if (!wanted(g.name)) continue;
      if (lib == "tessera") TesseraGemm(g, threads, repeats);
      if (lib == "onednn") OneDnnGemm(g, threads, repeats);
      if (lib == "openblas") OpenBlasGemm(g, threads, repeats);
    }
    std::vector<Conv> convs = extra_convs.empty() ? kConvs : extra_convs;
    for (const Conv& c : convs) {
      if (!wanted(c.name)) continue;
      try {
        if (lib == "tessera") TesseraConv(c, threads, repeats);
        if (lib == "onednn") OneDnnConv(c, threads, repeats);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s %s: %s\n", lib.c_str(), c.name.c_str(), e.what());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
