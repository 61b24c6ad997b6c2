#include "case_info.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "onnx.pb.h"
#include "tessera/support/error.h"

namespace tessera::conformance {
namespace fs = std::filesystem;

const char* StatusName(Status status) {
  switch (status) {
    case Status::kPass: return "pass";
    case Status::kFail: return "fail";
    case Status::kUnsupported: return "unsupported";
    case Status::kCrash: return "crash";
  }
  return "crash";
}

bool ParseStatus(const std::string& name, Status* status) {
  for (Status s : {Status::kPass, Status::kFail, Status::kUnsupported, Status::kCrash}) {
    if (name == StatusName(s)) {
      *status = s;
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& SuiteNames() {
  static const std::vector<std::string> names = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  return names;
}

namespace {

// "sequence", "optional", "map", "sparse-tensor" for a non-tensor value type, else "".
std::string NonTensorKind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kSparseTensorType: return "sparse-tensor";
    default: return "";
  }
}

std::string OpTypeName(const onnx::NodeProto& node) {
  if (node.domain().empty() || node.domain() == "ai.onnx") return node.op_type();
  return node.domain() + ":" + node.op_type();
}

}  // namespace

CaseInfo ReadCaseInfo(const std::string& suite, const std::string& dir) {
  CaseInfo info;
  info.suite = suite;
  info.dir = dir;
  info.name = fs::path(dir).filename().string();

  std::ifstream in(fs::path(dir) / "model.onnx", std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) return info;
  const onnx::GraphProto& g = model.graph();

  for (const auto& id : model.opset_import())
    if (id.domain().empty() || id.domain() == "ai.onnx") info.opset = id.version();
  std::set<std::string> ops;
  for (const auto& node : g.node()) ops.insert(OpTypeName(node));
  info.op_types.assign(ops.begin(), ops.end());

  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& t : g.sparse_initializer()) initializers.insert(t.values().name());
  for (const auto& vi : g.input()) {
    if (initializers.count(vi.name())) continue;
    info.input_names.push_back(vi.name());
    std::string kind = NonTensorKind(vi.type());
    if (!kind.empty() && info.unsupported_reason.empty()) {
      info.unsupported_reason = "graph input '" + vi.name() + "' is " + kind +
                                "-typed (its test data is not a TensorProto); the runner and Tessera support "
                                "only tensor inputs and outputs, not sequence / optional / map values";
    }
  }
  for (const auto& vi : g.output()) {
    info.output_names.push_back(vi.name());
    std::string kind = NonTensorKind(vi.type());
    if (!kind.empty() && info.unsupported_reason.empty()) {
      info.unsupported_reason = "graph output '" + vi.name() + "' is " + kind +
                                "-typed (its test data is not a TensorProto); the runner and Tessera support "
                                "only tensor inputs and outputs, not sequence / optional / map values";
    }
  }
  return info;
}

std::vector<CaseInfo> DiscoverCases(const std::string& root) {
  std::error_code ec;
  TESSERA_CHECK(fs::is_directory(root, ec), "conformance suite '", root,
                "' is not a directory: pass --suite DIR (the folder holding node/, simple/, ...)");
  std::vector<CaseInfo> cases;
  for (const std::string& suite : SuiteNames()) {
    fs::path suite_dir = fs::path(root) / suite;
    if (!fs::is_directory(suite_dir, ec)) continue;
    std::vector<std::string> dirs;
    for (const auto& entry : fs::directory_iterator(suite_dir)) {
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path().string());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) cases.push_back(ReadCaseInfo(suite, d));
  }
  TESSERA_CHECK(!cases.empty(), "conformance suite '", root, "' holds no cases (expected <suite>/<case>/model.onnx for ",
                "suites node, pytorch-converted, pytorch-operator, simple)");
  return cases;
}

std::vector<std::string> NumberedFiles(const std::string& data_dir, const std::string& prefix) {
  std::vector<std::pair<long, std::string>> found;
  std::error_code ec;
  if (!fs::is_directory(data_dir, ec)) return {};
  for (const auto& entry : fs::directory_iterator(data_dir)) {
    std::string f = entry.path().filename().string();
    if (f.size() <= prefix.size() + 3 || f.compare(0, prefix.size(), prefix) != 0 ||
        f.compare(f.size() - 3, 3, ".pb") != 0) {
      continue;
    }
    std::string digits = f.substr(prefix.size(), f.size() - prefix.size() - 3);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    found.emplace_back(std::stol(digits), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [i, p] : found) paths.push_back(p);
  return paths;
}

}  // namespace tessera::conformance
