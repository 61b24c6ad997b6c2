// Per-converter tests on small ONNX models built in the test.
#include <gtest/gtest.h>

#include "onnx_builder.h"
#include "tessera/graph/printer.h"
#include "tessera/support/error.h"

namespace tessera::frontend {
namespace {

using graph::CallNode;
using testing::FindCall;
using testing::ModelBuilder;
using testing::OpCounts;

using testing::Body;
using testing::RetType;

TEST(Converters, ReshapeZeroAndMinusOne) {
  ModelBuilder b(14);
  b.Input("x", {2, 3, 4});
  b.InitInts("shape", {0, -1});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", {2, 12});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(2, 12), float32]");
  EXPECT_EQ(FindCall(Body(r), "reshape")->attrs.GetInts("newshape"), (std::vector<int64_t>{2, 12}));
}

TEST(Converters, ReshapeAllowZeroAndOpset1Attr) {
  ModelBuilder b(14);
  b.Input("x", {0, 3});
  b.InitInts("shape", {3, 0});
  ModelBuilder::AttrInt(b.Node("Reshape", {"x", "shape"}, {"y"}), "allowzero", 1);
  b.Output("y", {3, 0});
  EXPECT_EQ(RetType(b.Import()), "Tensor[(3, 0), float32]");

  ModelBuilder old(1);
  old.Input("x", {2, 6});
  ModelBuilder::AttrInts(old.Node("Reshape", {"x"}, {"y"}), "shape", {3, -1});
  old.Output("y", {3, 4});
  EXPECT_EQ(RetType(old.Import()), "Tensor[(3, 4), float32]");
}

TEST(Converters, ReshapeWithRuntimeShapeIsADataDependentView) {
  // A shape computed at run time: a shape function and a view whose dims the VM binds
  // (symbolic_shape_test.cc has the details).
  ModelBuilder b(13);
  b.Input("x", {2, 3});
  b.Input("s", {2}, onnx::TensorProto::INT64);
  b.Node("Reshape", {"x", "s"}, {"y"}, "r");
  b.Output("y", {});
  EXPECT_EQ(RetType(b.Import()), "Tensor[(y_0, y_1), float32]");
}

TEST(Converters, SoftmaxOpset11FlattensOpset13DoesNot) {
  for (int64_t opset : {11, 13}) {
    ModelBuilder b(opset);
    b.Input("x", {2, 3, 4});
    ModelBuilder::AttrInt(b.Node("Softmax", {"x"}, {"y"}), "axis", 1);
    b.Output("y", {2, 3, 4});
    ImportResult r = b.Import();
    EXPECT_EQ(RetType(r), "Tensor[(2, 3, 4), float32]");
    const CallNode* sm = FindCall(Body(r), "nn.softmax");
    ASSERT_TRUE(sm);
    if (opset == 11) {
      // coerced to 2-D [2, 12], softmax over the rows, reshaped back
      EXPECT_EQ(OpCounts(Body(r))["reshape"], 2);
      EXPECT_EQ(sm->checked_type()->str(), "Tensor[(2, 12), float32]");
      EXPECT_EQ(sm->attrs.GetInt("axis"), 1);
    } else {
      EXPECT_EQ(OpCounts(Body(r))["reshape"], 0);
      EXPECT_EQ(sm->attrs.GetInt("axis"), 1);
    }
  }
  // opset 11 with the default axis on a 2-D input is a plain last-axis softmax
  ModelBuilder d(11);
  d.Input("x", {2, 5});
  d.Node("Softmax", {"x"}, {"y"});
  d.Output("y", {2, 5});
  EXPECT_EQ(OpCounts(Body(d.Import()))["reshape"], 0);
}

TEST(Converters, ClipOpset6AttrsVsOpset11Inputs) {
  ModelBuilder a(6);
  a.Input("x", {4});
  auto* n = a.Node("Clip", {"x"}, {"y"});
  ModelBuilder::AttrFloat(n, "min", 0.f);
  ModelBuilder::AttrFloat(n, "max", 6.f);
  a.Output("y", {4});
  ImportResult ra = a.Import();  // keeps the nodes alive while `c` points into them
  const CallNode* c = FindCall(Body(ra), "clip");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attrs.GetDouble("a_min"), 0.0);
  EXPECT_EQ(c->attrs.GetDouble("a_max"), 6.0);

