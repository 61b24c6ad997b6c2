#include "report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::conformance {
namespace {

CaseInfo Case(std::string name, std::vector<std::string> ops) {
  CaseInfo c;
  c.name = std::move(name);
  c.suite = "node";
  c.op_types = std::move(ops);
  return c;
}

// The numbers in the table row of `op` (cases, passed, failed, unsupported, crashed).
std::vector<int> Row(const std::string& table, const std::string& op) {
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(op + " ", 0) != 0) continue;
    std::istringstream fields(line.substr(op.size()));
    std::vector<int> v;
    int x;
    while (fields >> x) v.push_back(x);
    return v;
  }
  return {};
}

CaseResult R(Status s) {
  CaseResult r;
  r.status = s;
  return r;
}

TEST(Report, ConformanceLine) {
  Counts c = Total({R(Status::kPass), R(Status::kPass), R(Status::kFail), R(Status::kUnsupported), R(Status::kCrash)});
  EXPECT_EQ(ConformanceLine(c), "conformance: 2 passed, 1 failed, 1 unsupported, 1 crashed of 5");
}

TEST(Report, TableCountsACaseUnderEachOpType) {
  std::vector<CaseInfo> cases = {Case("a", {"Add", "Relu"}), Case("b", {"Relu"}), Case("c", {}), Case("d", {"Add"})};
  std::vector<CaseResult> results = {R(Status::kFail), R(Status::kPass), R(Status::kPass), R(Status::kCrash)};
  std::ostringstream os;
  PrintOpTypeTable(os, cases, results);
  std::string s = os.str();
  EXPECT_EQ(Row(s, "Add"), (std::vector<int>{2, 0, 1, 0, 1})) << s;
  EXPECT_EQ(Row(s, "Relu"), (std::vector<int>{2, 1, 1, 0, 0})) << s;
  EXPECT_EQ(Row(s, "(no nodes)"), (std::vector<int>{1, 1, 0, 0, 0})) << s;
  // Add (2 failures + crashes) ranks before Relu (1).
  size_t worst = s.find("most failures");
  ASSERT_NE(worst, std::string::npos);
  EXPECT_LT(s.find("Add: 2 (1 failed, 1 crashed) of 2 cases", worst), s.find("Relu: 1", worst)) << s;
}

TEST(Report, CoverageTableRowsPerOpAndOpsetWithTheCommonestReason) {
  std::vector<CaseInfo> cases = {Case("a", {"Add"}), Case("b", {"Add", "TopK"}), Case("c", {"TopK"}),
                                 Case("d", {"TopK"})};
  cases[0].opset = 13, cases[1].opset = 13, cases[2].opset = 11, cases[3].opset = 11;
  std::vector<CaseResult> results = {R(Status::kPass), R(Status::kUnsupported), R(Status::kUnsupported),
                                     R(Status::kUnsupported)};
  results[1].message = "import: m.onnx: node #0 (op TopK, domain ai.onnx, opset 13): k is computed at run time";
  results[2].message = results[3].message = "import: m.onnx: node #0 (op TopK, domain ai.onnx, opset 11): k | run time";
  char tmpl[] = "/tmp/coverage_XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  WriteCoverageMarkdown(tmpl, cases, results);
  std::ifstream in(tmpl);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(tmpl);
  const std::string md = text.str();
  EXPECT_NE(md.find("conformance: 1 passed, 0 failed, 3 unsupported, 0 crashed of 4"), std::string::npos) << md;
  EXPECT_NE(md.find("| Add | 13 | 2 | 1 | 0 | 1 | 0 | k is computed at run time |"), std::string::npos) << md;
  EXPECT_NE(md.find("| TopK | 11 | 2 | 0 | 0 | 2 | 0 | k   run time |"), std::string::npos) << md;
  EXPECT_NE(md.find("| TopK | 13 | 1 | 0 | 0 | 1 | 0 | k is computed at run time |"), std::string::npos) << md;
}

TEST(Report, BaselineRoundTripsSortedPassingNames) {
  std::string path = ::testing::TempDir() + "/conformance_baseline_" + std::to_string(getpid()) + ".txt";
  std::vector<CaseInfo> cases = {Case("test_b", {}), Case("test_a", {}), Case("test_c", {})};
  WriteBaseline(path, cases, {R(Status::kPass), R(Status::kPass), R(Status::kFail)});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("# ", 0), 0u) << "starts with a comment header";
  EXPECT_NE(text.str().find("test_a\ntest_b\n"), std::string::npos) << text.str();
  EXPECT_EQ(ReadBaseline(path), (std::set<std::string>{"test_a", "test_b"}));
  std::remove(path.c_str());
  EXPECT_THROW(ReadBaseline(path), UserError);
}

}  // namespace
}  // namespace tessera::conformance
