// Running one conformance case in this process: import model.onnx, build it with the JIT,
// feed test_data_set_0/input_<i>.pb, run, and compare each output with output_<i>.pb.
// Meant to run inside a child process (process_pool.h): generated code may crash.
#pragma once

#include <string>

#include "conformance.h"

namespace tessera::conformance {

struct CaseOptions {
  Tolerance tolerance;
  int num_threads = 1;     ///< executor threads (thread pool size)
  int opt_level = 3;       ///< driver::BuildOptions::opt_level
  std::string target = "llvm -mcpu=native";
};

/// Runs `info`'s case and classifies it (conformance.h). Stage by stage:
///   test data   UnsupportedError reading a .pb (e.g. float16)     -> unsupported
///               any other error reading a .pb                      -> fail
///   import      UnsupportedError / UserError                       -> unsupported
///   build       UnsupportedError / UserError                       -> unsupported
///   executor    any error (the compiler produced a bad artifact)   -> crash
///   set inputs  UserError (wrong dtype / shape), missing data      -> fail
///   run         UserError                                          -> fail
///   compare     wrong dtype / shape / numbers, missing outputs     -> fail
/// tessera::InternalError and any other exception at any stage      -> crash.
/// Input shapes come from the test data (ImportOptions::input_shapes), so symbolic dims
/// take the extents the test feeds.
CaseResult RunCase(const CaseInfo& info, const CaseOptions& options);

}  // namespace tessera::conformance
