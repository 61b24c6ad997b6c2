// build(): the compilation pipeline as a list of named steps. See include/tessera/driver/build.h.
#include "tessera/driver/build.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/codegen/target.h"
#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/lower.h"
#include "tessera/runtime/param_io.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/transform/lower.h"

namespace tessera::driver {
namespace {

/// Runs pipeline steps: times them and dumps the IR after each when asked.
class PipelineRunner {
 public:
  explicit PipelineRunner(const BuildOptions& options) : options_(options) {
    if (!options_.dump_ir_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options_.dump_ir_dir, ec);
      TESSERA_CHECK(!ec, "--dump-ir: cannot create directory '", options_.dump_ir_dir, "': ", ec.message());
    }
  }

  /// Runs `step`, then writes `dump()` as NN_<name>.txt when dumping.
  template <typename Step, typename Dump>
  void Run(const std::string& name, Step&& step, Dump&& dump) {
    auto t0 = std::chrono::steady_clock::now();
    step();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (options_.time_passes) {
      std::cerr << "[time] " << std::left << std::setw(28) << name << std::right << std::fixed
                << std::setprecision(2) << ms << " ms\n";
    }
    if (!options_.dump_ir_dir.empty()) {
      std::ostringstream file;
      file << std::setw(2) << std::setfill('0') << index_ << "_" << name << ".txt";
      std::ofstream(std::filesystem::path(options_.dump_ir_dir) / file.str()) << dump();
    }
    ++index_;
  }

 private:
  const BuildOptions& options_;
  int index_ = 0;
};

struct Lowered {
  ExecutorPlan plan;
  tir::IRModule kernels;
  std::string params_blob;
};

Lowered LowerModel(const graph::IRModule& input, const std::vector<std::string>& output_names,
                   const BuildOptions& options, PipelineRunner& pipeline) {
  graph_lower::RegisterComputes();
  graph::IRModule mod = input;
  auto dump_graph = [&] { return graph::PrintModule(mod); };

  pipeline.Run("InferType", [&] { mod = graph::InferType(mod); }, dump_graph);
  pipeline.Run("FuseOps", [&] {
    graph::transform::FuseOpsOptions fuse;
    fuse.fuse_opt_level = options.opt_level >= 1 ? 1 : 0;
    mod = graph::transform::FuseOps(mod, fuse);
  }, dump_graph);
  pipeline.Run("InferType", [&] { mod = graph::InferType(mod); }, dump_graph);

  Lowered out;
  pipeline.Run("GraphExecutorCodegen", [&] { out.plan = GraphExecutorCodegen(mod, output_names); },
               [&] { return out.plan.graph_json; });

  auto dump_tir = [&] {
    std::string s;
    for (const auto& f : out.kernels.functions()) s += tir::AsText(f) + "\n";
    return s;
  };
  tir::IRModule scheduled;
  pipeline.Run("LowerPrimitiveFunctions", [&] {
    for (const auto& [name, fn] : out.plan.kernels) scheduled.Add(graph_lower::LowerPrimitiveFunction(fn, name));
  }, [&] {
    std::string s;
    for (const auto& f : scheduled.functions()) s += tir::AsText(f) + "\n";
    return s;
  });
  pipeline.Run("LowerToFlat", [&] {
    out.kernels = scheduled.Map([](const tir::PrimFunc& f) { return tir::transform::LowerToFlat(f); });
  }, dump_tir);
  out.params_blob = runtime::SaveParams(out.plan.params);
  return out;
}

BuildSummary Summarize(const Lowered& l) {
  BuildSummary s;
  s.num_kernels = static_cast<int>(l.plan.kernels.size());
  s.num_nodes = l.plan.num_nodes;
  s.storage_bytes = l.plan.storage_bytes;
  s.unplanned_bytes = l.plan.unplanned_bytes;
  for (const auto& [name, a] : l.plan.params) s.param_bytes += a.NBytes();
  return s;
}

}  // namespace

BuiltModel Build(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                 const BuildOptions& options) {
  PipelineRunner pipeline(options);
  codegen::Target target = codegen::Target::Parse(options.target);
  Lowered lowered = LowerModel(mod, output_names, options, pipeline);
  BuiltModel built;
  codegen::ModuleExtras extras{lowered.plan.graph_json, lowered.params_blob};
  pipeline.Run("CodegenLLVM", [&] { built.object = codegen::EmitObject(lowered.kernels, target, extras); },
               [&] { return codegen::EmitLLVMIR(lowered.kernels, target, extras); });
  built.summary = Summarize(lowered);
  return built;
}

BuildSummary BuildSharedLibrary(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                const std::string& out_path, const BuildOptions& options) {
  BuiltModel built = Build(mod, output_names, options);
  codegen::LinkSharedLibrary(built.object, out_path);
  return built.summary;
}

runtime::Module BuildJIT(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                         const BuildOptions& options) {
  PipelineRunner pipeline(options);
  codegen::Target target = codegen::Target::Parse(options.target);
  Lowered lowered = LowerModel(mod, output_names, options, pipeline);
  codegen::ModuleExtras extras{lowered.plan.graph_json, lowered.params_blob};
  return codegen::BuildJIT(lowered.kernels, target, extras);
}

}  // namespace tessera::driver
