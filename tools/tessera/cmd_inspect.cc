// `tessera inspect`: what an ONNX model or a compiled model library holds (a library is read from
// the file, never loaded: runtime/artifact_file.h).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "output_names.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/graph/functor.h"
#include "tessera/runtime/artifact_file.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/param_io.h"
#include "tessera/runtime/vm_executable.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::cli {
namespace {

int InspectONNX(const std::string& path) {
  frontend::ImportResult r = frontend::FromONNX(path);
  std::cout << path << ": ONNX IR version " << r.ir_version << ", opset " << r.opset;
  if (!r.producer.empty()) std::cout << ", produced by " << r.producer;
  std::cout << "\ninputs:\n";
  const auto& main = r.module.main();
  for (size_t i = 0; i < r.input_names.size(); ++i) {
    std::cout << "  " << r.input_names[i] << ": " << (r.input_types[i] ? r.input_types[i]->str() : "?") << "\n";
  }
  std::cout << "outputs:\n";
  for (size_t i = 0; i < r.output_names.size(); ++i) {
    const auto& t = r.declared_output_types[i];
    std::cout << "  " << r.output_names[i] << ": " << (t ? t->str() : "?") << "\n";
  }
  for (const auto& [dim, value] : r.bound_dims) std::cout << "symbolic dimension '" << dim << "' bound to " << value << "\n";
  std::cout << "ONNX operators (nodes of the main graph):\n";
  for (const auto& [name, n] : r.onnx_op_counts) std::cout << "  " << name << ": " << n << "\n";
  std::map<std::string, int> counts;
  int constants = 0;
  graph::PostOrderVisit(main->body, [&](const graph::Expr& e) {
    if (const auto* c = e->as<graph::CallNode>())
      if (const auto* op = c->op->as<graph::OpNode>()) counts[op->name]++;
    if (e->as<graph::ConstantNode>()) constants++;
  });
  std::cout << "graph IR operators after import (ONNX Constant / Shape subgraphs folded; " << constants << " constants):\n";
  for (const auto& [name, n] : counts) std::cout << "  " << name << ": " << n << "\n";
  return 0;
}

// Reads everything from the file (runtime/artifact_file.h): the library is never loaded, so
// none of its code runs, and a library for another architecture or version is shown as well.
int InspectLibrary(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) runtime::CheckElfImage(path, size);  // a truncated copy: say so first
  const runtime::ArtifactFile a = runtime::ReadArtifactFile(path);
  const runtime::ArtifactInfo info = runtime::ParseArtifactInfo(a.target_info, path);
  TESSERA_CHECK(a.has_content_hash, "model library '", path, "' has no content hash (", runtime::kContentHashSymbol,
                "): it is corrupt or was built by a Tessera older than ", TESSERA_VERSION, " (it says ", info.version,
                "); compile it again");
  runtime::CheckContentHash(a.content_hash, a.graph_json, a.params_blob, path);
  const bool vm = runtime::ProgramFormat(a.graph_json, path) == "tessera-vm";
  // What inspect shows of either program (graph_executor.h or vm.h): inputs, outputs, guards, kernel calls.
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    DataType dtype;
    std::vector<std::string> dim_names;  // a VM program's symbolic dims (vm.h "Shapes"), else empty
  };
  std::vector<Tensor> inputs, outputs;
  std::vector<std::pair<int, std::string>> guards;  // input index, param
  std::map<std::string, int> kernel_calls;
  int calls = 0;
  std::string memory;
  std::vector<runtime::PlanExternal> external;
  if (vm) {
    const runtime::VMExecutable exe = runtime::ParseVMExecutable(a.graph_json, path);
    for (const auto& t : exe.inputs) inputs.push_back({t.name, t.shape, t.dtype, t.dim_names});
    for (const auto& t : exe.outputs) outputs.push_back({t.name, t.shape, t.dtype, t.dim_names});
    for (const auto& g : exe.guards) guards.emplace_back(g.input, g.param);
    int branches = 0;
    size_t instructions = 0;
    for (int f = runtime::kMainFunction; f < static_cast<int>(exe.functions.size()); ++f) {  // main, then its functions
      instructions += exe.Code(f).size();
      for (const auto& in : exe.Code(f)) {
        if (in.op == runtime::VMOpcode::kInvokePacked) kernel_calls[in.name]++, calls++;
        if (in.op == runtime::VMOpcode::kIf || in.op == runtime::VMOpcode::kIfTag) branches++;
      }
    }
    std::string symbols;  // the run-time extents (vm.h "Shapes")
    for (const std::string& sym : exe.symbols) symbols += (symbols.empty() ? "" : ", ") + sym;
    if (!symbols.empty()) symbols = "; symbolic extents bound at run time: " + symbols;
    memory = "program: VM bytecode (control flow" + std::string(exe.symbols.empty() ? "" : " or dynamic shapes") +
             "), " + std::to_string(instructions) + " instructions" +
             (exe.functions.empty() ? "" : " in main and " + std::to_string(exe.functions.size()) + " functions") +
             ", " + std::to_string(branches) + " If / IfTag, " + std::to_string(exe.num_registers) + " registers in main" +
             symbols +
             "; activation memory from the VM's storage pool at run time";
  } else {
    const runtime::GraphPlan plan = runtime::ParseGraphPlan(a.graph_json, path);
    auto tensor = [&](const runtime::PlanIO& io) {
      const runtime::PlanValue& v = plan.values[io.value];
      return Tensor{io.name, v.shape, v.dtype, {}};
    };
    for (const auto& io : plan.inputs) inputs.push_back(tensor(io));
    for (const auto& io : plan.outputs) outputs.push_back(tensor(io));
    for (const auto& g : plan.guards) guards.emplace_back(g.input, g.param);
    for (const auto& n : plan.nodes) kernel_calls[n.kernel]++, calls++;
    size_t storage = 0;
    for (const auto& s : plan.storages) storage += s.size_bytes;
    memory = "peak activation memory: " + std::to_string(storage) + " bytes (" + std::to_string(plan.storages.size()) +
             " storages)";
    external = plan.external;
  }
  std::map<std::string, runtime::NDArray> params;
  try {
    params = runtime::LoadParams(a.params_blob.data(), a.params_blob.size());
  } catch (const UserError& e) {
    TESSERA_THROW(UserError, "model library '", path, "': ", e.what());
  }

  std::string features;
  for (const std::string& f : info.features) features += (features.empty() ? "" : ", ") + f;
  std::cout << path << ": Tessera model library (" << a.arch << ", read without loading it)\ntarget: " << info.triple
            << " (" << (features.empty() ? "no checked CPU features" : features) << "), built by Tessera "
            << info.version << "\ninputs:\n";
  auto describe = [&](const Tensor& t, const std::string& note) {
    std::cout << "  " << cli::Printable(t.name) << ": " << runtime::ShapeToString(t.shape, t.dim_names) << " "
              << t.dtype.str()
              << note << "\n";
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string note;
    for (const auto& [input, param] : guards) {
      auto p = params.find(param);
      if (input == static_cast<int>(i) && p != params.end())
        note = " (compiled for the value " + runtime::ValuesToString(p->second) + " only: --input-value)";
    }
    describe(inputs[i], note);
  }
  std::cout << "outputs:\n";
  for (const auto& out : outputs) describe(out, "");
  size_t param_bytes = 0;
  for (const auto& [name, p] : params) param_bytes += p.NBytes();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.content_hash));
  std::cout << "kernels: " << kernel_calls.size() << " distinct, " << calls
            << (vm ? " calls in the program (a run makes those of the branches it takes)\n" : " calls per run\n")
            << memory << "\n"
            << "parameters: " << params.size() << " tensors, " << param_bytes << " bytes\n"
            << "content hash: " << hash << " (matches the " << (vm ? "program" : "graph") << " and parameters)\n"
            << "kernel calls:\n";
  for (const auto& [name, n] : kernel_calls) std::cout << "  " << cli::Printable(name) << " x" << n << "\n";
  if (!external.empty()) {
    std::cout << "external functions (BYOC): " << external.size() << "\n";
    for (const runtime::PlanExternal& x : external) {
      std::string ops;
      for (const std::string& op : x.ops) ops += (ops.empty() ? "" : ", ") + op;
      std::cout << "  " << cli::Printable(x.symbol) << " [" << cli::Printable(x.compiler) << "]: " << cli::Printable(ops)
                << "\n";
    }
  }
  return 0;
}

int Inspect(const std::string& path) {
  TESSERA_CHECK(std::filesystem::exists(path), "'", path, "' does not exist");
  if (std::filesystem::path(path).extension() == ".onnx") return InspectONNX(path);
  return InspectLibrary(path);
}

}  // namespace

Action AddInspectCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("inspect", "Show the inputs, outputs and operators of MODEL.onnx, or the kernels of MODEL.so");
  cmd->add_option("file", *path, "MODEL.onnx or MODEL.so")->required();
  return [path] { return Inspect(*path); };
}

}  // namespace tessera::cli
