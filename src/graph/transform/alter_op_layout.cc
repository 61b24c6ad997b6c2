// AlterOpLayout: see include/tessera/graph/transform/alter_op_layout.h for the rules.
#include "tessera/graph/transform/alter_op_layout.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform {
namespace {

std::string BlockedName(int64_t b) { return b ? "NCHW" + std::to_string(b) + "c" : "NCHW"; }

// The static shape of a float32 tensor expression, or empty.
std::vector<int64_t> F32Shape(const Expr& e) {
  const TensorTypeNode* t = TensorTypeOf(e);
  if (!t || t->dtype != DataType::Float(32)) return {};
  auto s = StaticShape(t->shape);
  return s ? *s : std::vector<int64_t>{};
}

Call MakeCall(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}

Constant MakeF32Constant(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  runtime::NDArray a = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::memcpy(a.raw_data(), v.data(), v.size() * sizeof(float));
  return ConstantNode::make(a);
}

// Unary elementwise ops that keep the (finite) values of padded channels finite: a conv reading
// an inf or NaN there would multiply it by its zero weights and poison its outputs. Not sqrt,
// log, reciprocal and the like (a padded lane may hold any finite value after a few ops).
const std::set<std::string>& UnaryOps() {
  static const std::set<std::string> ops = {"nn.relu", "clip",     "sigmoid", "tanh",         "hard_sigmoid",
                                            "hard_swish", "exp",   "negative", "abs",         "copy",
                                            "erf",     "nn.gelu",  "nn.elu",  "nn.leaky_relu", "floor",
                                            "ceil",    "round",    "sin",     "cos"};
  return ops;
}

// Any other one-input elementwise op (TVM's kElemWise), kept blocked when there is no padding.
bool IsUnaryElementwise(const std::string& op, size_t num_args) {
  const OpInfo* info = OpRegistry::Global().Find(op);
  return num_args == 1 && info && info->pattern == kElemWise;
}
const std::set<std::string>& BinaryOps() {
  static const std::set<std::string> ops = {"add", "subtract", "multiply", "maximum", "minimum", "divide"};
  return ops;
}

// A value of the rewritten graph: its NCHW form and / or its blocked form.
struct Value {
  Expr nchw;                        // the value in its original layout (null until needed)
  std::map<int64_t, Expr> blocked;  // block -> the value in NCHW<block>c
  int64_t block = 0;                // the block of the value as produced (0: produced in NCHW)
  int64_t channels = 0;             // C, when the value is a 4-D NCHW-like tensor
};

class Rewriter {
 public:
  explicit Rewriter(const AlterOpLayoutOptions& opt) : opt_(opt) {}

  Expr Rewrite(const Function& fn) {
    Expr body = NCHW(fn->body);
    return body;
  }

 private:
  // The value of an original expression, rewritten once.
  Value& Visit(const Expr& e) {
    auto it = values_.find(e.get());
    if (it != values_.end()) return it->second;
    Value v = Compute(e);
    if (!v.channels) {
      std::vector<int64_t> s = F32Shape(e);
      if (s.size() == 4) v.channels = s[1];
    }
    return values_[e.get()] = std::move(v);
  }

  // e (original) in NCHW.
  Expr NCHW(const Expr& e) {
    Value& v = Visit(e);
    if (!v.nchw) {
      TESSERA_ICHECK(v.block && v.blocked.count(v.block), "a value with neither layout");
      std::vector<int64_t> s = F32Shape(e);
      if (IsReshapeBlockable(s, v.block)) {  // [N, C/b, 1, 1, b] holds [N, C, 1, 1] in the same order
        v.nchw = MakeCall("reshape", {v.blocked.at(v.block)}, Attrs{{"newshape", s}});
        return v.nchw;
      }
      v.nchw = MakeCall("layout_transform", {v.blocked.at(v.block)},
                        Attrs{{"src_layout", BlockedName(v.block)}, {"dst_layout", "NCHW"}, {"channels", v.channels}});
    }
    return v.nchw;
  }

