// `tessera compile`: ONNX model → native shared library (kernels + executor graph + params); a
// program in the graph IR's text form (a .ir file, graph/parser.h: functions, ADTs, match, closures)
// compiles the same way.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "tensor_file.h"
#include "tessera/driver/build.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/graph/parser.h"
#include "tessera/support/error.h"

namespace tessera::cli {

InputShapeSpec ParseInputShape(const std::string& spec) {
  auto eq = spec.find('=');
  TESSERA_CHECK(eq != std::string::npos && eq > 0, "--input-shape '", spec,
                "': expected NAME=D0,D1,..., e.g. input=1,3,224,224 (a dim '?' or a name such as 'seq' stays symbolic)");
  InputShapeSpec out;
  out.name = spec.substr(0, eq);
  std::stringstream ss(spec.substr(eq + 1));
  std::string d;
  while (std::getline(ss, d, ',')) {
    const int index = static_cast<int>(out.dims.size());
    const bool is_name = !d.empty() && (std::isalpha(static_cast<unsigned char>(d[0])) || d[0] == '_');
    if (d == "?" || is_name) {
      out.dims.push_back(-1);
      if (is_name) out.symbols[index] = d;
      continue;
    }
    try {
      size_t used = 0;
      out.dims.push_back(std::stoll(d, &used));
      TESSERA_CHECK(used == d.size() && out.dims.back() > 0, "");
    } catch (const std::exception&) {
      TESSERA_THROW(UserError, "--input-shape '", spec, "': '", d,
                    "' is not a positive integer, '?' or a symbol name (a letter or '_' first)");
    }
  }
  return out;
}

namespace {

// `text` as a whole number of type T (read by `parse`, std::stoll / std::stod): a rank-0 array;
// nullopt when it is not one.
template <typename T, typename Parse>
std::optional<runtime::NDArray> ScalarLiteral(const std::string& text, Parse parse) {
  try {
    size_t used = 0;
    const T v = parse(text, &used);
    if (used != text.size()) return std::nullopt;
    runtime::NDArray a = runtime::NDArray::Empty({}, runtime::DataTypeOf<T>());
    *a.data<T>() = v;
    return a;
  } catch (const std::exception&) {  // not a number, or out of range
    return std::nullopt;
  }
}

}  // namespace

std::pair<std::string, runtime::NDArray> ParseInputValue(const std::string& spec) {
  auto eq = spec.find('=');
  TESSERA_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), "--input-value '", spec,
                "': expected NAME=NUMBER or NAME=FILE (.npy / .pb), e.g. sr=16000");
  const std::string name = spec.substr(0, eq), text = spec.substr(eq + 1);
  // A number literal: a rank-0 int64 (or float64) value, converted to the input's dtype at import.
  auto stoll = [](const std::string& t, size_t* used) { return std::stoll(t, used); };
  auto stod = [](const std::string& t, size_t* used) { return std::stod(t, used); };
  if (auto v = ScalarLiteral<int64_t>(text, stoll)) return {name, *v};
  if (auto v = ScalarLiteral<double>(text, stod)) return {name, *v};
  return {name, LoadTensorFile(text)};
}

frontend::ImportOptions ImportOptionsFromFlags(const std::vector<std::string>& input_shapes,
                                               const std::vector<std::string>& input_values) {
  frontend::ImportOptions options;
  for (const auto& text : input_shapes) {
    InputShapeSpec spec = ParseInputShape(text);
    TESSERA_CHECK(options.input_shapes.emplace(spec.name, spec.dims).second, "--input-shape names '", spec.name,
                  "' twice");
    if (!spec.symbols.empty()) options.input_dim_names[spec.name] = spec.symbols;
  }
  for (const auto& spec : input_values) {
    auto [name, value] = ParseInputValue(spec);
    TESSERA_CHECK(options.input_values.emplace(name, value).second, "--input-value names '", name, "' twice");
  }
  return options;
}

