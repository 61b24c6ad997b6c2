// Finding the conformance cases on disk and reading what the runner needs from each model
// (op types, graph inputs / outputs, value kinds) with the ONNX protobuf classes alone, so
// the parent process never runs the compiler.
#pragma once

#include <string>
#include <vector>

#include "conformance.h"

namespace tessera::conformance {

/// The suite folders the runner visits, in this order.
const std::vector<std::string>& SuiteNames();

/// Every case under `root`/<suite>/ for each of SuiteNames() (a case is a directory holding
/// model.onnx), sorted by name within a suite. Suites missing on disk are skipped; a root with
/// no cases at all throws tessera::UserError naming it.
std::vector<CaseInfo> DiscoverCases(const std::string& root);

/// Reads model.onnx of the case at `dir` into a CaseInfo. A model the protobuf parser cannot
/// read gives a CaseInfo without op types (the importer reports the error when the case runs).
CaseInfo ReadCaseInfo(const std::string& suite, const std::string& dir);

/// The files `prefix`<i>.pb (e.g. "input_") in `data_dir`, ordered by i.
std::vector<std::string> NumberedFiles(const std::string& data_dir, const std::string& prefix);

}  // namespace tessera::conformance