  // e (original, a 4-D float32 tensor) in NCHW<b>c.
  Expr Blocked(const Expr& e, int64_t b) {
    Value& v = Visit(e);
    auto it = v.blocked.find(b);
    if (it != v.blocked.end()) return it->second;
    Expr src = v.block ? v.blocked.at(v.block) : NCHW(e);
    std::vector<int64_t> s = F32Shape(e);
    if (!v.block && IsReshapeBlockable(s, b)) {
      Expr out = MakeCall("reshape", {src}, Attrs{{"newshape", std::vector<int64_t>{s[0], s[1] / b, 1, 1, b}}});
      return values_[e.get()].blocked[b] = out;
    }
    Expr out = MakeCall("layout_transform", {src},
                        Attrs{{"src_layout", BlockedName(v.block)}, {"dst_layout", BlockedName(b)}, {"channels", v.channels}});
    return values_[e.get()].blocked[b] = out;
  }

  // Whether a 4-D [N, C, 1, 1] value has the same element order as NCHW<b>c [N, C/b, 1, 1, b]
  // (no channel padding), so a reshape (zero-copy) converts between the two.
  static bool IsReshapeBlockable(const std::vector<int64_t>& s, int64_t b) {
    return b > 0 && s.size() == 4 && s[2] == 1 && s[3] == 1 && s[1] % b == 0;
  }

  // The output block of a conv of K output channels: the wide block for a wide conv (K a multiple
  // of it and at least wide_min_channels), else the target's.
  int64_t OutBlock(int64_t K) const {
    const int64_t w = opt_.wide_block;
    return w && opt_.wide_min_channels > 0 && K % w == 0 && K >= opt_.wide_min_channels ? w : opt_.out_block;
  }

  static Value Produced(Expr blocked, int64_t b, int64_t channels) {
    Value v;
    v.blocked[b] = std::move(blocked);
    v.block = b;
    v.channels = channels;
    return v;
  }

  Value Compute(const Expr& e) {
    if (e->as<VarNode>() || e->as<ConstantNode>() || e->as<OpNode>()) return Value{e, {}, 0, 0};
    if (const auto* t = e->as<TupleNode>()) {
      std::vector<Expr> fields;
      for (const Expr& f : t->fields) fields.push_back(NCHW(f));
      return Value{TupleNode::make(fields), {}, 0, 0};
    }
    if (const auto* g = e->as<TupleGetItemNode>()) return Value{TupleGetItemNode::make(NCHW(g->tuple), g->index), {}, 0, 0};
    if (const auto* i = e->as<IfNode>()) {
      // Each branch is rewritten like the rest; its result leaves in NCHW, so the If keeps its type.
      return Value{IfNode::make(NCHW(i->cond), NCHW(i->true_branch), NCHW(i->false_branch)), {}, 0, 0};
    }
    const auto* call = e->as<CallNode>();
    if (const auto* fn = call ? call->op->as<FunctionNode>() : nullptr; fn && IsExternalFunction(*fn)) {
      // An external function (BYOC) takes and returns NCHW: its backend sees the original layout.
      std::vector<Expr> args;
      for (const Expr& a : call->args) args.push_back(NCHW(a));
      return Value{CallNode::make(call->op, std::move(args), call->attrs), {}, 0, 0};
    }
    TESSERA_ICHECK(call && call->op->as<OpNode>(), "AlterOpLayout: unexpected expression kind");
    const std::string& op = call->op->as<OpNode>()->name;
    if (op == "nn.conv2d") {
      if (auto v = Conv(*call, e)) return *v;
    } else if (UnaryOps().count(op) || IsUnaryElementwise(op, call->args.size())) {
      const Value& x = Visit(call->args[0]);
      const bool finite_on_padding = UnaryOps().count(op) || x.channels % std::max<int64_t>(x.block, 1) == 0;
      if (x.block && finite_on_padding && !F32Shape(e).empty())
        return Produced(MakeCall(op, {x.blocked.at(x.block)}, call->attrs), x.block, x.channels);
    } else if (BinaryOps().count(op)) {
      if (auto v = Binary(*call, e, op)) return *v;
    } else if (op == "nn.bias_add") {
      const Value& x = Visit(call->args[0]);
      const auto* b = call->args[1]->as<ConstantNode>();
      int64_t axis = call->attrs.GetInt("axis", 1);
      if (x.block && b && (axis == 1 || axis == -3) && F32Shape(call->args[1]).size() == 1) {
        Expr packed = PackPerChannel(b->data, x.channels, x.block, 0.0f);
        return Produced(MakeCall("add", {x.blocked.at(x.block), packed}), x.block, x.channels);
      }
    } else if (detail::IsReduceOp(op)) {
      if (auto v = Reduce(*call, e)) return *v;
    } else if (op == "concatenate") {
      if (auto v = Concat(*call)) return *v;
    } else if (op == "nn.max_pool2d" || op == "nn.avg_pool2d" || op == "nn.global_avg_pool2d") {
      // Pooling is per channel: pool the blocked tensor over H and W, keeping the block.
      const Value& x = Visit(call->args[0]);
      if (x.block && call->attrs.GetString("layout", "NCHW") == "NCHW") {
        Attrs attrs = call->attrs;
        attrs.Set("layout", BlockedName(x.block));
        return Produced(MakeCall(op, {x.blocked.at(x.block)}, attrs), x.block, x.channels);
      }
    }
    // Fallback: every argument in NCHW.
    std::vector<Expr> args;
    for (const Expr& a : call->args) args.push_back(NCHW(a));
    return Value{CallNode::make(call->op, args, call->attrs), {}, 0, 0};
  }

