#include "report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "tessera/support/error.h"

namespace tessera::conformance {

void Counts::Add(Status s) {
  ++cases;
  switch (s) {
    case Status::kPass: ++passed; break;
    case Status::kFail: ++failed; break;
    case Status::kUnsupported: ++unsupported; break;
    case Status::kCrash: ++crashed; break;
  }
}

Counts Total(const std::vector<CaseResult>& results) {
  Counts c;
  for (const auto& r : results) c.Add(r.status);
  return c;
}

void PrintOpTypeTable(std::ostream& os, const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results,
                      int top) {
  std::map<std::string, Counts> by_op;
  for (size_t i = 0; i < cases.size() && i < results.size(); ++i) {
    if (cases[i].op_types.empty()) by_op["(no nodes)"].Add(results[i].status);
    for (const auto& op : cases[i].op_types) by_op[op].Add(results[i].status);
  }
  size_t width = 7;
  for (const auto& [op, c] : by_op) width = std::max(width, op.size());
  char line[512];
  auto row = [&](const std::string& name, const std::string& a, const std::string& b, const std::string& c,
                 const std::string& d, const std::string& e) {
    std::snprintf(line, sizeof(line), "%-*s %6s %7s %7s %12s %8s\n", static_cast<int>(width), name.c_str(), a.c_str(),
                  b.c_str(), c.c_str(), d.c_str(), e.c_str());
    os << line;
  };
  auto counts_row = [&](const std::string& name, const Counts& c) {
    row(name, std::to_string(c.cases), std::to_string(c.passed), std::to_string(c.failed),
        std::to_string(c.unsupported), std::to_string(c.crashed));
  };
  os << "\nresults by op type (a case counts under each op type its model uses):\n";
  row("op type", "cases", "passed", "failed", "unsupported", "crashed");
  for (const auto& [op, c] : by_op) counts_row(op, c);

  std::vector<std::pair<std::string, Counts>> worst;
  for (const auto& [op, c] : by_op) {
    if (c.failed + c.crashed > 0) worst.emplace_back(op, c);
  }
  std::stable_sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) {
    return a.second.failed + a.second.crashed > b.second.failed + b.second.crashed;
  });
  if (worst.size() > static_cast<size_t>(top)) worst.resize(top);
  os << "\nop types with the most failures + crashes:\n";
  if (worst.empty()) os << "  (none)\n";
  for (const auto& [op, c] : worst) {
    os << "  " << op << ": " << c.failed + c.crashed << " (" << c.failed << " failed, " << c.crashed
       << " crashed) of " << c.cases << " cases\n";
  }
}

std::string ConformanceLine(const Counts& t) {
  return "conformance: " + std::to_string(t.passed) + " passed, " + std::to_string(t.failed) + " failed, " +
         std::to_string(t.unsupported) + " unsupported, " + std::to_string(t.crashed) + " crashed of " +
         std::to_string(t.cases);
}

void WriteJsonReport(const std::string& path, const std::string& suite, const Tolerance& tol,
                     const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results) {
  nlohmann::json j;
  j["suite"] = suite;
  j["tolerance"] = {{"rtol", tol.rtol}, {"atol", tol.atol}};
  Counts t = Total(results);
  j["summary"] = {{"cases", t.cases},       {"passed", t.passed},   {"failed", t.failed},
                  {"unsupported", t.unsupported}, {"crashed", t.crashed}};
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < cases.size() && i < results.size(); ++i) {
    list.push_back({{"name", cases[i].name},
                    {"suite", cases[i].suite},
                    {"status", StatusName(results[i].status)},
                    {"op_types", cases[i].op_types},
                    {"message", results[i].message},
                    {"seconds", results[i].seconds}});
  }
  j["cases"] = std::move(list);
  std::ofstream out(path);
  TESSERA_CHECK(out, "cannot write the JSON report '", path, "'");
  // Messages may quote bytes from models or tensors: replace invalid UTF-8 rather than throw.
  out << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  TESSERA_CHECK(out.good(), "error writing the JSON report '", path, "'");
}

