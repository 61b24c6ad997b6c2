// Dynamic shapes at import: symbolic dims kept (ImportOptions::keep_symbolic_dims, input_shapes
// with -1) and shape values with symbolic entries (src/frontend/onnx/symbolic_shape.h).
#include <gtest/gtest.h>

#include "onnx_builder.h"
#include "tessera/support/error.h"

namespace tessera::frontend {
namespace {

using testing::Body;
using testing::FindCall;
using testing::ModelBuilder;
using testing::OpCounts;
using testing::RetType;

ImportOptions Dynamic() {
  ImportOptions o;
  o.keep_symbolic_dims = true;
  return o;
}

// A scalar int64 Constant node.
void ScalarConst(ModelBuilder& b, const std::string& name, int64_t v) {
  auto* a = b.Node("Constant", {}, {name})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(v);
}

TEST(SymbolicImport, KeepsTheModelsDimNames) {
  ModelBuilder b(13);
  b.Input("x", {-1, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {-1, 3});
  ImportResult r = b.Import(Dynamic());
  EXPECT_TRUE(r.bound_dims.empty());
  EXPECT_EQ(RetType(r), "Tensor[(batch_size, 3), float32]");
  EXPECT_EQ(r.input_types[0]->str(), "Tensor[(batch_size, 3), float32]");
}

TEST(SymbolicImport, InputShapesWithMinusOneNameTheSymbol) {
  ModelBuilder b(13);
  b.Input("a", {2, 3});  // static declaration: a -1 contradicts it
  b.Input("x", {-1, 3});
  b.Input("z", {-1, 3});
  b.Node("Add", {"x", "z"}, {"s"});
  b.Node("Relu", {"a"}, {"y"});
  b.Output("s", {-1, 3});
  b.Output("y", {2, 3});
  ImportOptions o;
  o.input_shapes["x"] = {-1, 3};
  o.input_shapes["z"] = {-1, 3};
  o.input_dim_names["x"][0] = "rows";
  o.input_dim_names["z"][0] = "rows";
  ImportResult r = b.Import(o);
  EXPECT_EQ(r.input_types[1]->str(), "Tensor[(rows, 3), float32]");
  EXPECT_EQ(r.module.main()->ret_type->str(), "(Tensor[(rows, 3), float32], Tensor[(2, 3), float32])");
  ImportOptions bad;
  bad.input_shapes["a"] = {-1, 3};
  EXPECT_THROW(b.Import(bad), UserError);
}

TEST(SymbolicImport, OddDimNamesBecomeSymbolNames) {
  ModelBuilder b(13);
  b.Input("x", {-1, 3});
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
      "2 * batch");
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {-1, 3});
  EXPECT_EQ(b.Import(Dynamic()).input_types[0]->str(), "Tensor[(_2___batch, 3), float32]");
}

// y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), Unsqueeze(Gather(Shape(x), 1)), [4, 8])):
// the exporter's view(b, s, 4, 8) of x [b, s, 32].
TEST(SymbolicImport, ShapeArithmeticReachesReshape) {
  ModelBuilder b(13);
  b.Input("x", {1, -1, 32});
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("seq");
  b.Node("Shape", {"x"}, {"s"});
  ScalarConst(b, "i0", 0);
  ScalarConst(b, "i1", 1);
  ModelBuilder::AttrInt(b.Node("Gather", {"s", "i0"}, {"d0"}), "axis", 0);
  ModelBuilder::AttrInt(b.Node("Gather", {"s", "i1"}, {"d1"}), "axis", 0);
  b.InitInts("axes", {0});
  b.Node("Unsqueeze", {"d0", "axes"}, {"u0"});
  b.Node("Unsqueeze", {"d1", "axes"}, {"u1"});
  b.InitInts("tail", {4, 8});
  ModelBuilder::AttrInt(b.Node("Concat", {"u0", "u1", "tail"}, {"shape"}), "axis", 0);
  b.Node("Reshape", {"x", "shape"}, {"y"});
  // Back: [1, seq, 32] with a -1 that infers the symbol.
  b.InitInts("back", {1, -1, 32});
  b.Node("Reshape", {"y", "back"}, {"z"});
  b.Output("z", {1, -1, 32});
  ImportResult r = b.Import(Dynamic());
  EXPECT_EQ(RetType(r), "Tensor[(1, seq, 32), float32]");
  EXPECT_EQ(OpCounts(Body(r)), (std::map<std::string, int>{{"reshape", 2}}));  // the shape arithmetic folded
  const graph::CallNode* inner = FindCall(Body(r)->as<graph::CallNode>()->args[0], "reshape");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->checked_type()->str(), "Tensor[(1, seq, 4, 8), float32]");
  EXPECT_EQ(inner->attrs.GetString("symbols"), "seq");
}

