// The shared `run` subcommand (run_command.h).
#include "run_command.h"

#include <dlfcn.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "output_files.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/npy_io.h"
#include "tessera/runtime/rpc/client.h"
#include "tessera/runtime/run_model.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"

namespace tessera::cli {

std::pair<std::string, std::string> ParseNamedFile(const std::string& spec) {
  auto eq = spec.find('=');
  TESSERA_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), "--input '", spec,
                "': expected NAME=FILE, e.g. --input input=image.npy");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

void AddRunOptions(CLI::App& cmd, RunOptions& o, const std::string& input_help) {
  cmd.add_option("library", o.library, "MODEL.so made by `tessera compile`")->required();
  cmd.add_option("--input,-i", o.inputs, input_help);
  cmd.add_option("--output,-o", o.output,
                 "write every output to this .npz, under its graph output name (/, \\ and control characters "
                 "become _)");
  cmd.add_option("--output-dir", o.output_dir,
                 "write every output to DIR/<name>.npy (characters other than A-Z a-z 0-9 . _ - become _, "
                 "and a leading .)");
  cmd.add_option("--bench", o.bench, "time N runs after a warm-up and print `median X ms`")
      ->check(CLI::Range(0, 1000000));
  cmd.add_option("--threads", o.threads,
                 "worker threads (default: all cores; at most 4 x the hardware threads unless --force-threads)")
      ->check(CLI::Range(1, runtime::kMaxThreads));
  cmd.add_flag("--force-threads", o.force_threads,
               "allow --threads above 4 x the hardware threads (up to 4096; not with --rpc, where the server keeps "
               "its own limit)");
  cmd.add_option("--rpc", o.rpc,
                 "HOST:PORT of a `tessera-runtime rpc server`: upload the library and inputs, run there, "
                 "get the outputs (and --bench timings) back");
}

namespace {

// A library with oneDNN regions (--byoc dnnl) runs them on OpenMP's threads (libgomp), not on the
// runtime's pool. libgomp reads OMP_WAIT_POLICY / OMP_NUM_THREADS once, when it is loaded: set here,
// they reach a libgomp that the model library brings (tessera-runtime): idle OpenMP threads sleep
// instead of spinning (spinning, they take the cores from the runtime's pool between regions), and
// --threads caps them too. The `tessera` CLI has libgomp loaded already (XGBoost, for `tune`), so
// the cap is also set through omp_set_num_threads on this thread, the one that calls the regions
// and creates their primitives (without it, `--threads 1` ran oneDNN on every core). The user's own
// settings win.
void CapOpenMPThreads(int threads) {
  const bool user_set = std::getenv("OMP_NUM_THREADS") != nullptr;
  setenv("OMP_WAIT_POLICY", "passive", 0);
  if (threads <= 0 || user_set) return;
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 0);
  using SetNumThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) set(threads);
}

}  // namespace

int RunCommand(const RunOptions& o, const TensorLoader& load) {
  TESSERA_CHECK(o.output.empty() || runtime::NpzSupported(), "--output ", o.output,
                ": this runtime was built without .npz support (no libzip); write each output as DIR/<name>.npy "
                "with --output-dir DIR instead");
  TESSERA_CHECK(!o.force_threads || o.rpc.empty(), "--force-threads applies to this machine's thread pool; with --rpc "
                "the server keeps its own limit (4 x its hardware threads): drop --force-threads");
  std::vector<runtime::NamedTensor> inputs;
  for (const auto& spec : o.inputs) {
    auto [name, file] = ParseNamedFile(spec);
    inputs.push_back({name, load(file)});
  }
  const runtime::RunModelOptions run_options{o.threads, o.bench, o.force_threads};
  runtime::RunModelResult result;
  if (o.rpc.empty()) {
    CapOpenMPThreads(o.threads);
    result = runtime::RunModel(runtime::Module::LoadFromFile(o.library), inputs, run_options);
  } else {
    runtime::rpc::Client client(o.rpc);
    client.Upload(o.library);
    result = client.Run(inputs, run_options);
    std::cerr << "note: ran on " << client.server().peer << " at " << o.rpc << "\n";
  }
  for (const auto& out : result.outputs) PrintOutput(std::cout, out);
  if (!o.output.empty()) {
    const size_t n = SaveNpzOutputs(o.output, result.outputs, std::cerr);
    std::cout << "wrote " << n << " output(s) to " << o.output << "\n";
  }
  if (!o.output_dir.empty()) {
    std::vector<std::string> paths = SaveNpyDir(o.output_dir, result.outputs, std::cerr);
    std::cout << "wrote " << paths.size() << " output(s) to " << o.output_dir << "/\n";
  }
  if (result.median_ms >= 0) std::cout << "median " << result.median_ms << " ms\n";
  return 0;
}

}  // namespace tessera::cli