  std::optional<Value> Conv(const CallNode& call, const Expr& e) {
    const auto* wc = call.args[1]->as<ConstantNode>();
    std::vector<int64_t> xs = F32Shape(call.args[0]), ws = F32Shape(call.args[1]), os = F32Shape(e);
    if (!wc || xs.size() != 4 || ws.size() != 4 || os.size() != 4) return std::nullopt;
    if (call.attrs.GetString("data_layout", "NCHW") != "NCHW" || call.attrs.GetString("kernel_layout", "OIHW") != "OIHW")
      return std::nullopt;
    const int64_t groups = call.attrs.GetInt("groups", 1);
    const int64_t K = ws[0], C = xs[1], KH = ws[2], KW = ws[3];
    const float* w = static_cast<const float*>(wc->data.raw_data());
    Attrs attrs = call.attrs;
    if (groups == 1) {
      const Value& x = Visit(call.args[0]);
      int64_t cb = x.block;
      if (!cb)
        for (cb = std::min<int64_t>(C, opt_.out_block); C % cb != 0;) --cb;
      const int64_t kb = OutBlock(K), Kb = (K + kb - 1) / kb, Cb = (C + cb - 1) / cb;
      std::vector<float> packed(static_cast<size_t>(Kb * Cb * KH * KW * cb * kb), 0.0f);
      for (int64_t o = 0; o < K; ++o)
        for (int64_t i = 0; i < C; ++i)
          for (int64_t y = 0; y < KH; ++y)
            for (int64_t xx = 0; xx < KW; ++xx)
              packed[((((o / kb * Cb + i / cb) * KH + y) * KW + xx) * cb + i % cb) * kb + o % kb] =
                  w[((o * C + i) * KH + y) * KW + xx];
      attrs.Set("data_layout", BlockedName(cb)).Set("out_layout", BlockedName(kb));
      attrs.Set("kernel_layout", "OIHW" + std::to_string(cb) + "i" + std::to_string(kb) + "o");
      Expr out = MakeCall("nn.contrib_conv2d_NCHWc",
                          {Blocked(call.args[0], cb), MakeF32Constant({Kb, Cb, KH, KW, cb, kb}, packed)}, attrs);
      return Produced(out, kb, K);
    }
    if (groups == C && K == C && ws[1] == 1) {
      // The input's block when it is the wide one (no conversion); else the target's.
      const int64_t xb = Visit(call.args[0]).block;
      const int64_t b = opt_.wide_block && xb == opt_.wide_block ? xb : opt_.out_block, Cb = (C + b - 1) / b;
      std::vector<float> packed(static_cast<size_t>(Cb * KH * KW * b), 0.0f);
      for (int64_t i = 0; i < C; ++i)
        for (int64_t y = 0; y < KH; ++y)
          for (int64_t xx = 0; xx < KW; ++xx) packed[((i / b * KH + y) * KW + xx) * b + i % b] = w[(i * KH + y) * KW + xx];
      attrs.Set("data_layout", BlockedName(b)).Set("out_layout", BlockedName(b));
      attrs.Set("kernel_layout", "OIHW1i" + std::to_string(b) + "o");
      Expr out = MakeCall("nn.contrib_conv2d_NCHWc", {Blocked(call.args[0], b), MakeF32Constant({Cb, 1, KH, KW, 1, b}, packed)},
                          attrs);
      return Produced(out, b, C);
    }
    if (groups > 1 && C % groups == 0 && K % groups == 0 && ws[1] == C / groups) return Grouped(call, w, groups);
    return std::nullopt;
  }

