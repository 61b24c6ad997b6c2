// create_prim_func with symbolic extents (dynamic shapes): shape_vars by first appearance over
// the args, an expression as a param dim refused, int32 shape vars mixing with constants, and the
// unscheduled function on the reference interpreter at several values.
#include <gtest/gtest.h>

#include "tessera/ir/op.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/tir/transform/lower.h"
#include "tir_interp.h"

namespace tessera::te {
namespace {

const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

TEST(TeDynamicShape, ShapeVarsInCallingConventionOrder) {
  Var batch("batch_size", i32), seq("seq", i32);
  Tensor x = placeholder({batch, seq, ir::make_const(i32, 4)}, f32, "x");
  Tensor y = placeholder({seq}, f32, "y");
  // A reduction over the symbolic axis, and an index mixing a shape var with constants.
  IterVar k = reduce_axis(Range(ir::make_const(i32, 0), seq), "k");
  Tensor z = compute({batch, ir::make_const(i32, 4)}, [&](const std::vector<Var>& i) {
    return sum(x({i[0], k.var, i[1]}) * y({seq - 1 - k.var}), {k});
  }, "z");
  tir::PrimFunc f = create_prim_func({y, x, z}, "f");
  ASSERT_EQ(f->shape_vars.size(), 2u);
  EXPECT_TRUE(f->shape_vars[0].same_as(seq));  // y comes first
  EXPECT_TRUE(f->shape_vars[1].same_as(batch));
  EXPECT_EQ(f->shape_vars[1]->name_hint, "batch_size");
  const std::string text = tir::AsText(f);
  EXPECT_NE(text.find("# shape_vars: seq: int32, batch_size: int32"), std::string::npos) << text;

  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {3, 17}}) {
    std::vector<double> yd(s), xd(b * s * 4), zd(b * 4, -7);
    for (int64_t i = 0; i < s; ++i) yd[i] = i + 1;
    for (size_t i = 0; i < xd.size(); ++i) xd[i] = 0.5 * static_cast<double>(i % 7);
    for (const tir::PrimFunc& g : {f, tir::transform::LowerToFlat(f)}) {
      tir::testing::RunPrimFunc(g, {&yd, &xd, &zd}, {s, b});
      for (int64_t i = 0; i < b; ++i)
        for (int64_t c = 0; c < 4; ++c) {
          double want = 0;
          for (int64_t kk = 0; kk < s; ++kk) want += xd[(i * s + kk) * 4 + c] * yd[s - 1 - kk];
          EXPECT_NEAR(zd[i * 4 + c], want, 1e-4) << b << "x" << s;
        }
    }
  }
}

TEST(TeDynamicShape, ExpressionAsAParamDimIsUnsupported) {
  Var n("n", i32);
  Tensor x = placeholder({n + 1}, f32, "x");
  Tensor y = compute({n + 1}, [&](const std::vector<Var>& i) { return x({i[0]}); }, "y");
  try {
    create_prim_func({x, y}, "f");
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("n + 1"), std::string::npos) << e.what();
  }
  // An expression extent of an intermediate is fine: only params carry the ABI.
  Tensor a = placeholder({n}, f32, "a");
  Tensor t = compute({n * 2}, [&](const std::vector<Var>& i) { return a({ir::floordiv(i[0], 2)}); }, "t");
  Tensor b = compute({n}, [&](const std::vector<Var>& i) { return t({i[0] * 2}) + t({i[0] * 2 + 1}); }, "b");
  EXPECT_EQ(create_prim_func({a, b}, "g")->shape_vars.size(), 1u);
}

}  // namespace
}  // namespace tessera::te
