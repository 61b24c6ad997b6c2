// Neural-network ops: convolution, dense / matmul, pooling, softmax, attention, batch_norm, relu.
// Layouts are NCHW (data) and OIHW (kernel) unless an attr says otherwise.
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

void CheckLayout(const Attrs& attrs, const char* key, const char* want) {
  std::string got = attrs.GetString(key, want);
  if (got != want) TESSERA_THROW(UnsupportedError, key, " '", got, "' is not supported (only ", want, ")");
}

void CheckStaticEq(const Dim& a, const Dim& b, const std::string& what) {
  if (a.is_static() && b.is_static() && a.value() != b.value())
    TESSERA_THROW(UserError, what, ": ", a.value(), " != ", b.value());
}

// data [N, C, H, W], weight [O, C/groups, KH, KW] -> [N, O, OH, OW]
Type Conv2DRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& w = TensorArg(args, 1);
  CheckLayout(attrs, "data_layout", "NCHW");
  CheckLayout(attrs, "kernel_layout", "OIHW");
  TESSERA_CHECK(x.ndim() == 4, "data must be 4-D NCHW, got ", ShapeStr(x.shape));
  TESSERA_CHECK(w.ndim() == 4, "weight must be 4-D OIHW, got ", ShapeStr(w.shape));
  CheckSameDtype(x, w);
  TESSERA_CHECK(w.shape[2].is_static() && w.shape[3].is_static() && w.shape[0].is_static() &&
                    w.shape[1].is_static(),
                "weight shape must be static, got ", ShapeStr(w.shape));
  int64_t groups = attrs.GetInt("groups", 1);
  TESSERA_CHECK(groups >= 1, "groups must be >= 1, got ", groups);
  std::vector<int64_t> strides = attrs.GetInts("strides", {1, 1});
  std::vector<int64_t> dilation = attrs.GetInts("dilation", {1, 1});
  TESSERA_CHECK(strides.size() == 2 && dilation.size() == 2, "strides and dilation must have 2 values");
  std::vector<int64_t> pad = Padding2D(attrs);
  int64_t out_c = w.shape[0].value();
  TESSERA_CHECK(out_c % groups == 0, "output channels ", out_c, " not divisible by groups ", groups);
  if (x.shape[1].is_static()) {
    TESSERA_CHECK(x.shape[1].value() == w.shape[1].value() * groups, "input channels ", x.shape[1].value(),
                  " != weight in-channels ", w.shape[1].value(), " * groups ", groups);
  }
  Dim oh = WindowOutDim(x.shape[2], pad[0] + pad[2], w.shape[2].value(), strides[0], dilation[0], false, pad[0]);
  Dim ow = WindowOutDim(x.shape[3], pad[1] + pad[3], w.shape[3].value(), strides[1], dilation[1], false, pad[1]);
  return TensorTypeNode::make({x.shape[0], Dim(out_c), oh, ow}, x.dtype);
}

// data [..., C at axis, ...], bias [C]
Type BiasAddRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(x, b);
  int64_t axis = NormalizeAxis(attrs.GetInt("axis", 1), x.ndim());
  TESSERA_CHECK(b.ndim() == 1, "bias must be 1-D, got ", ShapeStr(b.shape));
  CheckStaticEq(x.shape[axis], b.shape[0], "bias length does not match data axis " + std::to_string(axis));
  return TensorTypeNode::make(x.shape, x.dtype);
}

// x [..., K], w [N, K] -> [..., N]
Type DenseRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& w = TensorArg(args, 1);
  CheckSameDtype(x, w);
  TESSERA_CHECK(x.ndim() >= 1, "data must have rank >= 1");
  TESSERA_CHECK(w.ndim() == 2, "weight must be 2-D [units, in], got ", ShapeStr(w.shape));
  CheckStaticEq(x.shape.back(), w.shape[1], "reduction extents differ (data last dim vs weight dim 1)");
  Shape out = x.shape;
  out.back() = w.shape[0];
  return TensorTypeNode::make(out, x.dtype);
}

// numpy.matmul: 1-D operands are promoted and the promoted dim removed; batch dims broadcast.
Type MatmulRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& a = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(a, b);
  TESSERA_CHECK(a.ndim() >= 1 && b.ndim() >= 1, "matmul operands must have rank >= 1");
  Shape sa = a.shape, sb = b.shape;
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), Dim(1));
  if (b_vec) sb.push_back(Dim(1));
  CheckStaticEq(sa.back(), sb[sb.size() - 2],
                "reduction extents differ: " + ShapeStr(a.shape) + " @ " + ShapeStr(b.shape));
  Shape batch = BroadcastShapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  Shape out = batch;
  if (!a_vec) out.push_back(sa[sa.size() - 2]);
  if (!b_vec) out.push_back(sb.back());
  return TensorTypeNode::make(out, a.dtype);
}