namespace {

struct CompileOptions {
  std::string model;
  std::string output;
  std::string target = "llvm -mcpu=native";
  std::string dump_ir;
  bool time_passes = false;
  int opt_level = 3;
  std::vector<std::string> input_shapes;
  bool dynamic = false;
  std::vector<std::string> input_values;
  std::vector<std::string> disabled_passes;
  bool verify_ir = false;
  std::vector<std::string> byoc;
  std::string tuning_db;
};

std::string MiB(size_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

void PrintSummary(const CompileOptions& o, const driver::BuildSummary& s) {
  std::cout << "compiled " << o.model << " -> " << o.output << "\n"
            << "  kernels: " << s.num_kernels << " distinct, " << s.num_nodes << " calls per run"
            << (s.num_external ? " (" + std::to_string(s.num_external) + " external functions: --byoc)" : std::string())
            << "\n"
            << "  activation memory: " << MiB(s.storage_bytes) << " planned (" << MiB(s.unplanned_bytes)
            << " without reuse)\n"
            << "  parameters: " << MiB(s.param_bytes) << "\n";
  if (!o.tuning_db.empty())
    std::cout << "  tuned schedules: " << s.tuned_kernels << " of " << s.num_kernels << " kernels (from " << o.tuning_db
              << (s.tuning_rejected     ? "; its end-to-end check kept the default build"
                  : s.rewrites_rejected ? "; its end-to-end check kept the graph rewrites at their defaults"
                                        : "")
              << (s.untuned_kernels ? "; " + std::to_string(s.untuned_kernels) +
                                          " kernels kept at their default schedule, slower tuned in the model"
                                    : std::string())
              << ")\n";
}

driver::BuildOptions BuildOptionsOf(const CompileOptions& o) {
  driver::BuildOptions build_options;
  build_options.target = o.target;
  build_options.dump_ir_dir = o.dump_ir;
  build_options.time_passes = o.time_passes;
  build_options.opt_level = o.opt_level;
  build_options.disabled_passes = o.disabled_passes;
  if (o.verify_ir) build_options.verify_ir = true;
  build_options.byoc = o.byoc;
  build_options.tuning_db = o.tuning_db;
  return build_options;
}

// A program in the graph IR's text form: @main's params are the inputs (by their names), its
// results the outputs "output0", "output1", ... (one per field of a tuple result).
int CompileTextProgram(const CompileOptions& o) {
  if (!o.input_shapes.empty() || o.dynamic || !o.input_values.empty())
    TESSERA_THROW(UserError, o.model, ": --input-shape, --dynamic and --input-value apply to ONNX models; a .ir "
                  "program declares its input types itself (a symbolic dim such as Tensor[(n, 4), float32] is dynamic)");
  std::ifstream in(o.model, std::ios::binary);
  TESSERA_CHECK(in.good(), "cannot read '", o.model, "'");
  std::stringstream text;
  text << in.rdbuf();
  const graph::IRModule mod = graph::ParseModule(text.str(), o.model);
  TESSERA_CHECK(mod.Contains("main"), o.model, ": the program has no @main (the entry point)");
  const graph::Type ret = mod.main()->checked_type()->as<graph::FuncTypeNode>()->ret_type;
  const auto* tuple = ret->as<graph::TupleTypeNode>();
  std::vector<std::string> outputs;
  for (size_t i = 0; i < (tuple ? tuple->fields.size() : 1); ++i) outputs.push_back("output" + std::to_string(i));
  PrintSummary(o, driver::BuildSharedLibrary(mod, outputs, o.output, BuildOptionsOf(o)));
  return 0;
}

int Compile(const CompileOptions& o) {
  std::error_code ec;
  if (std::filesystem::equivalent(o.model, o.output, ec)) {
    TESSERA_THROW(UserError, "-o '", o.output, "' is the input model '", o.model,
                  "': compiling would overwrite the model with the library; choose another output path (e.g. ",
                  std::filesystem::path(o.model).stem().string(), ".so)");
  }
  if (std::filesystem::path(o.model).extension() == ".ir") return CompileTextProgram(o);
  frontend::ImportOptions import_options = ImportOptionsFromFlags(o.input_shapes, o.input_values);
  import_options.keep_symbolic_dims = o.dynamic;
  frontend::ImportResult imported = frontend::FromONNX(o.model, import_options);
  for (const auto& [dim, value] : imported.bound_dims) {
    std::cerr << "note: symbolic dimension '" << dim << "' bound to " << value
              << " (set it with --input-shape NAME=D0,D1,..., or keep it symbolic with --dynamic)\n";
  }
  for (const std::string& w : imported.warnings) std::cerr << "warning: " << w << "\n";
  driver::BuildOptions build_options = BuildOptionsOf(o);
  build_options.input_guards = imported.input_values;
  PrintSummary(o, driver::BuildSharedLibrary(imported.module, imported.output_names, o.output, build_options));
  return 0;
}

}  // namespace

Action AddCompileCommand(CLI::App& app) {
  auto opts = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand("compile", "Compile an ONNX model into a native shared library");
  cmd->add_option("model", opts->model,
                  "the ONNX model (.onnx), or a program in the graph IR's text form (.ir: def @main(...), types, "
                  "match, closures; outputs named output0, output1, ...)")
      ->required();
  cmd->add_option("-o,--output", opts->output, "the shared library to write (.so)")->required();
  cmd->add_option("--target", opts->target,
                  "the machine to compile for: native (default: this machine), a tag (avx2 / x86-64-v3, "
                  "avx512 / x86-64-v4, aarch64) or 'llvm [-mtriple=T] [-mcpu=C] [-mattr=+f,-g] [-num-cores=N]'");
  cmd->add_option("--dump-ir", opts->dump_ir, "write the IR after every pipeline step into this directory");
  cmd->add_flag("--time-passes", opts->time_passes, "print a table of the time of every pipeline step to stderr");
  cmd->add_option("--disable-pass", opts->disabled_passes,
                  "a pass not to run, e.g. FoldScaleAxis (repeatable; InferType, FuseOps and codegen always run)");
  cmd->add_flag("--verify-ir", opts->verify_ir, "check the graph IR invariants after every pass (always on in debug builds)");
  cmd->add_option("--opt-level", opts->opt_level, "0: one kernel per operator; 3 (default): all optimizations")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--byoc", opts->byoc,
                  "BACKEND[,BACKEND...]: offload the ops these external codegens support (dnnl, csource; the first "
                  "listed wins); docs/byoc.md")
      ->delimiter(',');
  cmd->add_option("--input-shape", opts->input_shapes,
                  "NAME=D0,D1,...: the shape of an input; a dim '?' or a name (e.g. ids=1,seq) stays symbolic: the "
                  "library runs every extent (dynamic shapes, run by the VM)");
  cmd->add_flag("--dynamic", opts->dynamic,
                "keep the model's symbolic dimensions (e.g. batch_size) symbolic instead of binding them to 1");
  cmd->add_option("--input-value", opts->input_values,
                  "NAME=NUMBER|FILE: specialize the model for this value of an input (e.g. sr=16000; FILE is .npy or "
                  ".pb): it folds at compile time (an If on it keeps one branch) and the library refuses any other "
                  "value at run time");
  cmd->add_option("--db", opts->tuning_db,
                  "a tuning database written by `tessera tune`: each kernel gets its best record for this target");
  return [opts] { return Compile(*opts); };
}

}  // namespace tessera::cli
