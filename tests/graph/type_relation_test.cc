// Type relations of the registered ops: shapes, broadcasting, symbolic dims, errors.
#include <gtest/gtest.h>

#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::F32;
using testing::RelType;

std::string TS(const Type& t) { return t->str(); }

TEST(TypeRelation, BroadcastNumpyRules) {
  EXPECT_EQ(TS(RelType("add", {F32({8, 1, 6, 1}), F32({7, 1, 5})})), "Tensor[(8, 7, 6, 5), float32]");
  EXPECT_EQ(TS(RelType("multiply", {F32({1, 8, 28, 28}), F32({8, 1, 1})})), "Tensor[(1, 8, 28, 28), float32]");
  EXPECT_EQ(TS(RelType("subtract", {F32({3}), F32({})})), "Tensor[(3,), float32]");
  // symbolic dims pass through
  EXPECT_EQ(TS(RelType("add", {F32({Dim::Symbolic("n"), 4}), F32({1, 4})})), "Tensor[(n, 4), float32]");
  EXPECT_EQ(TS(RelType("add", {F32({Dim::Symbolic("n"), 4}), F32({Dim::Symbolic("n"), 1})})),
            "Tensor[(n, 4), float32]");
}

TEST(TypeRelation, BroadcastErrors) {
  try {
    RelType("add", {F32({2, 3}), F32({4})});
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("type error in add(Tensor[(2, 3), float32], Tensor[(4,), float32])"), std::string::npos) << m;
    EXPECT_NE(m.find("3 and 4 cannot be broadcast"), std::string::npos) << m;
  }
  Type i64 = TensorTypeNode::make(std::vector<int64_t>{3}, DataType::Int(64));
  EXPECT_THROW(RelType("add", {F32({3}), i64}), UserError);
}

TEST(TypeRelation, Conv2DOutputShape) {
  // 224 + 2*3 - 7 = 223, /2 = 111, +1 = 112
  Attrs a{{"strides", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{3, 3, 3, 3}}};
  EXPECT_EQ(TS(RelType("nn.conv2d", {F32({1, 3, 224, 224}), F32({64, 3, 7, 7})}, a)),
            "Tensor[(1, 64, 112, 112), float32]");
  // dilation 2: effective kernel 5; asymmetric padding [top,left,bottom,right]
  Attrs d{{"dilation", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{0, 1, 2, 3}}};
  EXPECT_EQ(TS(RelType("nn.conv2d", {F32({2, 4, 10, 10}), F32({8, 4, 3, 3})}, d)),
            "Tensor[(2, 8, 8, 10), float32]");
  // depthwise: groups = channels
  Attrs g{{"groups", int64_t{32}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}};
  EXPECT_EQ(TS(RelType("nn.conv2d", {F32({1, 32, 14, 14}), F32({32, 1, 3, 3})}, g)),
            "Tensor[(1, 32, 14, 14), float32]");
  // symbolic batch passes through
  EXPECT_EQ(TS(RelType("nn.conv2d", {F32({Dim::Symbolic("batch"), 1, 5, 5}), F32({2, 1, 3, 3})})),
            "Tensor[(batch, 2, 3, 3), float32]");
}

