#include "case_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tessera/support/error.h"

namespace tessera::conformance {
namespace {

const std::string kSuite = TESSERA_ONNX_TESTS_DIR;

TEST(CaseInfo, ReadsOpTypesInputsAndOutputs) {
  CaseInfo c = ReadCaseInfo("node", kSuite + "/node/test_add");
  EXPECT_EQ(c.name, "test_add");
  EXPECT_EQ(c.suite, "node");
  EXPECT_EQ(c.op_types, (std::vector<std::string>{"Add"}));
  EXPECT_EQ(c.input_names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(c.output_names, (std::vector<std::string>{"sum"}));
  EXPECT_TRUE(c.unsupported_reason.empty());
}

TEST(CaseInfo, SkipsInitializerBackedInputs) {
  // PyTorch (IR 3) lists the weights among the graph inputs; the test data feeds only the data.
  CaseInfo c = ReadCaseInfo("pytorch-converted", kSuite + "/pytorch-converted/test_Conv2d");
  EXPECT_EQ(c.input_names.size(), 1u);
  EXPECT_EQ(c.op_types, (std::vector<std::string>{"Conv"}));
}

TEST(CaseInfo, SequenceAndOptionalValuesAreUnsupported) {
  CaseInfo seq = ReadCaseInfo("node", kSuite + "/node/test_identity_sequence");
  EXPECT_NE(seq.unsupported_reason.find("sequence-typed"), std::string::npos) << seq.unsupported_reason;
  CaseInfo opt = ReadCaseInfo("node", kSuite + "/node/test_identity_opt");
  EXPECT_NE(opt.unsupported_reason.find("optional-typed"), std::string::npos) << opt.unsupported_reason;
}

TEST(CaseInfo, OtherDomainsPrefixTheOpType) {
  CaseInfo c = ReadCaseInfo("node", kSuite + "/node/test_ai_onnx_ml_binarizer");
  EXPECT_EQ(c.op_types, (std::vector<std::string>{"ai.onnx.ml:Binarizer"}));
}

TEST(CaseInfo, DiscoversEverySuiteAndNumbersFilesNumerically) {
  std::vector<CaseInfo> all = DiscoverCases(kSuite);
  EXPECT_GT(all.size(), 1900u);
  for (const std::string& suite : SuiteNames()) {
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const CaseInfo& c) { return c.suite == suite; })) << suite;
  }
  auto files = NumberedFiles(kSuite + "/simple/test_sequence_model1/test_data_set_0", "input_");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_NE(files[2].find("input_2.pb"), std::string::npos);
  EXPECT_THROW(DiscoverCases("/nonexistent/onnx-tests"), UserError);
}

}  // namespace
}  // namespace tessera::conformance