  // A grouped convolution as the grouped NCHWc one (topi conv2d_NCHWc): every group's channels in
  // whole blocks. Groups whose widths are no whole blocks are merged m at a time (m the smallest
  // divisor of groups, up to 8, that makes both merged widths whole blocks) into block-diagonal
  // groups, whose weights across the original groups are zero: m times the multiply-adds of that
  // layer, all of them vectorised over the output block. The block is the one of least m among the
  // full-width ones (x's or the target's, then half the target's: one vector of float32 lanes on
  // x86), the wider on a tie: RegNetX-8GF's groups of 120 channels take 8-wide blocks with m = 1
  // rather than 16-wide ones with m = 2 (twice its grouped layers' work); ResNeXt 32x4d's groups of 4
  // take m = 2 at 8-wide blocks. Only when none fits, a quarter of the target's block is tried.
  std::optional<Value> Grouped(const CallNode& call, const float* w, int64_t groups) {
    std::vector<int64_t> xs = F32Shape(call.args[0]), ws = F32Shape(call.args[1]);
    const int64_t K = ws[0], C = xs[1], KH = ws[2], KW = ws[3], Cg = C / groups, Kg = K / groups;
    const Value& x = Visit(call.args[0]);
    // Blocks (cb, kb): for a wide conv first x's (or the wide one) and the wide one; x's (or the
    // target's) and the target's, and the target's alone when x has another; else, for groups no merge
    // fits (13 or 55 groups of 8 channels at 16-wide blocks: RegNetY-400MF), half and a quarter of the
    // target's.
    std::vector<std::pair<int64_t, int64_t>> blocks;
    if (OutBlock(K) != opt_.out_block) blocks.push_back({x.block ? x.block : opt_.wide_block, opt_.wide_block});
    blocks.push_back({x.block ? x.block : opt_.out_block, opt_.out_block});
    if (x.block && x.block != opt_.out_block) blocks.push_back({opt_.out_block, opt_.out_block});
    for (int64_t b = opt_.out_block / 2; b >= 4 && b >= opt_.out_block / 4; b /= 2) blocks.push_back({b, b});
    int64_t m = 0, cb = 0, kb = 0;
    for (const auto& [c, k] : blocks) {
      const bool full_width = k >= opt_.out_block / 2;
      if (m && !full_width) break;  // a narrower block only when no full-width one fits
      for (int64_t d = 1; d <= std::min<int64_t>(groups, 8) && (!m || d < m); ++d)
        if (groups % d == 0 && (d * Cg) % c == 0 && (d * Kg) % k == 0) {
          m = d, cb = c, kb = k;
          break;
        }
    }
    if (!m) return std::nullopt;  // the generic NCHW path
    const int64_t Cm = m * Cg, Km = m * Kg, Kb = K / kb, Cmb = Cm / cb;
    std::vector<float> packed(static_cast<size_t>(Kb * Cmb * KH * KW * cb * kb), 0.0f);
    for (int64_t o = 0; o < K; ++o) {
      const int64_t group = o / Kg, first = (o / Km) * Cm;  // o's group; its merged group's first input channel
      for (int64_t i = group * Cg; i < (group + 1) * Cg; ++i)
        for (int64_t y = 0; y < KH; ++y)
          for (int64_t xx = 0; xx < KW; ++xx)
            packed[((((o / kb * Cmb + (i - first) / cb) * KH + y) * KW + xx) * cb + (i - first) % cb) * kb + o % kb] =
                w[((o * Cg + (i - group * Cg)) * KH + y) * KW + xx];
    }
    Attrs attrs = call.attrs;
    attrs.Set("groups", groups / m).Set("data_layout", BlockedName(cb)).Set("out_layout", BlockedName(kb));
    attrs.Set("kernel_layout", "OIHW" + std::to_string(cb) + "i" + std::to_string(kb) + "o");
    Expr out = MakeCall("nn.contrib_conv2d_NCHWc", {Blocked(call.args[0], cb), MakeF32Constant({Kb, Cmb, KH, KW, cb, kb}, packed)},
                        attrs);
    return Produced(out, kb, K);
  }

