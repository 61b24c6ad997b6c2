// conformance_runner_selftest: runs the tessera_conformance binary on a tiny suite built in a
// temporary folder and checks that it classifies each case right and never stops early:
//   node/test_relu                  the real ONNX case                        -> pass
//   node/test_relu_corrupt          the same with output_0.pb deliberately off -> fail
//   node/test_relu_crash            the same, faulted by --selftest-crash      -> crash
//   node/test_tessera_no_such_op    a model using an op no one implements      -> unsupported
//   node/test_identity_sequence     the real case with sequence-typed values   -> unsupported
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "onnx.pb.h"

namespace fs = std::filesystem;

namespace {

const std::string kBin = TESSERA_CONFORMANCE_BIN;
const std::string kOnnxTests = TESSERA_ONNX_TESTS_DIR;

struct RunOutput {
  int exit_code = -1;
  std::string text;
  std::string LastLine() const {
    std::string t = text;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return t.substr(t.rfind('\n') + 1);
  }
};

RunOutput RunRunner(const std::string& args) {
  RunOutput out;
  std::string cmd = kBin + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.text.append(buf, n);
  int status = pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

template <typename Proto>
void WriteProto(const fs::path& path, const Proto& m) {
  std::ofstream out(path, std::ios::binary);
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes)) << path;
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

onnx::TensorProto Floats(const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(v.size()));
  for (float x : v) t.add_float_data(x);
  return t;
}

// A model whose only node is an op no ONNX domain defines: the importer must refuse it.
void WriteUnsupportedOpCase(const fs::path& dir) {
  fs::create_directories(dir / "test_data_set_0");
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = model.mutable_graph();
  g->set_name("selftest");
  for (auto* vi : {g->add_input(), g->add_output()}) {
    vi->set_name(vi == &g->input(0) ? "x" : "y");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto* node = g->add_node();
  node->set_op_type("TesseraNoSuchOp");
  node->set_name("no_such_op");
  node->add_input("x");
  node->add_output("y");
  WriteProto(dir / "model.onnx", model);
  WriteProto(dir / "test_data_set_0" / "input_0.pb", Floats({1, 2}));
  WriteProto(dir / "test_data_set_0" / "output_0.pb", Floats({1, 2}));
}

// Moves the first element of a float TensorProto file far outside any tolerance.
void CorruptFirstFloat(const fs::path& file) {
  onnx::TensorProto t;
  {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    ASSERT_TRUE(t.ParseFromString(bytes.str())) << file;
  }
  ASSERT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
  if (t.has_raw_data()) {
    std::string raw = t.raw_data();
    ASSERT_GE(raw.size(), sizeof(float));
    float v;
    std::memcpy(&v, raw.data(), sizeof v);
    v += 10.0f;
    std::memcpy(raw.data(), &v, sizeof v);
    t.set_raw_data(raw);
  } else {
    ASSERT_GT(t.float_data_size(), 0);
    t.set_float_data(0, t.float_data(0) + 10.0f);
  }
  WriteProto(file, t);
}

class RunnerSelfTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/tessera_conformance_selftest_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::path node = root_ / "node";
    fs::create_directories(node);
    const fs::path relu = fs::path(kOnnxTests) / "node" / "test_relu";
    ASSERT_TRUE(fs::exists(relu / "model.onnx")) << "missing ONNX test data at " << relu;
    for (const char* name : {"test_relu", "test_relu_corrupt", "test_relu_crash"}) {
      fs::copy(relu, node / name, fs::copy_options::recursive);
    }
    CorruptFirstFloat(node / "test_relu_corrupt" / "test_data_set_0" / "output_0.pb");
    WriteUnsupportedOpCase(node / "test_tessera_no_such_op");
    fs::copy(fs::path(kOnnxTests) / "node" / "test_identity_sequence", node / "test_identity_sequence",
             fs::copy_options::recursive);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  static std::string Suite() { return "--suite " + root_.string(); }

  static fs::path root_;
};
fs::path RunnerSelfTest::root_;

