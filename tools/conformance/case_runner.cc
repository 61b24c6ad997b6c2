#include "case_runner.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compare.h"
#include "case_info.h"
#include "tessera/driver/build.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/frontend/tensor_proto.h"
#include "tessera/runtime/executor.h"
#include "tessera/support/error.h"

namespace tessera::conformance {
namespace fs = std::filesystem;
namespace {

CaseResult Result(Status status, std::string message) {
  CaseResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

// Classifies the exception being handled, thrown while doing `stage`. `user_status` is what
// a UserError (UnsupportedError included) means at this stage.
CaseResult Classify(const std::string& stage, Status user_status) {
  try {
    throw;
  } catch (const InternalError& e) {
    return Result(Status::kCrash, stage + ": " + e.what());
  } catch (const UserError& e) {
    return Result(user_status, stage + ": " + e.what());
  } catch (const Error& e) {
    return Result(Status::kCrash, stage + ": " + e.what());
  } catch (const std::exception& e) {
    return Result(Status::kCrash, stage + ": unexpected exception: " + e.what());
  } catch (...) {
    return Result(Status::kCrash, stage + ": exception of unknown type");
  }
}

// Reads the numbered .pb files of one kind ("input_" / "output_").
std::optional<CaseResult> ReadTensors(const std::vector<std::string>& files, std::vector<runtime::NDArray>* out) {
  for (const auto& f : files) {
    try {
      out->push_back(frontend::ReadTensorProtoFile(f).value);
    } catch (const UnsupportedError& e) {
      return Result(Status::kUnsupported, std::string("test data: ") + e.what());
    } catch (...) {
      return Classify("test data " + fs::path(f).filename().string(), Status::kFail);
    }
  }
  return std::nullopt;
}

}  // namespace

CaseResult RunCase(const CaseInfo& info, const CaseOptions& options) {
  if (!info.unsupported_reason.empty()) return Result(Status::kUnsupported, info.unsupported_reason);
  const std::string data_dir = (fs::path(info.dir) / "test_data_set_0").string();
  const std::vector<std::string> input_files = NumberedFiles(data_dir, "input_");
  const std::vector<std::string> output_files = NumberedFiles(data_dir, "output_");

  std::vector<runtime::NDArray> inputs, refs;
  if (auto r = ReadTensors(input_files, &inputs)) return *r;
  if (auto r = ReadTensors(output_files, &refs)) return *r;
  if (inputs.size() > info.input_names.size()) {
    return Result(Status::kFail, "test data has " + std::to_string(inputs.size()) + " inputs but the graph has " +
                                     std::to_string(info.input_names.size()) + " non-initializer inputs");
  }

  // Import, with the graph inputs' shapes taken from the test data.
  frontend::ImportOptions import_options;
  for (size_t i = 0; i < inputs.size(); ++i) import_options.input_shapes[info.input_names[i]] = inputs[i].shape();
  frontend::ImportResult imported;
  try {
    imported = frontend::FromONNX((fs::path(info.dir) / "model.onnx").string(), import_options);
  } catch (...) {
    return Classify("import", Status::kUnsupported);
  }

  driver::BuildOptions build_options;
  build_options.opt_level = options.opt_level;
  build_options.target = options.target;
  std::unique_ptr<runtime::Executor> exec;
  try {
    runtime::Module module = driver::BuildJIT(imported.module, imported.output_names, build_options);
    try {
      exec = runtime::MakeExecutor(std::move(module), options.num_threads);
    } catch (...) {
      return Classify("executor", Status::kCrash);
    }
  } catch (...) {
    return Classify("build", Status::kUnsupported);
  }

  // Feed every test input the compiled graph still takes (an unused input may be gone).
  std::vector<bool> fed(exec->NumInputs(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    int idx = exec->InputIndex(info.input_names[i]);
    if (idx < 0) continue;
    try {
      exec->SetInput(idx, inputs[i]);
    } catch (...) {
      return Classify("input '" + info.input_names[i] + "'", Status::kFail);
    }
    fed[idx] = true;
  }
  for (int i = 0; i < exec->NumInputs(); ++i) {
    if (!fed[i]) return Result(Status::kFail, "graph input '" + exec->InputName(i) + "' has no test data");
  }

  try {
    exec->Run();
  } catch (...) {
    return Classify("run", Status::kFail);
  }

  if (refs.size() != info.output_names.size() || exec->NumOutputs() != static_cast<int>(refs.size())) {
    return Result(Status::kFail, "output count: the model declares " + std::to_string(info.output_names.size()) +
                                     ", the compiled graph has " + std::to_string(exec->NumOutputs()) +
                                     ", the test data has " + std::to_string(refs.size()));
  }
  // A random operator's values cannot be the reference's (NumPy drew them): its case is checked by
  // the support of the outputs (CompareSupport).
  bool random = false;
  for (const std::string& op : info.op_types)
    for (const char* r : {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
                          "Multinomial"})
      random = random || op == r;
  for (size_t i = 0; i < refs.size(); ++i) {
    int idx = exec->OutputIndex(info.output_names[i]);
    if (idx < 0) idx = static_cast<int>(i);  // outputs with empty or renamed names: by position
    runtime::NDArray got;
    try {
      got = exec->GetOutput(idx);
    } catch (...) {
      return Classify("output " + std::to_string(i), Status::kFail);
    }
    if (auto mismatch = random ? CompareSupport(got, refs[i]) : CompareTensors(got, refs[i], options.tolerance)) {
      return Result(Status::kFail, "output " + std::to_string(i) + " '" + info.output_names[i] + "': " + *mismatch);
    }
  }
  return Result(Status::kPass, "");
}

}  // namespace tessera::conformance