// x [B, M, K] (or [B, K, M] if transpose_a), y [B, N, K] (transpose_b=1, default) or [B, K, N];
// the batch dims broadcast (1 against B).
Type BatchMatmulRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& y = TensorArg(args, 1);
  CheckSameDtype(x, y);
  TESSERA_CHECK(x.ndim() == 3 && y.ndim() == 3, "batch_matmul operands must be 3-D, got ", ShapeStr(x.shape),
                " and ", ShapeStr(y.shape));
  bool ta = attrs.GetInt("transpose_a", 0) != 0, tb = attrs.GetInt("transpose_b", 1) != 0;
  Dim m = ta ? x.shape[2] : x.shape[1], kx = ta ? x.shape[1] : x.shape[2];
  Dim n = tb ? y.shape[1] : y.shape[2], ky = tb ? y.shape[2] : y.shape[1];
  CheckStaticEq(kx, ky, "reduction extents differ");
  return TensorTypeNode::make({BroadcastDim(x.shape[0], y.shape[0]), m, n}, x.dtype);
}

// The rank a pooling op's `layout` attr implies: 4 for NCHW, 5 for NCHW<b>c (the blocked layout
// AlterOpLayout gives a pool whose input is blocked: [N, C/b, H, W, b], pooled over H and W).
int64_t PoolLayoutRank(const Attrs& attrs, const TensorTypeNode& x) {
  const std::string layout = attrs.GetString("layout", "NCHW");
  if (layout == "NCHW") {
    TESSERA_CHECK(x.ndim() == 4, "data must be 4-D NCHW, got ", ShapeStr(x.shape));
    return 4;
  }
  const bool blocked = layout.size() > 5 && layout.rfind("NCHW", 0) == 0 && layout.back() == 'c' &&
                       layout.find_first_not_of("0123456789", 4) == layout.size() - 1;
  if (!blocked)
    TESSERA_THROW(UnsupportedError, "layout '", layout, "' is not supported (only NCHW and NCHW<b>c)");
  const int64_t b = std::stoll(layout.substr(4, layout.size() - 5));
  TESSERA_CHECK(x.ndim() == 5, "data must be 5-D ", layout, ", got ", ShapeStr(x.shape));
  TESSERA_CHECK(x.shape[4].is_static() && x.shape[4].value() == b, "data's last dim must be the block ", b,
                " of layout ", layout, ", got ", ShapeStr(x.shape));
  return 5;
}

Type Pool2DRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t rank = PoolLayoutRank(attrs, x);
  std::vector<int64_t> k = attrs.GetInts("pool_size");
  std::vector<int64_t> s = attrs.GetInts("strides", {1, 1});
  std::vector<int64_t> d = attrs.GetInts("dilation", {1, 1});
  TESSERA_CHECK(k.size() == 2 && s.size() == 2 && d.size() == 2, "pool_size, strides, dilation need 2 values");
  std::vector<int64_t> pad = Padding2D(attrs);
  bool ceil = attrs.GetInt("ceil_mode", 0) != 0;
  Dim oh = WindowOutDim(x.shape[2], pad[0] + pad[2], k[0], s[0], d[0], ceil, pad[0]);
  Dim ow = WindowOutDim(x.shape[3], pad[1] + pad[3], k[1], s[1], d[1], ceil, pad[1]);
  std::vector<Dim> out = {x.shape[0], x.shape[1], oh, ow};
  if (rank == 5) out.push_back(x.shape[4]);
  return TensorTypeNode::make(out, x.dtype);
}

// The positions of nn.max_pool2d's maxima: its shape, int64; 4-D NCHW only.
Type Pool2DIndicesRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(attrs.GetString("layout", "NCHW") == "NCHW" && TensorArg(args, 0).ndim() == 4,
                "max_pool2d_indices needs a 4-D NCHW tensor");
  const Type pooled = Pool2DRel(args, attrs);
  return TensorTypeNode::make(pooled->as<TensorTypeNode>()->shape, DataType::Int(64));
}

Type GlobalPool2DRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  std::vector<Dim> out = {x.shape[0], x.shape[1], Dim(1), Dim(1)};
  if (PoolLayoutRank(attrs, x) == 5) out.push_back(x.shape[4]);
  return TensorTypeNode::make(out, x.dtype);
}

Type SoftmaxRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "softmax needs a float tensor, got ", x.dtype.str());
  NormalizeAxis(attrs.GetInt("axis", -1), x.ndim());
  return TensorTypeNode::make(x.shape, x.dtype);
}