TEST_F(RunnerSelfTest, ClassifiesEveryCaseAndSurvivesACrash) {
  fs::path json = root_ / "report.json", baseline = root_ / "written_baseline.txt";
  RunOutput r = RunRunner(Suite() + " -j 2 --timeout 120 --selftest-crash '_crash$' --json " + json.string() +
                          " --write-baseline " + baseline.string());
  ASSERT_EQ(r.exit_code, 0) << r.text;
  EXPECT_EQ(r.LastLine(), "conformance: 1 passed, 1 failed, 2 unsupported, 1 crashed of 5") << r.text;
  EXPECT_NE(r.text.find("rtol 0.001, atol 1e-05"), std::string::npos) << "the tolerance is stated\n" << r.text;

  std::ifstream in(json);
  nlohmann::json j = nlohmann::json::parse(in);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& c : j["cases"]) by_name[c["name"]] = c;
  ASSERT_EQ(by_name.size(), 5u) << j.dump(1);
  auto status = [&](const std::string& n) { return by_name[n]["status"].get<std::string>(); };
  auto message = [&](const std::string& n) { return by_name[n]["message"].get<std::string>(); };

  EXPECT_EQ(status("test_relu"), "pass") << message("test_relu");
  EXPECT_EQ(status("test_relu_corrupt"), "fail") << message("test_relu_corrupt");
  EXPECT_NE(message("test_relu_corrupt").find("output 0"), std::string::npos) << message("test_relu_corrupt");
  EXPECT_NE(message("test_relu_corrupt").find("first at"), std::string::npos) << message("test_relu_corrupt");
  EXPECT_EQ(status("test_relu_crash"), "crash");
  EXPECT_NE(message("test_relu_crash").find("signal 11"), std::string::npos) << message("test_relu_crash");
  EXPECT_EQ(status("test_tessera_no_such_op"), "unsupported") << message("test_tessera_no_such_op");
  EXPECT_NE(message("test_tessera_no_such_op").find("TesseraNoSuchOp"), std::string::npos);
  EXPECT_EQ(status("test_identity_sequence"), "unsupported");
  EXPECT_NE(message("test_identity_sequence").find("sequence-typed"), std::string::npos);
  EXPECT_EQ(by_name["test_relu"]["op_types"], nlohmann::json::array({"Relu"}));
  EXPECT_EQ(j["summary"]["crashed"], 1);

  std::ifstream b(baseline);
  std::string line, names;
  while (std::getline(b, line)) {
    if (!line.empty() && line[0] != '#') names += line + ";";
  }
  EXPECT_EQ(names, "test_relu;");
}

TEST_F(RunnerSelfTest, FilterSelectsCases) {
  RunOutput r = RunRunner(Suite() + " -j 2 --filter 'relu_c' --selftest-crash '_crash$'");
  ASSERT_EQ(r.exit_code, 0) << r.text;
  EXPECT_EQ(r.LastLine(), "conformance: 0 passed, 1 failed, 0 unsupported, 1 crashed of 2") << r.text;
  r = RunRunner(Suite() + " --filter '^node/test_tessera'");
  EXPECT_EQ(r.LastLine(), "conformance: 0 passed, 0 failed, 1 unsupported, 0 crashed of 1") << r.text;
}

TEST_F(RunnerSelfTest, CheckBaselineFailsOnARegression) {
  fs::path baseline = root_ / "baseline.txt";
  std::ofstream(baseline) << "# a comment\ntest_relu\ntest_relu_corrupt\n";
  RunOutput r = RunRunner(Suite() + " -j 2 --filter '^test_relu' --baseline " + baseline.string() + " --check-baseline");
  EXPECT_EQ(r.exit_code, 1) << r.text;
  EXPECT_NE(r.text.find("REGRESSION test_relu_corrupt: fail"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("REGRESSION test_relu:"), std::string::npos) << r.text;
  EXPECT_EQ(r.LastLine().rfind("conformance: ", 0), 0u) << r.text;

  // Without --check-baseline the comparison is reported but does not fail the run.
  r = RunRunner(Suite() + " --filter '^test_relu' --baseline " + baseline.string());
  EXPECT_EQ(r.exit_code, 0) << r.text;

  std::ofstream(baseline) << "test_relu\n";
  r = RunRunner(Suite() + " --filter '^test_relu$' --baseline " + baseline.string() + " --check-baseline");
  EXPECT_EQ(r.exit_code, 0) << r.text;
}

TEST_F(RunnerSelfTest, UsageErrors) {
  EXPECT_EQ(RunRunner("--no-such-flag").exit_code, 2);
  EXPECT_EQ(RunRunner("--check-baseline").exit_code, 2);
  EXPECT_EQ(RunRunner("--filter '('").exit_code, 2);
  RunOutput help = RunRunner("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.text.find("atol"), std::string::npos);
  EXPECT_EQ(help.text.find("selftest"), std::string::npos) << "the crash flag stays hidden";
}

}  // namespace