TEST(TypeRelation, Conv2DErrors) {
  Attrs g{{"groups", int64_t{2}}};
  try {
    RelType("nn.conv2d", {F32({1, 3, 8, 8}), F32({4, 2, 3, 3})}, g);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("input channels 3 != weight in-channels 2 * groups 2"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(RelType("nn.conv2d", {F32({1, 3, 2, 2}), F32({4, 3, 3, 3})}), UserError);  // kernel > input
  Attrs layout{{"data_layout", std::string("NHWC")}};
  EXPECT_THROW(RelType("nn.conv2d", {F32({1, 8, 8, 3}), F32({4, 3, 3, 3})}, layout), UnsupportedError);
}

TEST(TypeRelation, Pooling) {
  Attrs a{{"pool_size", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}};
  EXPECT_EQ(TS(RelType("nn.max_pool2d", {F32({1, 8, 28, 28})}, a)), "Tensor[(1, 8, 13, 13), float32]");
  a.Set("ceil_mode", 1);
  EXPECT_EQ(TS(RelType("nn.max_pool2d", {F32({1, 8, 28, 28})}, a)), "Tensor[(1, 8, 14, 14), float32]");
  // ceil mode drops a last window that would start inside the end padding (PyTorch / ONNX):
  // in 5, pad 1+1, k 2, s 2: ceil(5 / 2) + 1 = 4 windows, but the 4th starts at 6 >= 5 + 1.
  Attrs p{{"pool_size", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
          {"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}};
  EXPECT_EQ(TS(RelType("nn.avg_pool2d", {F32({1, 1, 5, 5})}, p)), "Tensor[(1, 1, 3, 3), float32]");
  EXPECT_EQ(TS(RelType("nn.global_avg_pool2d", {F32({1, 48, 16, 16})})), "Tensor[(1, 48, 1, 1), float32]");
}

TEST(TypeRelation, DenseAndMatmul) {
  EXPECT_EQ(TS(RelType("nn.dense", {F32({4, 16}), F32({10, 16})})), "Tensor[(4, 10), float32]");
  EXPECT_THROW(RelType("nn.dense", {F32({4, 16}), F32({10, 15})}), UserError);
  EXPECT_EQ(TS(RelType("nn.matmul", {F32({2, 3}), F32({3, 5})})), "Tensor[(2, 5), float32]");
  EXPECT_EQ(TS(RelType("nn.matmul", {F32({7, 1, 2, 3}), F32({4, 3, 5})})), "Tensor[(7, 4, 2, 5), float32]");
  EXPECT_EQ(TS(RelType("nn.matmul", {F32({3}), F32({2, 3, 5})})), "Tensor[(2, 5), float32]");
  EXPECT_EQ(TS(RelType("nn.matmul", {F32({2, 3}), F32({3})})), "Tensor[(2,), float32]");
  try {
    RelType("nn.matmul", {F32({2, 3}), F32({4, 5})});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("reduction extents differ"), std::string::npos) << e.what();
  }
  EXPECT_EQ(TS(RelType("nn.batch_matmul", {F32({1, 2, 3}), F32({4, 5, 3})})), "Tensor[(4, 2, 5), float32]");
}

TEST(TypeRelation, ReshapeTransposeConcat) {
  Attrs r{{"newshape", std::vector<int64_t>{2, -1}}};
  EXPECT_EQ(TS(RelType("reshape", {F32({2, 3, 4})}, r)), "Tensor[(2, 12), float32]");
  Attrs bad{{"newshape", std::vector<int64_t>{5, 5}}};
  EXPECT_THROW(RelType("reshape", {F32({2, 3, 4})}, bad), UserError);
  Attrs t{{"axes", std::vector<int64_t>{0, 2, 3, 1}}};
  EXPECT_EQ(TS(RelType("transpose", {F32({1, 3, 4, 5})}, t)), "Tensor[(1, 4, 5, 3), float32]");
  EXPECT_EQ(TS(RelType("transpose", {F32({1, 3, 4})})), "Tensor[(4, 3, 1), float32]");

  Type tup = TupleTypeNode::make({F32({1, 2, 4}), F32({1, 3, 4})});
  EXPECT_EQ(TS(RelType("concatenate", {tup}, Attrs{{"axis", int64_t{1}}})), "Tensor[(1, 5, 4), float32]");
  Type bad_tup = TupleTypeNode::make({F32({1, 2, 4}), F32({1, 3, 5})});
  try {
    RelType("concatenate", {bad_tup}, Attrs{{"axis", int64_t{1}}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("in dimension 2"), std::string::npos) << e.what();
  }
}

TEST(TypeRelation, TakeSliceExpandSqueeze) {
  Type idx = TensorTypeNode::make(std::vector<int64_t>{2, 3}, DataType::Int(64));
  EXPECT_EQ(TS(RelType("take", {F32({5, 6, 7}), idx}, Attrs{{"axis", int64_t{1}}})),
            "Tensor[(5, 2, 3, 7), float32]");
  Attrs s{{"begin", std::vector<int64_t>{1, -3}}, {"end", std::vector<int64_t>{INT64_MAX, -1}},
          {"strides", std::vector<int64_t>{2, 1}}, {"axes", std::vector<int64_t>{0, 2}}};
  EXPECT_EQ(TS(RelType("strided_slice", {F32({6, 4, 8})}, s)), "Tensor[(3, 4, 2), float32]");
  Attrs rev{{"begin", std::vector<int64_t>{-1}}, {"end", std::vector<int64_t>{INT64_MIN}},
            {"strides", std::vector<int64_t>{-1}}};
  EXPECT_EQ(TS(RelType("strided_slice", {F32({5})}, rev)), "Tensor[(5,), float32]");
  EXPECT_EQ(TS(RelType("expand_dims", {F32({3, 4})}, Attrs{{"axis", int64_t{-1}}, {"num_newaxis", int64_t{2}}})),
            "Tensor[(3, 4, 1, 1), float32]");
  EXPECT_EQ(TS(RelType("squeeze", {F32({1, 3, 1, 4})})), "Tensor[(3, 4), float32]");
  EXPECT_EQ(TS(RelType("squeeze", {F32({1, 3, 1, 4})}, Attrs{{"axis", std::vector<int64_t>{2}}})),
            "Tensor[(1, 3, 4), float32]");
  EXPECT_THROW(RelType("squeeze", {F32({1, 3})}, Attrs{{"axis", std::vector<int64_t>{1}}}), UserError);
}

TEST(TypeRelation, ElementwiseBatchNormSoftmaxReduce) {
  EXPECT_EQ(TS(RelType("cast", {F32({2})}, Attrs{{"dtype", std::string("int64")}})), "Tensor[(2,), int64]");
  EXPECT_EQ(TS(RelType("clip", {F32({2})}, Attrs{{"a_min", 0.0}, {"a_max", 6.0}})), "Tensor[(2,), float32]");
  EXPECT_EQ(TS(RelType("nn.batch_norm", {F32({1, 16, 4, 4}), F32({16}), F32({16}), F32({16}), F32({16})},
                       Attrs{{"axis", int64_t{1}}, {"epsilon", 1e-5}})),
            "Tensor[(1, 16, 4, 4), float32]");
  EXPECT_THROW(RelType("nn.batch_norm", {F32({1, 16, 4, 4}), F32({8}), F32({16}), F32({16}), F32({16})}),
               UserError);
  EXPECT_EQ(TS(RelType("nn.softmax", {F32({1, 4420, 2})}, Attrs{{"axis", int64_t{2}}})),
            "Tensor[(1, 4420, 2), float32]");
  EXPECT_THROW(RelType("nn.softmax", {F32({2, 2})}, Attrs{{"axis", int64_t{2}}}), UserError);
  EXPECT_EQ(TS(RelType("mean", {F32({2, 3, 4})}, Attrs{{"axis", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}})),
            "Tensor[(2, 1, 4), float32]");
  EXPECT_EQ(TS(RelType("sum", {F32({2, 3, 4})})), "Tensor[(), float32]");
}

TEST(OpRegistry, PatternsAndCompute) {
  OpRegistry& r = OpRegistry::Global();
  EXPECT_EQ(r.Get("nn.conv2d").pattern, kOutEWiseFusable);
  EXPECT_EQ(r.Get("add").pattern, kBroadcast);
  EXPECT_EQ(r.Get("nn.relu").pattern, kElemWise);
  EXPECT_EQ(r.Get("reshape").pattern, kInjective);
  EXPECT_EQ(r.Get("sum").pattern, kCommReduce);
  EXPECT_EQ(r.Get("nn.softmax").pattern, kOpaque);
  EXPECT_FALSE(r.GetCompute("exp"));
  // (a real FCompute needs te::Tensor; the topi layer's tests set them)
  EXPECT_THROW(r.SetCompute("nn.no_such_op", FCompute{}), InternalError);
  EXPECT_THROW(r.Get("nn.no_such_op"), InternalError);
  EXPECT_THROW(CallNode::make(OpNode::Get("add"), {testing::ConstF32({1})}), InternalError);  // arity
}

}  // namespace
}  // namespace tessera::graph
