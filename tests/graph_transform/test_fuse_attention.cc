// FuseAttention: IR before -> IR expected after (printed text of hand-built modules) for the
// forms exporters write (a scale by multiply or divide on either side, an additive mask or bias,
// batch_matmul with a transposed key or value), and the graphs it must leave alone.
#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_attention.h"
#include "tessera/support/error.h"
#include "graph_test_util.h"

namespace tessera::graph {
namespace {

using testing::Call;
using testing::F32;
using testing::Main;
using testing::Text;
using testing::Values;

Expr Softmax(Expr x, int64_t axis = -1) { return Call("nn.softmax", {std::move(x)}, Attrs{{"axis", axis}}); }
Expr Attention(std::vector<Expr> args, double scale) { return Call("nn.attention", std::move(args), Attrs{{"scale", scale}}); }

struct Operands {
  Var q = VarNode::make("q", F32({1, 4, 10, 8}));
  Var kt = VarNode::make("kt", F32({1, 4, 8, 12}));
  Var v = VarNode::make("v", F32({1, 4, 12, 6}));
  Var mask = VarNode::make("mask", F32({1, 1, 1, 12}));
};

TEST(FuseAttention, ScaledScoresSoftmaxAndValuesBecomeOneCall) {
  Operands o;
  // Whisper: scores * 0.5 (constant on the right); softmax over axis 3 (the last).
  Expr s = Call("multiply", {Call("nn.matmul", {o.q, o.kt}), Values({}, {0.5f})});
  IRModule before = Main({o.q, o.kt, o.v}, Call("nn.matmul", {Softmax(s, 3), o.v}));
  EXPECT_EQ(Text(transform::FuseAttention(before)), Text(Main({o.q, o.kt, o.v}, Attention({o.q, o.kt, o.v}, 0.5))));
  // The constant on the left, shaped [1, 1]: the same scale.
  Expr s2 = Call("multiply", {Values({1, 1}, {0.25f}), Call("nn.matmul", {o.q, o.kt})});
  IRModule left = Main({o.q, o.kt, o.v}, Call("nn.matmul", {Softmax(s2), o.v}));
  EXPECT_EQ(Text(transform::FuseAttention(left)), Text(Main({o.q, o.kt, o.v}, Attention({o.q, o.kt, o.v}, 0.25))));
  // No scale at all.
  IRModule plain = Main({o.q, o.kt, o.v}, Call("nn.matmul", {Softmax(Call("nn.matmul", {o.q, o.kt})), o.v}));
  EXPECT_EQ(Text(transform::FuseAttention(plain)), Text(Main({o.q, o.kt, o.v}, Attention({o.q, o.kt, o.v}, 1.0))));
}

TEST(FuseAttention, ADividedScoreWithAnAdditiveMaskKeepsTheMaskAsTheBias) {
  Operands o;
  // BERT: scores / 8 + mask [1, 1, 1, N]; the mask on either side of the add.
  for (bool mask_first : {false, true}) {
    Expr scaled = Call("divide", {Call("nn.matmul", {o.q, o.kt}), Values({}, {8.f})});
    Expr masked = mask_first ? Call("add", {o.mask, scaled}) : Call("add", {scaled, o.mask});
    IRModule before = Main({o.q, o.kt, o.v, o.mask}, Call("nn.matmul", {Softmax(masked), o.v}));
    EXPECT_EQ(Text(transform::FuseAttention(before)),
              Text(Main({o.q, o.kt, o.v, o.mask}, Attention({o.q, o.kt, o.v, o.mask}, 0.125))));
  }
}

TEST(FuseAttention, BatchMatmulsWithATransposedKeyOrValueGetTheTransposeAsAnOperand) {
  Var q = VarNode::make("q", F32({6, 10, 8}));
  Var k = VarNode::make("k", F32({6, 12, 8}));   // [batch, N, D]: batch_matmul(q, k, transpose_b=1)
  Var vt = VarNode::make("vt", F32({6, 5, 12}));  // [batch, Dv, N]: batch_matmul(p, vt, transpose_b=1)
  Attrs tb{{"transpose_a", int64_t{0}}, {"transpose_b", int64_t{1}}};
  Expr s = Call("multiply", {Call("nn.batch_matmul", {q, k}, tb), Values({}, {0.5f})});
  IRModule before = Main({q, k, vt}, Call("nn.batch_matmul", {Softmax(s, 2), vt}, tb));
  Attrs swap{{"axes", std::vector<int64_t>{0, 2, 1}}};
  Expr want = Attention({q, Call("transpose", {k}, swap), Call("transpose", {vt}, swap)}, 0.5);
  EXPECT_EQ(Text(transform::FuseAttention(before)), Text(Main({q, k, vt}, want)));
}

TEST(FuseAttention, GraphsThatAreNotExactlyAttentionAreLeftAlone) {
  Operands o;
  auto unchanged = [](const IRModule& m, const char* what) {
    EXPECT_EQ(Text(transform::FuseAttention(m)), Text(m)) << what;
  };
  Expr scores = Call("nn.matmul", {o.q, o.kt});
  // The probabilities are also a result (attention weights returned by the model).
  Expr p = Softmax(scores);
  unchanged(Main({o.q, o.kt, o.v}, TupleNode::make({Call("nn.matmul", {p, o.v}), p})), "probabilities used twice");
  // The scores are read by something else too.
  Expr s2 = Call("nn.matmul", {o.q, o.kt});
  unchanged(Main({o.q, o.kt, o.v}, TupleNode::make({Call("nn.matmul", {Softmax(s2), o.v}), s2})), "scores used twice");
  // Softmax over another axis.
  unchanged(Main({o.q, o.kt, o.v}, Call("nn.matmul", {Softmax(Call("nn.matmul", {o.q, o.kt}), 2), o.v})),
            "softmax over the query axis");
  // A per-key scale (not one value) is no scalar scale.
  Expr per_key = Call("multiply", {Call("nn.matmul", {o.q, o.kt}), Values({12}, {0.5f, 0.25f})});
  unchanged(Main({o.q, o.kt, o.v}, Call("nn.matmul", {Softmax(per_key), o.v})), "per-key scale");
  // Keys shared by the heads (batch broadcasting): the kernel takes equal batch dims only.
  Var kt1 = VarNode::make("kt1", F32({1, 1, 8, 12}));
  unchanged(Main({o.q, kt1, o.v}, Call("nn.matmul", {Softmax(Call("nn.matmul", {o.q, kt1})), o.v})),
            "broadcast keys");
  // float16 is left to the unfused ops.
  Type h = TensorTypeNode::make(std::vector<int64_t>{1, 2, 4, 4}, DataType::Float(16));
  Var hq = VarNode::make("hq", h), hk = VarNode::make("hk", h), hv = VarNode::make("hv", h);
  unchanged(Main({hq, hk, hv}, Call("nn.matmul", {Softmax(Call("nn.matmul", {hq, hk})), hv})), "float16");
}

TEST(FuseAttention, TheOpsTypeRelationNamesWhatDisagrees) {
  Operands o;
  Var kt_bad = VarNode::make("kt", F32({1, 4, 7, 12}));
  EXPECT_THROW(Main({o.q, kt_bad, o.v}, Attention({o.q, kt_bad, o.v}, 1.0)), UserError);
  Var bias_bad = VarNode::make("b", F32({3, 12}));
  EXPECT_THROW(Main({o.q, o.kt, o.v, bias_bad}, Attention({o.q, o.kt, o.v, bias_bad}, 1.0)), UserError);
  EXPECT_THROW(Main({o.q, o.kt}, Attention({o.q, o.kt}, 1.0)), UserError);
}

}  // namespace
}  // namespace tessera::graph
