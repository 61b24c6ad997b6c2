// Imports the shared real models and checks the inferred output types against the declared ones.
#include <gtest/gtest.h>

#include <filesystem>

#include "onnx_builder.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"

namespace tessera::frontend {
namespace {

using testing::OpCounts;

std::string ModelPath(const std::string& name) { return std::string(TESSERA_SHARED_DIR) + "/models/" + name + "/model.onnx"; }

ImportResult ImportOrSkip(const std::string& name) {
  std::string p = ModelPath(name);
  if (!std::filesystem::exists(p)) return {};
  return FromONNX(p);
}

// main's result types, one per output.
std::vector<graph::Type> OutputTypes(const ImportResult& r) {
  graph::Type t = r.module.main()->ret_type;
  if (auto* tup = t->as<graph::TupleTypeNode>()) return tup->fields;
  return {t};
}

void ExpectOutputsMatchDeclared(const ImportResult& r, const std::vector<std::string>& expected) {
  graph::IRModule typed = graph::InferType(r.module);
  std::vector<graph::Type> got = OutputTypes(r);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_EQ(r.declared_output_types.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]->str(), expected[i]) << "output " << r.output_names[i];
    EXPECT_TRUE(graph::StructuralEqual(got[i], r.declared_output_types[i]))
        << got[i]->str() << " vs declared " << graph::TypeStr(r.declared_output_types[i]);
  }
}

#define SKIP_IF_MISSING(name) \
  if (!std::filesystem::exists(ModelPath(name))) GTEST_SKIP() << ModelPath(name) << " not found"

TEST(Models, Mnist8) {
  SKIP_IF_MISSING("mnist-8");
  ImportResult r = ImportOrSkip("mnist-8");
  EXPECT_EQ(r.opset, 8);
  EXPECT_EQ(r.input_names, std::vector<std::string>{"Input3"});  // initializers are not inputs
  EXPECT_EQ(r.output_names, std::vector<std::string>{"Plus214_Output_0"});
  ExpectOutputsMatchDeclared(r, {"Tensor[(1, 10), float32]"});
  auto ops = OpCounts(r.module.main()->body);
  EXPECT_EQ(ops["nn.conv2d"], 2);
  EXPECT_EQ(ops["nn.max_pool2d"], 2);
  EXPECT_EQ(ops["nn.relu"], 2);
  EXPECT_EQ(ops["nn.matmul"], 1);
  EXPECT_EQ(ops["add"], 3);
  EXPECT_EQ(ops["reshape"], 1);  // the weight reshape folded at import
}

TEST(Models, SuperResolution10BindsBatch) {
  SKIP_IF_MISSING("super-resolution-10");
  ImportResult r = ImportOrSkip("super-resolution-10");
  EXPECT_EQ(r.bound_dims.at("batch_size"), 1);
  EXPECT_EQ(r.input_types[0]->str(), "Tensor[(1, 1, 224, 224), float32]");
  ExpectOutputsMatchDeclared(r, {"Tensor[(1, 1, 672, 672), float32]"});
  auto ops = OpCounts(r.module.main()->body);
  EXPECT_EQ(ops["nn.conv2d"], 4);
  EXPECT_EQ(ops["nn.bias_add"], 4);
  EXPECT_EQ(ops["nn.relu"], 3);
  EXPECT_EQ(ops["reshape"], 2);
  EXPECT_EQ(ops["transpose"], 1);

  ImportOptions opts;
  opts.input_shapes["input"] = {2, 1, 224, 224};
  ImportResult r2 = FromONNX(ModelPath("super-resolution-10"), opts);
  EXPECT_EQ(r2.bound_dims.at("batch_size"), 2);
  EXPECT_EQ(r2.module.main()->ret_type->str(), "Tensor[(2, 1, 672, 672), float32]");
}

TEST(Models, UltrafaceRfb320FoldsShapeSubgraphs) {
  SKIP_IF_MISSING("ultraface-rfb-320");
  ImportResult r = ImportOrSkip("ultraface-rfb-320");
  EXPECT_EQ(r.output_names, (std::vector<std::string>{"scores", "boxes"}));
  ExpectOutputsMatchDeclared(r, {"Tensor[(1, 4420, 2), float32]", "Tensor[(1, 4420, 4), float32]"});
  auto ops = OpCounts(r.module.main()->body);
  EXPECT_EQ(ops["nn.conv2d"], 52);
  EXPECT_EQ(ops["nn.batch_norm"], 35);
  EXPECT_EQ(ops["nn.relu"], 37);
  EXPECT_EQ(ops["nn.softmax"], 1);
  EXPECT_EQ(ops["exp"], 1);
  EXPECT_EQ(ops["reshape"], 8);  // Shape/Gather/Unsqueeze/Concat folded into static newshapes
  EXPECT_EQ(ops["take"], 0);
  EXPECT_EQ(ops["strided_slice"], 6);  // all six Slices cut data (box decoding), none are shapes
}

TEST(Models, NanotrackBackbone) {
  SKIP_IF_MISSING("nanotrack-v2-backbone");
  ImportResult r = ImportOrSkip("nanotrack-v2-backbone");
  EXPECT_EQ(r.opset, 14);
  ExpectOutputsMatchDeclared(r, {"Tensor[(1, 48, 16, 16), float32]"});
  auto ops = OpCounts(r.module.main()->body);
  EXPECT_EQ(ops["nn.conv2d"], 24);
  EXPECT_EQ(ops["nn.dense"], 12);
  EXPECT_EQ(ops["nn.global_avg_pool2d"], 6);
  EXPECT_EQ(ops["hard_sigmoid"], 6);
  EXPECT_EQ(ops["hard_swish"], 11);
  EXPECT_EQ(ops["reshape"], 12);
}

TEST(Models, NanotrackHead) {
  SKIP_IF_MISSING("nanotrack-v2-head");
  ImportResult r = ImportOrSkip("nanotrack-v2-head");
  EXPECT_EQ(r.input_names, (std::vector<std::string>{"input1", "input2"}));
  ExpectOutputsMatchDeclared(r, {"Tensor[(1, 2, 16, 16), float32]", "Tensor[(1, 4, 16, 16), float32]"});
  auto ops = OpCounts(r.module.main()->body);
  EXPECT_EQ(ops["nn.conv2d"], 34);
  EXPECT_EQ(ops["clip"], 12);
  EXPECT_EQ(ops["nn.matmul"], 2);
  EXPECT_EQ(ops["sigmoid"], 2);
  EXPECT_EQ(ops["transpose"], 2);
  // the printer handles a whole model
  EXPECT_NE(graph::PrintModule(r.module).find("clip(%"), std::string::npos);
}

}  // namespace
}  // namespace tessera::frontend