// nn.attention (topi/nn/attention.h): q [B.., M, D], k_t [B.., D, N], v [B.., N, Dv] and an
// optional additive bias broadcastable to the scores [B.., M, N] -> [B.., M, Dv]. attrs: scale.
Type AttentionRel(const std::vector<Type>& args, const Attrs&) {
  TESSERA_CHECK(args.size() == 3 || args.size() == 4, "attention takes q, k_t, v and an optional bias, got ",
                args.size(), " arguments");
  const TensorTypeNode& q = TensorArg(args, 0);
  const TensorTypeNode& k = TensorArg(args, 1);
  const TensorTypeNode& v = TensorArg(args, 2);
  TESSERA_CHECK(q.dtype.is_floating(), "attention needs float tensors, got ", q.dtype.str());
  CheckSameDtype(q, k);
  CheckSameDtype(q, v);
  TESSERA_CHECK(q.ndim() >= 2 && k.ndim() == q.ndim() && v.ndim() == q.ndim(),
                "q, k_t and v must have one rank >= 2, got ", ShapeStr(q.shape), ", ", ShapeStr(k.shape), ", ",
                ShapeStr(v.shape));
  const size_t nb = q.shape.size() - 2;
  for (size_t d = 0; d < nb; ++d) {
    CheckStaticEq(k.shape[d], q.shape[d], "batch dims of q and k_t differ");
    CheckStaticEq(v.shape[d], q.shape[d], "batch dims of q and v differ");
  }
  CheckStaticEq(k.shape[nb], q.shape[nb + 1], "q [.., M, D] and k_t [.., D, N] differ in D");
  CheckStaticEq(v.shape[nb], k.shape[nb + 1], "k_t [.., D, N] and v [.., N, Dv] differ in N");
  if (args.size() == 4) {
    const TensorTypeNode& b = TensorArg(args, 3);
    CheckSameDtype(q, b);
    Shape scores(q.shape.begin(), q.shape.end() - 1);
    scores.push_back(k.shape[nb + 1]);
    TESSERA_CHECK(b.ndim() <= static_cast<int64_t>(scores.size()), "bias ", ShapeStr(b.shape),
                  " has a higher rank than the scores ", ShapeStr(scores));
    TESSERA_CHECK(BroadcastShapes(scores, b.shape) == scores, "bias ", ShapeStr(b.shape),
                  " does not broadcast to the scores ", ShapeStr(scores));
  }
  Shape out(q.shape.begin(), q.shape.end() - 1);
  out.push_back(v.shape[nb + 1]);
  return TensorTypeNode::make(out, q.dtype);
}

// data, gamma, beta, moving_mean, moving_var: the four parameters are [C], C = data[axis].
Type BatchNormRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  int64_t axis = NormalizeAxis(attrs.GetInt("axis", 1), x.ndim());
  static const char* kNames[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 1; i < 5; ++i) {
    const TensorTypeNode& p = TensorArg(args, i);
    CheckSameDtype(x, p);
    TESSERA_CHECK(p.ndim() == 1, kNames[i], " must be 1-D, got ", ShapeStr(p.shape));
    CheckStaticEq(p.shape[0], x.shape[axis], std::string(kNames[i]) + " length does not match data channels");
  }
  return TensorTypeNode::make(x.shape, x.dtype);
}

}  // namespace

void RegisterNNOps(OpRegistry& r) {
  r.Register("nn.conv2d", 2, kOutEWiseFusable, Conv2DRel,
             "2-D convolution. attrs: strides, padding [top,left,bottom,right], dilation, groups, data_layout "
             "\"NCHW\", kernel_layout \"OIHW\"");
  r.Register("nn.bias_add", 2, kBroadcast, BiasAddRel, "data + bias along axis. attrs: axis");
  r.Register("nn.dense", 2, kOutEWiseFusable, DenseRel, "x [.., K] times w [N, K]^T -> [.., N]");
  r.Register("nn.matmul", 2, kOutEWiseFusable, MatmulRel, "numpy.matmul with batch broadcasting");
  r.Register("nn.batch_matmul", 2, kOutEWiseFusable, BatchMatmulRel,
             "3-D batched matmul. attrs: transpose_a (default 0), transpose_b (default 1)");
  r.Register("nn.max_pool2d", 1, kOutEWiseFusable, Pool2DRel,
             "attrs: pool_size, strides, dilation, padding, layout, ceil_mode");
  r.Register("nn.max_pool2d_indices", 1, kOpaque, Pool2DIndicesRel,
             "int64 flat positions in the input of nn.max_pool2d's maxima (ONNX MaxPool Indices). attrs: those of "
             "nn.max_pool2d, storage_order (0 row-major, 1 column-major)");
  r.Register("nn.avg_pool2d", 1, kOutEWiseFusable, Pool2DRel,
             "attrs: pool_size, strides, dilation, padding, layout, ceil_mode, count_include_pad");
  r.Register("nn.global_avg_pool2d", 1, kOutEWiseFusable, GlobalPool2DRel, "mean over H, W. attrs: layout");
  r.Register("nn.softmax", 1, kOpaque, SoftmaxRel, "softmax along one axis. attrs: axis");
  r.Register("nn.attention", -1, kOpaque, AttentionRel,
             "softmax(scale * q k_t + bias) v in one kernel (graph/transform/fuse_attention.h): q [B.., M, D], k_t "
             "[B.., D, N], v [B.., N, Dv], optional bias broadcastable to [B.., M, N]. attrs: scale");
  r.Register("nn.batch_norm", 5, kOpaque, BatchNormRel,
             "inference batch norm (data, gamma, beta, mean, var). attrs: axis, epsilon");
  r.Register("nn.relu", 1, kElemWise, IdentityRel, "max(x, 0)");
  RegisterLayoutOps(r);  // the NCHWc ops (layout.cc)
}

}  // namespace tessera::graph::op