  ModelBuilder b(11);
  b.Input("x", {4});
  b.InitFloats("lo", {}, {-1.f});
  b.InitFloats("hi", {}, {1.5f});
  b.Node("Clip", {"x", "lo", "hi"}, {"y"});
  b.Output("y", {4});
  ImportResult rb = b.Import();
  c = FindCall(Body(rb), "clip");
  EXPECT_EQ(c->attrs.GetDouble("a_min"), -1.0);
  EXPECT_EQ(c->attrs.GetDouble("a_max"), 1.5);

  ModelBuilder onlymax(13);  // min absent (empty name)
  onlymax.Input("x", {4});
  onlymax.InitFloats("hi", {}, {2.f});
  onlymax.Node("Clip", {"x", "", "hi"}, {"y"});
  onlymax.Output("y", {4});
  ImportResult rm = onlymax.Import();
  c = FindCall(Body(rm), "clip");
  EXPECT_LT(c->attrs.GetDouble("a_min"), -1e30);
  EXPECT_EQ(c->attrs.GetDouble("a_max"), 2.0);
}

TEST(Converters, GemmTransBAlphaBeta) {
  ModelBuilder b(11);
  b.Input("a", {2, 3});
  b.InitFloats("w", {4, 3}, std::vector<float>(12, 1.f));
  b.InitFloats("c", {4}, {1, 2, 3, 4});
  auto* n = b.Node("Gemm", {"a", "w", "c"}, {"y"});
  ModelBuilder::AttrInt(n, "transB", 1);
  ModelBuilder::AttrFloat(n, "alpha", 2.f);
  ModelBuilder::AttrFloat(n, "beta", 0.5f);
  b.Output("y", {2, 4});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(2, 4), float32]");
  auto ops = OpCounts(Body(r));
  EXPECT_EQ(ops["nn.dense"], 1);
  EXPECT_EQ(ops["multiply"], 2);  // alpha and beta
  EXPECT_EQ(ops["add"], 1);

  ModelBuilder t(11);  // transA, no transB: B [3, 4] constant is transposed at import for dense
  t.Input("a", {3, 2});
  t.InitFloats("w", {3, 4}, std::vector<float>(12, 1.f));
  ModelBuilder::AttrInt(t.Node("Gemm", {"a", "w"}, {"y"}), "transA", 1);
  t.Output("y", {2, 4});
  ImportResult rt = t.Import();
  EXPECT_EQ(RetType(rt), "Tensor[(2, 4), float32]");
  EXPECT_EQ(OpCounts(Body(rt))["transpose"], 1);
}

TEST(Converters, ConvAutoPadGroupAndBias) {
  ModelBuilder b(11);
  b.Input("x", {1, 4, 7, 7});
  b.InitFloats("w", {8, 2, 3, 3}, std::vector<float>(144, 0.f));
  b.InitFloats("bias", {8}, std::vector<float>(8, 0.f));
  auto* n = b.Node("Conv", {"x", "w", "bias"}, {"y"});
  ModelBuilder::AttrString(n, "auto_pad", "SAME_UPPER");
  ModelBuilder::AttrInt(n, "group", 2);
  ModelBuilder::AttrInts(n, "strides", {2, 2});
  b.Output("y", {1, 8, 4, 4});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(1, 8, 4, 4), float32]");
  const CallNode* c = FindCall(Body(r), "nn.conv2d");
  EXPECT_EQ(c->attrs.GetInts("padding"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(c->attrs.GetInt("groups"), 2);
  EXPECT_EQ(OpCounts(Body(r))["nn.bias_add"], 1);
}

TEST(Converters, MaxPoolCeilModeAndPads) {
  ModelBuilder b(10);
  b.Input("x", {1, 1, 5, 5});
  auto* n = b.Node("MaxPool", {"x"}, {"y"});
  ModelBuilder::AttrInts(n, "kernel_shape", {2, 2});
  ModelBuilder::AttrInts(n, "strides", {2, 2});
  ModelBuilder::AttrInt(n, "ceil_mode", 1);
  b.Output("y", {1, 1, 3, 3});
  EXPECT_EQ(RetType(b.Import()), "Tensor[(1, 1, 3, 3), float32]");
}

TEST(Converters, ShapeGatherUnsqueezeConcatFoldIntoReshape) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))  (opset 9: Unsqueeze axes attr)
  ModelBuilder b(9);
  b.Input("x", {3, 2, 2});
  b.Node("Shape", {"x"}, {"s"});
  auto* idx = b.Node("Constant", {}, {"i0"});
  auto* a = idx->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(0);  // a scalar
  ModelBuilder::AttrInt(b.Node("Gather", {"s", "i0"}, {"n"}), "axis", 0);
  ModelBuilder::AttrInts(b.Node("Unsqueeze", {"n"}, {"n1"}), "axes", {0});
  b.InitInts("minus1", {-1});
  ModelBuilder::AttrInt(b.Node("Concat", {"n1", "minus1"}, {"shape"}), "axis", 0);
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", {3, 4});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(3, 4), float32]");
  auto ops = OpCounts(Body(r));
  EXPECT_EQ(ops.size(), 1u);  // only the reshape remains
  EXPECT_EQ(ops["reshape"], 1);
}