  // A per-channel constant [C] (any shape with C elements) as [1, C/b, 1, 1, b], `pad` past C.
  static Expr PackPerChannel(const runtime::NDArray& a, int64_t C, int64_t b, float pad) {
    const int64_t Cb = (C + b - 1) / b;
    std::vector<float> v(static_cast<size_t>(Cb * b), pad);
    const float* src = static_cast<const float*>(a.raw_data());
    for (int64_t c = 0; c < C; ++c) v[c] = src[c];
    return MakeF32Constant({1, Cb, 1, 1, b}, v);
  }

  // How a non-blocked operand fits a blocked value of C channels and block b: its blocked form,
  // or null.
  Expr Fit(const Expr& operand, const std::vector<int64_t>& result_shape, int64_t C, int64_t b, float pad) {
    std::vector<int64_t> s = F32Shape(operand);
    const TensorTypeNode* t = TensorTypeOf(operand);
    if (!t) return nullptr;
    auto st = StaticShape(t->shape);
    if (!st) return nullptr;
    int64_t numel = 1;
    for (int64_t d : *st) numel *= d;
    // A scalar broadcasts in any layout (a computed one as rewritten: its NCHW form).
    if (numel == 1 && st->size() <= 4) return NCHW(operand);
    if (s.empty()) return nullptr;
    if (s.size() == 4 && s == result_shape) return Blocked(operand, b);
    const auto* c = operand->as<ConstantNode>();
    bool per_channel = (s.size() == 3 && s[0] == C && s[1] == 1 && s[2] == 1) ||
                       (s.size() == 4 && s[0] == 1 && s[1] == C && s[2] == 1 && s[3] == 1);
    if (c && per_channel) return PackPerChannel(c->data, C, b, pad);
    // A computed per-sample [N, 1, 1, 1] operand (a statistic of Reduce): [N, 1, 1, 1, 1].
    if (!c && s.size() == 4 && s[0] == result_shape[0] && s[1] == 1 && s[2] == 1 && s[3] == 1)
      return MakeCall("reshape", {NCHW(operand)}, Attrs{{"newshape", std::vector<int64_t>{s[0], 1, 1, 1, 1}}});
    // A computed per-channel [N, C, 1, 1] operand (squeeze-excite scales): a zero-copy reshape.
    if (!c && s.size() == 4 && IsReshapeBlockable(s, b) && s[1] == C && (s[0] == 1 || s[0] == result_shape[0]))
      return Blocked(operand, b);
    return nullptr;
  }

  std::optional<Value> Binary(const CallNode& call, const Expr& e, const std::string& op) {
    const Value& a = Visit(call.args[0]);
    const Value& b = Visit(call.args[1]);
    std::vector<int64_t> os = F32Shape(e);
    if (os.size() != 4) return std::nullopt;
    if (a.block && b.block) {
      if (a.channels != b.channels || op == "divide") return std::nullopt;
      // Two blocks (a wide conv's output and a narrow one's): the right operand takes the left's.
      return Produced(MakeCall(op, {a.blocked.at(a.block), Blocked(call.args[1], a.block)}, call.attrs), a.block,
                      a.channels);
    }
    const bool left = a.block != 0;
    if (!left && !b.block) return std::nullopt;
    const Value& x = left ? a : b;
    if (F32Shape(call.args[left ? 0 : 1]) != os) return std::nullopt;  // the blocked side must not broadcast
    // A divisor other than a constant (packed with 1 past C) could divide padded channels by 0;
    // without padded channels it is a plain broadcast.
    if (op == "divide" && !(left && (call.args[1]->as<ConstantNode>() || x.channels % x.block == 0))) return std::nullopt;
    Expr other = Fit(call.args[left ? 1 : 0], os, x.channels, x.block, op == "divide" ? 1.0f : 0.0f);
    if (!other) return std::nullopt;
    Expr xb = x.blocked.at(x.block);
    return Produced(MakeCall(op, left ? std::vector<Expr>{xb, other} : std::vector<Expr>{other, xb}, call.attrs), x.block,
                    x.channels);
  }

