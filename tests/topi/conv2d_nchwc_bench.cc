// Local timing of the NCHWc conv kernels on the issue-3 shapes (not a test; the kernel
// benchmark harness bench/run_kernels reports them against oneDNN).
//   topi_conv2d_nchwc_bench [threads] [--asm NAME]
// GFLOP/s counted nominally: 2 * OH * OW * K * C/g * R * S (padding included), median of 31.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/x86/schedule.h"

using namespace tessera;
using topi::Conv2DParams;

struct Shape {
  const char* name;
  int64_t c, h, w, k, r;
  bool depthwise;
};

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  std::string asm_name = argc > 3 && std::string(argv[2]) == "--asm" ? argv[3] : "";
  runtime::SetNumThreads(threads);
  const DataType f32 = DataType::Float(32);
  std::vector<Shape> shapes = {{"conv3x3_56x56x64", 64, 56, 56, 64, 3, false},
                               {"conv3x3_28x28x128", 128, 28, 28, 128, 3, false},
                               {"conv3x3_14x14x256", 256, 14, 14, 256, 3, false},
                               {"conv3x3_7x7x512", 512, 7, 7, 512, 3, false},
                               {"conv1x1_56x56x64to256", 64, 56, 56, 256, 1, false},
                               {"dw3x3_112x112x32", 32, 112, 112, 32, 3, true},
                               {"dw3x3_14x14x576", 576, 14, 14, 576, 3, true}};
  for (const Shape& s : shapes) {
    if (!asm_name.empty() && asm_name != s.name) continue;
    Conv2DParams p;
    p.padding = {s.r / 2, s.r / 2, s.r / 2, s.r / 2};
    const int64_t b = 16;
    te::Tensor data = te::placeholder(topi::MakeShape({1, s.c / b, s.h, s.w, b}), f32, "data");
    te::Tensor kernel = s.depthwise ? te::placeholder(topi::MakeShape({s.c / b, 1, s.r, s.r, 1, b}), f32, "kernel")
                                    : te::placeholder(topi::MakeShape({s.k / b, s.c / b, s.r, s.r, b, b}), f32, "kernel");
    te::Tensor out = s.depthwise ? topi::depthwise_conv2d_NCHWc(data, kernel, p) : topi::conv2d_NCHWc(data, kernel, p);
    tir::PrimFunc f = topi::x86::DefaultSchedule(te::create_prim_func({data, kernel, out}, "conv"),
                                                 topi::x86::ScheduleOptionsFor(driver::HostTarget()));
    tir::IRModule mod;
    mod.Add(tir::transform::LowerToFlat(f));
    if (!asm_name.empty()) {
      std::puts(codegen::EmitAssembly(mod, driver::HostTarget()).c_str());
      return 0;
    }
    runtime::Module m = codegen::BuildJIT(mod, driver::HostTarget());
    auto make = [&](const te::Tensor& t) {
      std::vector<int64_t> shp = topi::ConstShape(t);
      auto a = runtime::NDArray::Empty(shp, f32);
      float* d = static_cast<float*>(a.raw_data());
      for (int64_t i = 0; i < topi::Product(shp); ++i) d[i] = static_cast<float>((i * 7919) % 13) * 0.01f;
      return a;
    };
    std::vector<runtime::NDArray> arrays = {make(data), make(kernel), make(out)};
    std::vector<void*> args;
    for (auto& a : arrays) args.push_back(a.raw_data());
    auto kern = m.GetKernel("conv");
    for (int i = 0; i < 3; ++i) kern(args.data());
    std::vector<double> ms;
    for (int i = 0; i < 31; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      kern(args.data());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double flops = 2.0 * s.h * s.w * s.k * (s.depthwise ? 1 : s.c) * s.r * s.r;
    std::printf("%-24s threads=%d  %8.3f ms  %7.1f GFLOP/s\n", s.name, threads, ms[15], flops / ms[15] / 1e6);
  }
  return 0;
}