TEST(Converters, UnsqueezeSqueezeSliceVersions) {
  ModelBuilder u(13);  // axes as input, negative axis counts in the output rank
  u.Input("x", {3, 4});
  u.InitInts("axes", {0, -1});
  u.Node("Unsqueeze", {"x", "axes"}, {"y"});
  u.Output("y", {1, 3, 4, 1});
  EXPECT_EQ(RetType(u.Import()), "Tensor[(1, 3, 4, 1), float32]");

  ModelBuilder s(11);
  s.Input("x", {1, 3, 1});
  ModelBuilder::AttrInts(s.Node("Squeeze", {"x"}, {"y"}), "axes", {-1});
  s.Output("y", {1, 3});
  EXPECT_EQ(RetType(s.Import()), "Tensor[(1, 3), float32]");

  ModelBuilder s1(1);  // Slice-1: attrs
  s1.Input("x", {4, 6});
  auto* n = s1.Node("Slice", {"x"}, {"y"});
  ModelBuilder::AttrInts(n, "starts", {1});
  ModelBuilder::AttrInts(n, "ends", {1000});
  ModelBuilder::AttrInts(n, "axes", {1});
  s1.Output("y", {4, 5});
  EXPECT_EQ(RetType(s1.Import()), "Tensor[(4, 5), float32]");

  ModelBuilder s10(13);  // Slice-10+: inputs with steps
  s10.Input("x", {4, 6});
  s10.InitInts("st", {-1});
  s10.InitInts("en", {-100});
  s10.InitInts("ax", {0});
  s10.InitInts("sp", {-2});
  s10.Node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"});
  s10.Output("y", {2, 6});
  EXPECT_EQ(RetType(s10.Import()), "Tensor[(2, 6), float32]");
}

TEST(Converters, ConstantFoldingOfIntegerArithmetic) {
  ModelBuilder b(13);
  b.Input("x", {2, 3, 4});
  b.Node("Shape", {"x"}, {"s"});
  b.InitInts("two", {2});
  b.InitInts("start", {1});
  b.InitInts("end", {3});
  b.Node("Slice", {"s", "start", "end"}, {"hw"});         // [3, 4]
  b.Node("Mul", {"hw", "two"}, {"hw2"});                  // [6, 8]
  b.Node("Div", {"hw2", "two"}, {"hw3"});                 // [3, 4]
  b.InitInts("lead", {2});
  ModelBuilder::AttrInt(b.Node("Concat", {"lead", "hw3"}, {"shape"}), "axis", 0);
  auto* c = b.Node("Cast", {"shape"}, {"shape64"});
  ModelBuilder::AttrInt(c, "to", onnx::TensorProto::INT64);
  b.Node("Reshape", {"x", "shape64"}, {"y"});
  b.Output("y", {2, 3, 4});
  ImportResult r = b.Import();
  EXPECT_EQ(FindCall(Body(r), "reshape")->attrs.GetInts("newshape"), (std::vector<int64_t>{2, 3, 4}));
}

