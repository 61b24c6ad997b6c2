// `tessera run`: load a compiled model library, feed inputs, run, write or print outputs,
// and with --bench N report the median latency of N runs after a warm-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "tensor_file.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"

namespace tessera::cli {
namespace {

struct RunOptions {
  std::string library;
  std::vector<std::string> inputs;
  std::string output;
  int bench = 0;
  int threads = 0;
};

void PrintOutput(const std::string& name, const runtime::NDArray& a) {
  std::cout << "output " << name << ": " << runtime::ShapeToString(a.shape()) << " " << a.dtype().str();
  if (a.dtype() == DataType::Float(32)) {
    const float* p = a.data<float>();
    int64_t n = std::min<int64_t>(a.NumElements(), 8);
    std::cout << " [";
    for (int64_t i = 0; i < n; ++i) std::printf("%s%.6g", i ? ", " : "", p[i]);
    std::cout.flush();
    std::cout << (a.NumElements() > n ? ", ...]" : "]");
  }
  std::cout << "\n";
}

double MedianMs(runtime::GraphExecutor& exec, int n) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < std::max(3, n / 10); ++i) exec.Run();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    exec.Run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

int Run(const RunOptions& o) {
  runtime::GraphExecutor exec(runtime::Module::LoadFromFile(o.library), o.threads);
  std::vector<bool> given(exec.NumInputs(), false);
  for (const auto& spec : o.inputs) {
    auto [name, file] = ParseNamedFile(spec);
    if (exec.InputIndex(name) >= 0) given[exec.InputIndex(name)] = true;
    exec.SetInput(name, LoadTensorFile(file));  // checks name, shape and dtype
  }
  for (int i = 0; i < exec.NumInputs(); ++i) {
    TESSERA_CHECK(given[i], o.library, ": input '", exec.InputName(i), "' (shape ",
                  runtime::ShapeToString(exec.InputShape(i)), ", ", exec.InputDType(i).str(),
                  ") was not given: pass --input ", exec.InputName(i), "=FILE.npy|FILE.pb");
  }
  exec.Run();
  std::map<std::string, runtime::NDArray> outputs;
  for (int i = 0; i < exec.NumOutputs(); ++i) {
    outputs[exec.OutputName(i)] = exec.GetOutput(i);
    PrintOutput(exec.OutputName(i), outputs[exec.OutputName(i)]);
  }
  if (!o.output.empty()) {
    runtime::SaveNpz(o.output, outputs);
    std::cout << "wrote " << outputs.size() << " output(s) to " << o.output << "\n";
  }
  if (o.bench > 0) {
    double ms = MedianMs(exec, o.bench);
    std::cout << "median " << ms << " ms\n";
  }
  return 0;
}

}  // namespace

Action AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a compiled model library on input tensors");
  cmd->add_option("library", opts->library, "MODEL.so made by `tessera compile`")->required();
  cmd->add_option("--input,-i", opts->inputs, "NAME=FILE: an input tensor, FILE is .npy or an ONNX TensorProto .pb");
  cmd->add_option("--output,-o", opts->output, "write every output to this .npz, under its graph output name");
  cmd->add_option("--bench", opts->bench, "time N runs after a warm-up and print `median X ms`")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opts->threads, "worker threads (default: all cores)")->check(CLI::PositiveNumber);
  return [opts] { return Run(*opts); };
}

}  // namespace tessera::cli
