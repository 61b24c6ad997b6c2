// Converters added for ONNX conformance: reductions, comparisons / Where folding, shape ops,
// normalizations, 1-D convolution and Clip bounds, on small models built in the test.
#include <gtest/gtest.h>

#include "onnx_builder.h"
#include "tessera/support/error.h"

namespace tessera::frontend {
namespace {

using graph::CallNode;
using testing::FindCall;
using testing::ModelBuilder;
using testing::OpCounts;

using testing::Body;
using testing::RetType;

TEST(OnnxOpsConverters, ReduceAxesAttrBeforeOpset18InputAfter) {
  ModelBuilder a(13);
  a.Input("x", {2, 3, 4});
  ModelBuilder::AttrInts(a.Node("ReduceMean", {"x"}, {"y"}), "axes", {-1});
  a.Output("y", {2, 3, 1});
  ImportResult ra = a.Import();
  EXPECT_EQ(RetType(ra), "Tensor[(2, 3, 1), float32]");
  EXPECT_EQ(FindCall(Body(ra), "mean")->attrs.GetInts("axis"), (std::vector<int64_t>{2}));

  ModelBuilder b(18);
  b.Input("x", {2, 3, 4});
  b.InitInts("axes", {0, 2});
  ModelBuilder::AttrInt(b.Node("ReduceL2", {"x", "axes"}, {"y"}), "keepdims", 0);
  b.Output("y", {3});
  ImportResult rb = b.Import();
  EXPECT_EQ(RetType(rb), "Tensor[(3,), float32]");
  EXPECT_EQ(OpCounts(Body(rb))["sqrt"], 1);

  ModelBuilder c(18);  // axes computed at run time: a data-dependent shape (keepdims: each dim 1 or x's)
  c.Input("x", {2, 3});
  c.Input("axes", {1}, onnx::TensorProto::INT64);
  c.Node("ReduceMax", {"x", "axes"}, {"y"});
  c.Output("y", {});
  ImportResult rc = c.Import();
  EXPECT_EQ(RetType(rc), "Tensor[(y_0_r, y_1_r), float32]");
  EXPECT_EQ(FindCall(Body(rc), "vm.reduce")->attrs.GetString("kind"), "max");
}

TEST(OnnxOpsConverters, ArgMaxIsInt64) {
  ModelBuilder b(13);
  b.Input("x", {2, 5});
  auto* n = b.Node("ArgMax", {"x"}, {"y"});
  ModelBuilder::AttrInt(n, "axis", 1);
  ModelBuilder::AttrInt(n, "keepdims", 0);
  b.Output("y", {2}, onnx::TensorProto::INT64);
  EXPECT_EQ(RetType(b.Import()), "Tensor[(2,), int64]");
}

// torch's exporter writes Expand(x, Where(Equal(shape, -1), ones, shape)): all of it folds.
TEST(OnnxOpsConverters, TorchExpandShapeArithmeticFolds) {
  ModelBuilder b(13);
  b.Input("x", {3, 1});
  b.InitInts("shape", {-1, 4});
  b.InitInts("neg", {-1});
  b.InitInts("ones", {1, 1});
  b.Node("Equal", {"shape", "neg"}, {"eq"});
  b.Node("Where", {"eq", "ones", "shape"}, {"s"});
  b.Node("Expand", {"x", "s"}, {"y"});
  b.Output("y", {3, 4});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(3, 4), float32]");
  auto counts = OpCounts(Body(r));
  EXPECT_EQ(counts["broadcast_to"], 1);
  EXPECT_EQ(counts["equal"], 0);
  EXPECT_EQ(counts["where"], 0);
}

TEST(OnnxOpsConverters, ConstantOfShapeSizeAndSplit) {
  ModelBuilder b(13);
  b.Input("x", {2, 6});
  b.InitInts("shape", {2, 3});
  b.Node("ConstantOfShape", {"shape"}, {"z"});
  b.Node("Split", {"x"}, {"a", "b"});
  ModelBuilder::AttrInt(b.graph().mutable_node(1), "axis", 1);
  b.Node("Add", {"a", "z"}, {"s"});
  b.Node("Add", {"s", "b"}, {"y"});
  b.Output("y", {2, 3});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(2, 3), float32]");
  EXPECT_EQ(OpCounts(Body(r))["strided_slice"], 2);
}

TEST(OnnxOpsConverters, LayerNormalizationWithMeanAndInvStdDev) {
  ModelBuilder b(17);
  b.Input("x", {2, 3, 4});
  b.InitFloats("scale", {4}, {1, 1, 1, 1});
  b.InitFloats("bias", {4}, {0, 0, 0, 0});
  b.Node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv"});
  b.Output("y", {2, 3, 4});
  b.Output("mean", {2, 3, 1});
  b.Output("inv", {2, 3, 1});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "(Tensor[(2, 3, 4), float32], Tensor[(2, 3, 1), float32], Tensor[(2, 3, 1), float32])");
}

TEST(OnnxOpsConverters, Conv1DRunsAs2D) {
  ModelBuilder b(11);
  b.Input("x", {1, 2, 10});
  b.InitFloats("w", {4, 2, 3}, std::vector<float>(24, 0.5f));
  auto* n = b.Node("Conv", {"x", "w"}, {"y"});
  ModelBuilder::AttrInts(n, "pads", {1, 1});
  ModelBuilder::AttrInts(n, "strides", {2});
  b.Output("y", {1, 4, 5});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(1, 4, 5), float32]");
  EXPECT_EQ(FindCall(Body(r), "nn.conv2d")->attrs.GetInts("padding"), (std::vector<int64_t>{0, 1, 0, 1}));
}

TEST(OnnxOpsConverters, ClipDefaultBoundsFollowTheDtype) {
  ModelBuilder b(13);
  b.Input("x", {3}, onnx::TensorProto::INT8);
  b.Node("Clip", {"x"}, {"y"});
  b.Output("y", {3}, onnx::TensorProto::INT8);
  ImportResult r = b.Import();
  const CallNode* c = FindCall(Body(r), "clip");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attrs.GetDouble("a_min"), -128.0);
  EXPECT_EQ(c->attrs.GetDouble("a_max"), 127.0);

  ModelBuilder d(13);  // a bound computed at run time becomes maximum / minimum
  d.Input("x", {3});
  d.Input("lo", {});
  d.Node("Clip", {"x", "lo"}, {"y"});
  d.Output("y", {3});
  EXPECT_EQ(OpCounts(Body(d.Import()))["maximum"], 1);
}

TEST(OnnxOpsConverters, PadReflectAndDepthToSpace) {
  ModelBuilder b(13);
  b.Input("x", {1, 8, 2, 3});
  b.InitInts("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  ModelBuilder::AttrString(b.Node("Pad", {"x", "pads"}, {"p"}), "mode", "reflect");
  ModelBuilder::AttrInt(b.Node("DepthToSpace", {"p"}, {"y"}), "blocksize", 2);
  b.Output("y", {1, 2, 8, 10});
  EXPECT_EQ(RetType(b.Import()), "Tensor[(1, 2, 8, 10), float32]");
}

}  // namespace
}  // namespace tessera::frontend
