#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx_builder.h"
#include "tessera/support/error.h"

namespace tessera::frontend {
namespace {

std::string TempFile(const std::string& name, const std::string& bytes) {
  std::string p = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Errors, MissingFile) {
  std::string m = ErrorOf([] { FromONNX("/nonexistent/dir/model.onnx"); });
  EXPECT_NE(m.find("cannot open ONNX model file '/nonexistent/dir/model.onnx'"), std::string::npos) << m;
  EXPECT_NE(m.find("check the path"), std::string::npos) << m;
}

TEST(Errors, ModelThatIsNotARegularFile) {
  // A FIFO would block the reader until a writer came; /dev/zero would never end.
  std::string m = ErrorOf([] { FromONNX("/dev/zero"); });
  EXPECT_NE(m.find("ONNX model file '/dev/zero' is a character device, not a regular file"), std::string::npos) << m;
  m = ErrorOf([] { FromONNX(std::filesystem::temp_directory_path().string()); });
  EXPECT_NE(m.find("is a directory"), std::string::npos) << m;
}

TEST(Errors, AbsentRequiredInputsAreNamedNotReadOutOfBounds) {
  // Found by the onnx_import fuzz target (tests/fuzz/corpus/onnx_import/crash-reshape-without-shape-input.onnx):
  // a Reshape with one input, an If with none, read their missing input's name out of bounds.
  testing::ModelBuilder b(13);
  b.Input("x", {2, 3});
  b.Node("Reshape", {"x"}, {"y"}, "reshape_1");
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("node 'reshape_1' (op Reshape"), std::string::npos) << m;
  EXPECT_NE(m.find("Reshape's shape (input 1) is required but absent"), std::string::npos) << m;
  testing::ModelBuilder c(13);
  c.Input("x", {2});
  c.Node("If", {}, {"y"}, "if_0");
  c.Output("y", {});
  m = ErrorOf([&] { c.Import(); });
  EXPECT_NE(m.find("node 'if_0' (op If"), std::string::npos) << m;
  EXPECT_NE(m.find("the condition (input 0) is required but absent"), std::string::npos) << m;
}

TEST(Errors, InputShapesThatOverflowOrAreNegativeAreRefused) {
  testing::ModelBuilder b(13);
  b.Input("x", {int64_t{1} << 40, int64_t{1} << 40});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("the byte size of graph input 'x' overflows int64"), std::string::npos) << m;
  testing::ModelBuilder c(13);
  c.Input("x", {2, 3});  // the builder writes a negative extent as a dim_param
  c.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-3);
  c.Node("Relu", {"x"}, {"y"});
  c.Output("y", {});
  m = ErrorOf([&] { c.Import(); });
  EXPECT_NE(m.find("graph input 'x' declares the negative extent -3"), std::string::npos) << m;
}

TEST(Errors, ARankTooSmallForTheOperatorIsNamed) {
  // Found by the onnx_import fuzz target: QLinearConv / ConvInteger read dim 0 of a scalar weight.
  testing::ModelBuilder b(13);
  b.Input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8);
  b.Input("w", {}, onnx::TensorProto::UINT8);
  b.Node("ConvInteger", {"x", "w"}, {"y"}, "convint");
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("node 'convint'"), std::string::npos) << m;
  EXPECT_NE(m.find("w (input 'w') must have at least 1 dimensions; it has shape []"), std::string::npos) << m;
}

TEST(Errors, ReshapeElementCountOverflowIsAUserError) {
  // Found by the onnx_import fuzz target: 381 * 144115188075855871 elements (signed overflow).
  testing::ModelBuilder b(13);
  b.Input("x", {2, 3});
  b.InitInts("shape", {381, 144115188075855871, -1});
  b.Node("Reshape", {"x", "shape"}, {"y"}, "reshape_2");
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("node 'reshape_2'"), std::string::npos) << m;
  EXPECT_NE(m.find("overflows int64"), std::string::npos) << m;
}

TEST(Errors, TruncatedModel) {
  std::string src = std::string(TESSERA_SHARED_DIR) + "/models/mnist-8/model.onnx";
  if (!std::filesystem::exists(src)) GTEST_SKIP();
  std::ifstream in(src, std::ios::binary);
  std::string head(100, '\0');
  in.read(head.data(), 100);
  std::string p = TempFile("tessera_truncated.onnx", head);
  std::string m = ErrorOf([&] { FromONNX(p); });
  EXPECT_NE(m.find(p + ": "), std::string::npos) << m;
  EXPECT_TRUE(m.find("truncated") != std::string::npos || m.find("no graph") != std::string::npos) << m;
}

TEST(Errors, GarbageAndEmptyFiles) {
  std::string p = TempFile("tessera_garbage.onnx", std::string("\xff\xff\xff\xff garbage \x01\x02", 16));
  std::string m = ErrorOf([&] { FromONNX(p); });
  EXPECT_NE(m.find("not a valid ONNX model"), std::string::npos) << m;
  std::string e = TempFile("tessera_empty.onnx", "");
  EXPECT_NE(ErrorOf([&] { FromONNX(e); }).find("not a valid ONNX model"), std::string::npos);
  onnx::ModelProto no_graph;
  no_graph.set_ir_version(7);
  EXPECT_NE(ErrorOf([&] { FromONNXBytes(no_graph.SerializeAsString(), {}, "x.onnx"); }).find("x.onnx: the ONNX model has no graph"),
            std::string::npos);
}

TEST(Errors, UnsupportedOpNamesOpNodeAndOpset) {
  testing::ModelBuilder b(16);
  b.Input("x", {1, 4, 8});
  b.Node("StringNormalizer", {"x"}, {"y"}, "Strings_12");  // no string tensors
  b.Output("y", {1, 4, 8});
  try {
    b.Import();
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "test.onnx: node 'Strings_12' (op StringNormalizer, domain ai.onnx, opset 16): operator StringNormalizer "
                 "is not supported by Tessera's ONNX importer");
  }
}

TEST(Errors, UnsupportedAttributeAndDomain) {
  testing::ModelBuilder b(11);
  b.Input("x", {1, 1, 8, 8});
  auto* n = b.Node("MaxPool", {"x"}, {"y"}, "pool");
  testing::ModelBuilder::AttrInts(n, "kernel_shape", {2, 2});
  testing::ModelBuilder::AttrString(n, "auto_pad", "WEIRD");
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("node 'pool' (op MaxPool"), std::string::npos) << m;
  EXPECT_NE(m.find("auto_pad='WEIRD' is not supported"), std::string::npos) << m;

  testing::ModelBuilder d(11);
  d.Input("x", {1});
  d.Node("Foo", {"x"}, {"y"}, "custom")->set_domain("com.example");
  d.Output("y", {1});
  EXPECT_NE(ErrorOf([&] { d.Import(); }).find("of domain 'com.example' is not supported"), std::string::npos);
}

TEST(Errors, ShapeErrorsNameTheNode) {
  testing::ModelBuilder b(13);
  b.Input("a", {2, 3});
  b.Input("b", {4, 5});
  b.Node("MatMul", {"a", "b"}, {"y"}, "mm");
  b.Output("y", {});
  std::string m = ErrorOf([&] { b.Import(); });
  EXPECT_NE(m.find("test.onnx: node 'mm' (op MatMul, domain ai.onnx, opset 13): type error in nn.matmul"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace tessera::frontend
