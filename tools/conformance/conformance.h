// The ONNX backend conformance runner: shared types.
//
// A *case* is one directory of the ONNX backend test data (shared/onnx-tests/<suite>/<case>/):
// model.onnx plus test_data_set_0/input_<i>.pb and output_<i>.pb (serialized TensorProtos, in
// graph-input order without initializer-backed inputs, and in graph-output order).
//
// Each case ends in exactly one Status:
//   pass         every output matches its reference within the Tolerance;
//   fail         the model compiled and ran, but an output has wrong numbers, a wrong shape or
//                dtype, or is missing (the message records the first mismatch);
//   unsupported  import or build threw tessera::UnsupportedError / UserError (the message is
//                Tessera's), or the case uses sequence / optional / map values;
//   crash        the case's child process died on a signal, threw an internal error
//                (tessera::InternalError or an unexpected exception), or ran out of time.
#pragma once

#include <string>
#include <vector>

namespace tessera::conformance {

enum class Status { kPass, kFail, kUnsupported, kCrash };

/// "pass", "fail", "unsupported", "crash".
const char* StatusName(Status status);
/// The inverse of StatusName; false for an unknown name.
bool ParseStatus(const std::string& name, Status* status);

/// Elementwise closeness for floating-point outputs: |got - ref| <= atol + rtol * |ref|.
/// NaN matches only NaN and an infinity only the same infinity. Integer and bool outputs
/// compare exactly.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

/// What the runner knows about a case before running it (from model.onnx, without Tessera).
struct CaseInfo {
  std::string name;   ///< the case directory's name, e.g. "test_abs"
  std::string suite;  ///< the suite directory it lives in, e.g. "node"
  std::string dir;    ///< absolute path of the case directory
  /// Distinct op types of the model graph's nodes, sorted; ops outside the default ONNX
  /// domain are written "domain:OpType" (e.g. "ai.onnx.ml:LabelEncoder").
  std::vector<std::string> op_types;
  /// The model's opset of the default ONNX domain (0 when the model cannot be read).
  int64_t opset = 0;
  /// Graph inputs that are not initializer-backed, in graph-input order: input_<i>.pb feeds
  /// input_names[i].
  std::vector<std::string> input_names;
  /// Graph outputs in order: output_<i>.pb is the reference for output_names[i].
  std::vector<std::string> output_names;
  /// Non-empty when the case is unsupported before anything runs (e.g. a sequence-typed input).
  std::string unsupported_reason;
};

/// The outcome of one case.
struct CaseResult {
  Status status = Status::kCrash;
  std::string message;  ///< empty for a pass; else why (first mismatch, error text, signal)
  double seconds = 0;   ///< wall time of the case's child process
};

}  // namespace tessera::conformance