std::set<std::string> ReadBaseline(const std::string& path) {
  std::ifstream in(path);
  TESSERA_CHECK(in, "cannot read the baseline '", path, "'");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t e = line.find_last_not_of(" \t\r");
    names.insert(line.substr(b, e - b + 1));
  }
  return names;
}

namespace {

// An unsupported case's reason without the file / node location: the text after the last
// "): " of the location "(op X, domain D, opset N): ", or after "import: " / "build: ".
std::string Reason(const std::string& message) {
  std::string r = message;
  if (size_t p = r.rfind("): "); p != std::string::npos) r = r.substr(p + 3);
  else if (size_t q = r.find(": "); q != std::string::npos) r = r.substr(q + 2);
  for (char& c : r)
    if (c == '\n' || c == '|') c = ' ';
  if (r.size() > 140) r = r.substr(0, 137) + "...";
  return r;
}

}  // namespace

void WriteCoverageMarkdown(const std::string& path, const std::vector<CaseInfo>& cases,
                           const std::vector<CaseResult>& results) {
  std::map<std::pair<std::string, int64_t>, Counts> rows;
  std::map<std::pair<std::string, int64_t>, std::map<std::string, int>> reasons;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::string> ops = cases[i].op_types;
    if (ops.empty()) ops.push_back("(no nodes)");
    for (const std::string& op : ops) {
      const auto key = std::make_pair(op, cases[i].opset);
      rows[key].Add(results[i].status);
      if (results[i].status == Status::kUnsupported) ++reasons[key][Reason(results[i].message)];
    }
  }
  std::ofstream out(path);
  if (!out) TESSERA_THROW(UserError, "cannot write the coverage table ", path);
  out << "# ONNX backend conformance: coverage by operator and opset\n\n"
      << "Generated by `build/tools/conformance/tessera_conformance -j 2 --coverage-md docs/onnx_coverage.md`\n"
      << "over `../shared/onnx-tests` (a case counts under every op type its model uses, at the model's opset).\n\n"
      << "**" << ConformanceLine(Total(results)) << "**\n\n"
      << "| op type | opset | cases | passed | failed | unsupported | crashed | most frequent reason when unsupported |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& [key, c] : rows) {
    std::string why;
    int most = 0;
    for (const auto& [r, n] : reasons[key])
      if (n > most) most = n, why = r;
    out << "| " << key.first << " | " << key.second << " | " << c.cases << " | " << c.passed << " | " << c.failed
        << " | " << c.unsupported << " | " << c.crashed << " | " << why << " |\n";
  }
  if (!out) TESSERA_THROW(UserError, "cannot write the coverage table ", path);
}

void WriteBaseline(const std::string& path, const std::vector<CaseInfo>& cases, const std::vector<CaseResult>& results) {
  std::vector<std::string> passed;
  for (size_t i = 0; i < cases.size() && i < results.size(); ++i) {
    if (results[i].status == Status::kPass) passed.push_back(cases[i].name);
  }
  std::sort(passed.begin(), passed.end());
  std::ofstream out(path);
  TESSERA_CHECK(out, "cannot write the baseline '", path, "'");
  out << "# ONNX backend conformance baseline: the cases that pass (one name per line, sorted).\n"
         "# ctest `conformance` fails when a case listed here no longer passes (the ratchet).\n"
         "# The baseline only grows: when more cases pass, regenerate it from a full run with\n"
         "#   build/tools/conformance/tessera_conformance -j 2 --write-baseline tests/conformance/baseline.txt\n"
         "# and check that no name disappeared (git diff); never delete a case to make the test pass.\n";
  for (const auto& n : passed) out << n << "\n";
  TESSERA_CHECK(out.good(), "error writing the baseline '", path, "'");
}

}  // namespace tessera::conformance