TEST(Converters, ElementwiseAndMisc) {
  ModelBuilder b(14);
  b.Input("x", {1, 8, 4, 4});
  b.InitFloats("k", {8, 1, 1}, std::vector<float>(8, 2.f));
  b.Node("Mul", {"x", "k"}, {"m"});
  b.Node("HardSwish", {"m"}, {"h"});
  ModelBuilder::AttrFloat(b.Node("HardSigmoid", {"h"}, {"hs"}), "alpha", 1.f / 6);
  b.Node("Sigmoid", {"hs"}, {"s"});
  b.Node("Exp", {"s"}, {"e"});
  b.Node("Dropout", {"e"}, {"d"});
  b.Node("Identity", {"d"}, {"i"});
  b.Node("GlobalAveragePool", {"i"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  ModelBuilder::AttrInts(b.Node("Transpose", {"f"}, {"t"}), "perm", {1, 0});
  b.Output("t", {8, 1});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(8, 1), float32]");
  auto ops = OpCounts(Body(r));
  EXPECT_EQ(ops["multiply"], 1);
  EXPECT_EQ(ops["hard_swish"], 1);
  EXPECT_EQ(ops["hard_sigmoid"], 1);
  EXPECT_EQ(ops["nn.global_avg_pool2d"], 1);
  EXPECT_EQ(ops["reshape"], 1);
  EXPECT_NEAR(FindCall(Body(r), "hard_sigmoid")->attrs.GetDouble("alpha"), 1.0 / 6, 1e-7);
  EXPECT_DOUBLE_EQ(FindCall(Body(r), "hard_sigmoid")->attrs.GetDouble("beta"), 0.5);
}

TEST(Converters, BatchNormAndConcatAndGather) {
  ModelBuilder b(9);
  b.Input("x", {1, 2, 3, 3});
  for (const char* p : {"g", "b", "m", "v"}) b.InitFloats(p, {2}, {1.f, 1.f});
  ModelBuilder::AttrFloat(b.Node("BatchNormalization", {"x", "g", "b", "m", "v"}, {"bn"}), "epsilon", 1e-3f);
  ModelBuilder::AttrInt(b.Node("Concat", {"bn", "x"}, {"c"}), "axis", 1);
  b.InitInts("idx", {3, 0});
  ModelBuilder::AttrInt(b.Node("Gather", {"c", "idx"}, {"y"}), "axis", 1);
  b.Output("y", {1, 2, 3, 3});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(1, 2, 3, 3), float32]");
  EXPECT_NEAR(FindCall(Body(r), "nn.batch_norm")->attrs.GetDouble("epsilon"), 1e-3, 1e-9);
  EXPECT_EQ(OpCounts(Body(r))["concatenate"], 1);
  EXPECT_EQ(FindCall(Body(r), "take")->attrs.GetString("mode"), "wrap");
}

TEST(Converters, ConstantValueVariantsAndConstantOutput) {
  ModelBuilder b(13);
  b.Input("x", {3});
  auto* n = b.Node("Constant", {}, {"c"});
  auto* a = n->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : {1.f, 2.f, 3.f}) a->add_floats(f);
  b.Node("Add", {"x", "c"}, {"y"});
  b.Output("y", {3});
  EXPECT_EQ(RetType(b.Import()), "Tensor[(3,), float32]");
}

TEST(Converters, SymbolicBatchBinding) {
  ModelBuilder b(13);
  b.Input("x", {-1, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {-1, 3});
  ImportResult r = b.Import();
  EXPECT_EQ(r.bound_dims.at("batch_size"), 1);
  EXPECT_EQ(RetType(r), "Tensor[(1, 3), float32]");
  EXPECT_TRUE(graph::StructuralEqual(r.declared_output_types[0], r.module.main()->ret_type));
  ImportOptions opts;
  opts.input_shapes["x"] = {5, 3};
  EXPECT_EQ(RetType(b.Import(opts)), "Tensor[(5, 3), float32]");
  opts.input_shapes["x"] = {5, 4};
  EXPECT_THROW(b.Import(opts), UserError);  // contradicts the declared 3
  ImportOptions unknown;
  unknown.input_shapes["nope"] = {1};
  EXPECT_THROW(b.Import(unknown), UserError);
}

}  // namespace
}  // namespace tessera::frontend
