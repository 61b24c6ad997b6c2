// `tessera inspect`: what an ONNX model or a compiled model library holds.
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/graph/functor.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/param_io.h"
#include "tessera/support/error.h"

namespace tessera::cli {
namespace {

std::string ShapeStr(const nlohmann::json& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i].get<int64_t>());
  return s + "]";
}

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

int InspectLibrary(const std::string& path) {
  runtime::Module mod = runtime::Module::LoadFromFile(path);
  nlohmann::json g;
  try {
    g = nlohmann::json::parse(mod.GraphJson());
  } catch (const nlohmann::json::exception& e) {
    TESSERA_THROW(UserError, path, ": the executor graph is not valid JSON (", e.what(), "); recompile the model");
  }
  // The loader has checked the record: it is there and well formed.
  const runtime::ArtifactInfo info = runtime::ParseArtifactInfo(
      static_cast<const char*>(mod.Lookup(runtime::kTargetInfoSymbol)), path);
  std::string features;
  for (const std::string& f : info.features) features += (features.empty() ? "" : ", ") + f;
  std::cout << path << ": Tessera model library\ntarget: " << info.triple << " ("
            << (features.empty() ? "no checked CPU features" : features) << "), built by Tessera " << info.version
            << "\ninputs:\n";
  const auto& values = g.at("values");
  auto describe = [&](const nlohmann::json& io) {
    const auto& v = values.at(io.at("value").get<size_t>());
    std::cout << "  " << io.at("name").get<std::string>() << ": " << ShapeStr(v.at("shape")) << " "
              << v.at("dtype").get<std::string>() << "\n";
  };
  for (const auto& in : g.at("inputs")) describe(in);
  std::cout << "outputs:\n";
  for (const auto& out : g.at("outputs")) describe(out);
  std::map<std::string, int> kernel_calls;
  for (const auto& n : g.at("nodes")) kernel_calls[n.at("kernel").get<std::string>()]++;
  size_t storage = 0;
  for (const auto& s : g.at("storages")) storage += s.at("size_bytes").get<size_t>();
  auto params = runtime::LoadParams(mod.ParamsBlob().data(), mod.ParamsBlob().size());
  size_t param_bytes = 0;
  for (const auto& [name, a] : params) param_bytes += a.NBytes();
  std::cout << "kernels: " << kernel_calls.size() << " distinct, " << g.at("nodes").size() << " calls per run\n"
            << "peak activation memory: " << storage << " bytes (" << g.at("storages").size() << " storages)\n"
            << "parameters: " << params.size() << " tensors, " << param_bytes << " bytes\n"
            << "kernel calls:\n";
  for (const auto& [name, n] : kernel_calls) std::cout << "  " << name << " x" << n << "\n";
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
