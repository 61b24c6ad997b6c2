// Reporting conformance results: the per-op-type summary table, the JSON report, and the
// baseline (the ratchet: the sorted names of the cases that pass).
#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "conformance.h"

namespace tessera::conformance {

struct Counts {
  int cases = 0, passed = 0, failed = 0, unsupported = 0, crashed = 0;
  void Add(Status s);
};

/// Totals over `results` (parallel to `cases`).
Counts Total(const std::vector<CaseResult>& results);

/// The table by op type (a case counts once under each distinct op type of its model;
/// "(no nodes)" for a graph without nodes), then the `top` op types with the most
/// failures + crashes.
void PrintOpTypeTable(std::ostream& os, const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results,
                      int top = 15);

/// Exactly "conformance: P passed, F failed, U unsupported, C crashed of N".
std::string ConformanceLine(const Counts& total);

/// The JSON report: {"suite", "tolerance": {"rtol", "atol"}, "summary": {...},
/// "cases": [{"name", "suite", "status", "op_types", "message", "seconds"}, ...]}.
void WriteJsonReport(const std::string& path, const std::string& suite, const Tolerance& tol,
                     const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results);

/// docs/onnx_coverage.md: a Markdown table with one row per (op type, opset) of the suite's
/// models (a case counts under each distinct op type of its model, at the model's opset):
/// cases, passed, failed, unsupported, crashed, and for rows with unsupported cases the most
/// frequent reason (Tessera's message without the file location, at most 140 characters),
/// after a summary line. UserError when it cannot be written.
void WriteCoverageMarkdown(const std::string& path, const std::vector<CaseInfo>& cases,
                           const std::vector<CaseResult>& results);

/// Reads a baseline file: one case name per line; blank lines and lines starting with '#'
/// are ignored, as is surrounding whitespace. UserError when it cannot be read.
std::set<std::string> ReadBaseline(const std::string& path);

/// Writes the sorted names of the passing cases, after a comment header saying how to
/// regenerate the file. UserError when it cannot be written.
void WriteBaseline(const std::string& path, const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results);

}  // namespace tessera::conformance