TEST(SymbolicImport, AMinusOneBesideASymbolReshapesToTheRest) {
  // x.view(x.shape[0], -1) of x [batch, 4, 8]: Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]).
  ModelBuilder b(13);
  b.Input("x", {-1, 4, 8});
  b.Node("Shape", {"x"}, {"s"});
  ScalarConst(b, "i0", 0);
  ModelBuilder::AttrInt(b.Node("Gather", {"s", "i0"}, {"d0"}), "axis", 0);
  b.InitInts("axes", {0});
  b.Node("Unsqueeze", {"d0", "axes"}, {"u0"});
  b.InitInts("rest", {-1});
  ModelBuilder::AttrInt(b.Node("Concat", {"u0", "rest"}, {"shape"}), "axis", 0);
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", {-1, 32});
  EXPECT_EQ(RetType(b.Import(Dynamic())), "Tensor[(batch_size, 32), float32]");
}

TEST(SymbolicImport, RangeToASymbolicDimIsAnArange) {
  ModelBuilder b(13);
  b.Input("ids", {1, -1}, onnx::TensorProto::INT64);
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("seq");
  b.Node("Shape", {"ids"}, {"s"});
  ScalarConst(b, "i1", 1);
  ModelBuilder::AttrInt(b.Node("Gather", {"s", "i1"}, {"n"}), "axis", 0);
  auto* cast = b.Node("Cast", {"n"}, {"nf"});
  ModelBuilder::AttrInt(cast, "to", onnx::TensorProto::INT64);
  ScalarConst(b, "zero", 0);
  ScalarConst(b, "one", 1);
  b.Node("Range", {"zero", "nf", "one"}, {"pos"});
  b.Output("pos", {-1}, onnx::TensorProto::INT64);
  ImportResult r = b.Import(Dynamic());
  EXPECT_EQ(RetType(r), "Tensor[(seq,), int64]");
  const graph::CallNode* a = FindCall(Body(r), "arange");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->attrs.GetInt("axis"), 1);

  ModelBuilder from_two(13);  // Range(2, seq, 1) has seq - 2 elements: a dim expression
  from_two.graph() = b.graph();
  from_two.graph().mutable_node(4)->mutable_attribute(0)->mutable_t()->set_int64_data(0, 2);
  EXPECT_THROW(from_two.Import(Dynamic()), UnsupportedError);
}

TEST(SymbolicImport, AShapeValueUsedAsDataIsReadAtRunTime) {
  // Shape(x) + Shape(x) of x [batch_size, 3]: the shape value feeds arithmetic, so it becomes a tensor
  // at run time: the symbolic dim through vm.shape_of(x) (the VM's ShapeOf), the static one a constant.
  ModelBuilder b(13);
  b.Input("x", {-1, 3});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Add", {"s", "s"}, {"y"}, "add_shapes");
  b.Output("y", {2}, onnx::TensorProto::INT64);
  const ImportResult r = b.Import(Dynamic());
  EXPECT_EQ(RetType(r), "Tensor[(2,), int64]");
  EXPECT_EQ(OpCounts(Body(r))["vm.shape_of"], 1);
  const graph::CallNode* shape_of = FindCall(Body(r), "vm.shape_of");
  ASSERT_NE(shape_of, nullptr);
  EXPECT_EQ(shape_of->args[0].get(), r.module.main()->params[0].get());
}

TEST(SymbolicImport, ReshapeThatNeedsADimExpressionIsUnsupported) {
  ModelBuilder b(13);
  b.Input("x", {-1, 4});
  b.InitInts("flat", {-1});  // batch_size * 4 elements: no single symbol
  b.Node("Reshape", {"x", "flat"}, {"y"});
  b.Output("y", {-1});
  EXPECT_THROW(b.Import(Dynamic()), UnsupportedError);
}

TEST(SymbolicImport, AReshapeToARunTimeShapeGetsOneSymbolPerEntry) {
  ModelBuilder b(14);
  b.Input("x", {2, 3, 4});
  b.Input("s", {3}, onnx::TensorProto::INT64);
  b.Node("Reshape", {"x", "s"}, {"out/y"}, "r");
  b.Output("out/y", {});
  ImportResult r = b.Import();
  EXPECT_EQ(RetType(r), "Tensor[(out_y_0, out_y_1, out_y_2), float32]");
  const graph::CallNode* view = FindCall(Body(r), "vm.reshape");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->attrs.GetString("symbols"), "out_y_0,out_y_1,out_y_2");
  EXPECT_NE(FindCall(Body(r), "vm.reshape_shape"), nullptr);  // the shape function resolving 0 and -1

  ModelBuilder f(14);  // a run-time shape that is no 1-D int64 tensor is the model's error
  f.Input("x", {2, 3, 4});
  f.Input("s", {3}, onnx::TensorProto::INT32);
  f.Node("Reshape", {"x", "s"}, {"y"});
  f.Output("y", {});
  EXPECT_THROW(f.Import(), UserError);
}

}  // namespace
}  // namespace tessera::frontend