  // A per-sample reduction over every axis but the batch (C, H, W; keepdims), of a blocked value
  // without padded channels: the blocked tensor reduced over its axes 1-4 holds the same
  // [N, 1, 1, 1] (the order of the elements does not matter), reshaped without a copy. Group
  // norm with one group (UnflattenReductions) so stays in the convolutions' layout.
  std::optional<Value> Reduce(const CallNode& call, const Expr& e) {
    const Value& x = Visit(call.args[0]);
    std::vector<int64_t> axes = call.attrs.GetInts("axis", {});
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    if (!x.block || x.channels % x.block != 0 || F32Shape(call.args[0]).size() != 4 ||
        axes != std::vector<int64_t>{1, 2, 3} || call.attrs.GetInt("keepdims", 0) != 1 ||
        call.attrs.GetInt("exclude", 0) != 0) {
      return std::nullopt;
    }
    Attrs attrs = call.attrs;
    attrs.Set("axis", std::vector<int64_t>{1, 2, 3, 4});
    Expr reduced = MakeCall(call.op->as<OpNode>()->name, {x.blocked.at(x.block)}, attrs);
    return Value{MakeCall("reshape", {reduced}, Attrs{{"newshape", F32Shape(e)}}), {}, 0, 0};
  }

  std::optional<Value> Concat(const CallNode& call) {
    const auto* t = call.args[0]->as<TupleNode>();
    int64_t axis = call.attrs.GetInt("axis", 0);
    if (!t || t->fields.empty() || (axis != 1 && axis != -3)) return std::nullopt;
    // The least block of the fields (the others converted to it), a divisor of every field's channels.
    int64_t b = 0, C = 0;
    for (const Expr& f : t->fields) {
      const Value& v = Visit(f);
      if (!v.block) return std::nullopt;
      b = b ? std::min(b, v.block) : v.block;
    }
    std::vector<Expr> fields;
    for (const Expr& f : t->fields) {
      const Value& v = Visit(f);
      if (v.channels % b != 0) return std::nullopt;
      C += v.channels;
      fields.push_back(Blocked(f, b));
    }
    Attrs attrs = call.attrs;
    attrs.Set("axis", 1);
    return Produced(MakeCall("concatenate", {TupleNode::make(fields)}, attrs), b, C);
  }

  AlterOpLayoutOptions opt_;
  std::unordered_map<const ExprNode*, Value> values_;
};

bool Supported(const Function& fn) {
  bool ok = true;
  PostOrderVisit(fn->body, [&](const Expr& e) {
    const auto* f = e->as<FunctionNode>();
    ok &= !(e->as<LetNode>() || (f && !IsExternalFunction(*f)));
    if (const auto* c = e->as<CallNode>()) {
      const auto* callee = c->op->as<FunctionNode>();
      ok &= c->op->as<OpNode>() != nullptr || (callee && IsExternalFunction(*callee));
    }
  });
  return ok;
}

}  // namespace

IRModule AlterOpLayout(const IRModule& input, const AlterOpLayoutOptions& options) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    if (fn->attrs.GetInt("Primitive", 0) != 0 || !Supported(fn)) {
      out.Add(name, fn);
      continue;
    }
    Rewriter r(options);
    Expr body = r.Rewrite(fn);
    out.Add(name, FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass AlterOpLayoutPass(const AlterOpLayoutOptions& options) {
  return Pass({"AlterOpLayout", "NCHW -> NCHWc: blocked conv2d with packed weights, layout_transform at the boundaries", 3},
              [options](const IRModule& m, const PassContext&) { return AlterOpLayout(m, options); });
}

}  // namespace tessera::graph::transform
