// ONNX RNN / GRU / LSTM (opsets 7-22) unrolled over the static sequence length into graph ops.
// Spec: onnx.defs.get_schema("RNN" / "GRU" / "LSTM").doc (equations, gate orders, attributes).
//
//   X [T, B, I] (layout 1: [B, T, I]); W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H] (Wb, Rb);
//   initial_h / initial_c [D, B, H] (layout 1: [B, D, H]); P [D, 3H] (LSTM peepholes i, o, f).
//   Gate orders: LSTM i, o, f, c; GRU z, r, h; RNN one gate. D = 2 for direction bidirectional
//   (forward, then reverse), else 1.
//   RNN:  H = f(x W^T + h R^T + Wb + Rb)
//   GRU:  z = f(..z), r = f(..r); h~ = g(x Wh^T + (r * h) Rh^T + Rbh + Wbh)   (linear_before_reset 0)
//                                     g(x Wh^T + r * (h Rh^T + Rbh) + Wbh)   (linear_before_reset 1)
//         H = (1 - z) * h~ + z * h
//   LSTM: i = f(.. + Pi * c), f = f(.. + Pf * c) (input_forget: f = 1 - i), c~ = g(..),
//         C = f * c + i * c~, o = f(.. + Po * C), H = o * h(C)
//   clip bounds every activation's input to [-clip, clip]. activations (default Sigmoid / Tanh /
//   Tanh; RNN Tanh), one list per direction, with activation_alpha / activation_beta consumed in
//   order by the functions that take them (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
//   HardSigmoid, Elu), defaults as the ONNX operators of the same name (ONNX Runtime's reading).
//   sequence_lens (run time allowed): a step t >= len[b] keeps batch b's state and writes 0 to Y,
//   so the reverse direction starts at len[b] - 1 from the initial state.
//   Outputs: Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H] (layout 1: [B, D, H]).
#include <algorithm>
#include <cctype>

#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

enum class Cell { kRnn, kGru, kLstm };

constexpr int64_t kMaxUnrolledSteps = 1024;

struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The activation list (per direction) with alpha / beta taken in order, as ONNX Runtime does.
std::vector<Activation> ParseActivations(NodeContext& ctx, const std::vector<std::string>& dflt, int64_t dirs) {
  std::vector<std::string> names;
  if (const onnx::AttributeProto* a = ctx.Attr("activations"))
    for (const std::string& s : a->strings()) names.push_back(s);
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  if (names.size() == dflt.size() && dirs == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != dflt.size() * static_cast<size_t>(dirs))
    ctx.Fail("activations must list " + std::to_string(dflt.size()) + " functions per direction, got " +
             std::to_string(names.size()));
  const std::vector<float> alphas = ctx.AttrFloats("activation_alpha"), betas = ctx.AttrFloats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& n : names) {
    Activation a{Lower(n)};
    auto alpha = [&](double d) { a.alpha = ai < alphas.size() ? alphas[ai++] : d; };
    auto beta = [&](double d) { a.beta = bi < betas.size() ? betas[bi++] : d; };
    if (a.name == "affine") alpha(1.0), beta(0.0);
    else if (a.name == "leakyrelu") alpha(0.01);
    else if (a.name == "thresholdedrelu") alpha(1.0);
    else if (a.name == "scaledtanh") alpha(1.0), beta(1.0);
    else if (a.name == "hardsigmoid") alpha(0.2), beta(0.5);
    else if (a.name == "elu") alpha(1.0);
    else if (a.name != "relu" && a.name != "tanh" && a.name != "sigmoid" && a.name != "softsign" && a.name != "softplus")
      ctx.Fail("unknown activation '" + n +
               "' (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, "
               "Softplus)");
    out.push_back(a);
  }
  return out;
}

class Unroller {
 public:
  Unroller(NodeContext& ctx, Cell cell) : ctx_(ctx), cell_(cell) {}

  void Run() {
    const std::vector<int64_t> xs = ctx_.InputShape(0);
    dt_ = ctx_.InputType(0).dtype;
    if (!dt_.is_float()) ctx_.Fail("X must be a float tensor, got " + dt_.str());
    if (xs.size() != 3) ctx_.Fail("X must have rank 3, got " + std::to_string(xs.size()));
    layout_ = ctx_.AttrInt("layout", 0);
    if (layout_ != 0 && layout_ != 1) ctx_.Fail("layout must be 0 or 1");
    t_ = layout_ ? xs[1] : xs[0];
    b_ = layout_ ? xs[0] : xs[1];
    const int64_t in = xs[2];
    if (t_ > kMaxUnrolledSteps)
      ctx_.Unsupported("the sequence is unrolled; length " + std::to_string(t_) + " exceeds " + std::to_string(kMaxUnrolledSteps));
    const std::string dir = ctx_.AttrString("direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
      ctx_.Fail("unknown direction '" + dir + "' (forward, reverse, bidirectional)");
    dirs_ = dir == "bidirectional" ? 2 : 1;
    gates_ = cell_ == Cell::kLstm ? 4 : cell_ == Cell::kGru ? 3 : 1;
    const std::vector<int64_t> ws = ctx_.InputShape(1), rs = ctx_.InputShape(2);
    if (ws.size() != 3 || ws[0] != dirs_ || ws[2] != in || ws[1] % gates_ != 0)
      ctx_.Fail("W must be [num_directions, " + std::to_string(gates_) + " * hidden_size, input_size]");
    h_ = ctx_.AttrInt("hidden_size", ws[1] / gates_);
    if (ws[1] != gates_ * h_ || rs != std::vector<int64_t>{dirs_, gates_ * h_, h_})
      ctx_.Fail("W / R do not match hidden_size " + std::to_string(h_));
    if (ctx_.HasInput(3) && ctx_.InputShape(3) != std::vector<int64_t>{dirs_, 2 * gates_ * h_})
      ctx_.Fail("B must be [num_directions, " + std::to_string(2 * gates_) + " * hidden_size]");
    if (ctx_.HasAttr("clip")) {
      clip_ = ctx_.AttrFloat("clip", 0.0f);
      if (clip_ <= 0) ctx_.Fail("clip must be > 0");
    }
    std::vector<std::string> dflt = {"Tanh"};
    if (cell_ == Cell::kGru) dflt = {"Sigmoid", "Tanh"};
    if (cell_ == Cell::kLstm) dflt = {"Sigmoid", "Tanh", "Tanh"};
    acts_ = ParseActivations(ctx_, dflt, dirs_);
    input_forget_ = cell_ == Cell::kLstm && ctx_.AttrInt("input_forget", 0) != 0;
    linear_before_reset_ = cell_ == Cell::kGru && ctx_.AttrInt("linear_before_reset", 0) != 0;
    ctx_.CheckMaxOutputs(cell_ == Cell::kLstm ? 3 : 2, "too many outputs");

    x_ = ctx_.Input(0);
    if (layout_) x_ = Transpose(ctx_, x_, {1, 0, 2});  // [T, B, I]
    SequenceMask();
    std::vector<Expr> ys, hs, cs;
    for (int64_t d = 0; d < dirs_; ++d) {
      const bool reverse = dir == "reverse" || d == 1;
      Direction(d, reverse, &ys, &hs, &cs);
    }
    auto stack = [&](std::vector<Expr> parts, int64_t axis) {
      for (Expr& p : parts) p = ctx_.Call("expand_dims", {p}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
      return parts.size() == 1 ? parts[0] : Concat(ctx_, parts, axis);
    };
    auto wants = [&](int i) { return ctx_.node().output_size() > i && !ctx_.node().output(i).empty(); };
    if (wants(0)) {
      Expr y = stack(ys, 1);  // ys: per direction [T, B, H] -> [T, D, B, H]
      if (layout_) y = Transpose(ctx_, y, {2, 0, 1, 3});
      ctx_.SetOutput(0, y);
    }
    auto state_out = [&](int i, const std::vector<Expr>& v) {
      Expr s = stack(v, 0);  // [D, B, H]
      if (layout_) s = Transpose(ctx_, s, {1, 0, 2});
      ctx_.SetOutput(i, s);
    };
    if (wants(1)) state_out(1, hs);
    if (cell_ == Cell::kLstm && wants(2)) state_out(2, cs);
  }

 private:
  Expr Act(const Activation& a, Expr x) {
    if (clip_ > 0) x = ctx_.Call("clip", {x}, Attrs{{"a_min", -clip_}, {"a_max", clip_}});
    auto c = [&](double v) { return ctx_.ScalarConst(v, dt_); };
    const std::string& n = a.name;
    if (n == "sigmoid") return ctx_.Call("sigmoid", {x});
    if (n == "tanh") return ctx_.Call("tanh", {x});
    if (n == "relu") return ctx_.Call("nn.relu", {x});
    if (n == "affine") return ctx_.Call("add", {ctx_.Call("multiply", {x, c(a.alpha)}), c(a.beta)});
    if (n == "leakyrelu") return ctx_.Call("nn.leaky_relu", {x}, Attrs{{"alpha", a.alpha}});
    if (n == "thresholdedrelu") return ctx_.Call("nn.thresholded_relu", {x}, Attrs{{"alpha", a.alpha}});
    if (n == "scaledtanh")
      return ctx_.Call("multiply", {ctx_.Call("tanh", {ctx_.Call("multiply", {x, c(a.beta)})}), c(a.alpha)});
    if (n == "hardsigmoid") return ctx_.Call("hard_sigmoid", {x}, Attrs{{"alpha", a.alpha}, {"beta", a.beta}});
    if (n == "elu") return ctx_.Call("nn.elu", {x}, Attrs{{"alpha", a.alpha}});
    if (n == "softsign") return ctx_.Call("nn.softsign", {x});
    return ctx_.Call("nn.softplus", {x});
  }

  // mask_[t] [B, 1] bool when sequence_lens may end a sequence early; empty otherwise.
  void SequenceMask() {
    if (!ctx_.HasInput(4)) return;
    if (ctx_.InputShape(4) != std::vector<int64_t>{b_}) ctx_.Fail("sequence_lens must be [batch_size]");
    if (runtime::NDArray lens = ctx_.InputConst(4); lens.defined()) {
      const std::vector<int64_t> v = ctx_.InputInts(4, "sequence_lens");
      if (std::all_of(v.begin(), v.end(), [&](int64_t l) { return l == t_; })) return;
    }
    Expr lens = ctx_.Call("cast", {ctx_.Input(4)}, Attrs{{"dtype", std::string("int64")}});
    lens = Reshape(ctx_, lens, {b_, 1});
    for (int64_t t = 0; t < t_; ++t)
      mask_.push_back(ctx_.Call("less", {ctx_.ScalarConst(static_cast<double>(t), DataType::Int(64)), lens}));
  }

  Expr Gate(Expr all, int64_t g) { return SliceAxis(ctx_, all, all_rank_ - 1, g * h_, (g + 1) * h_); }

  Expr InitialState(int input, int64_t d) {
    if (!ctx_.HasInput(input))
      return ctx_.Call("broadcast_to", {ctx_.ScalarConst(0, dt_)}, Attrs{{"shape", std::vector<int64_t>{b_, h_}}});
    const std::vector<int64_t> want = layout_ ? std::vector<int64_t>{b_, dirs_, h_} : std::vector<int64_t>{dirs_, b_, h_};
    if (ctx_.InputShape(input) != want) ctx_.Fail("initial_h / initial_c must be [num_directions, batch, hidden] (layout 1: [batch, num_directions, hidden])");
    return Reshape(ctx_, SliceAxis(ctx_, ctx_.Input(input), layout_ ? 1 : 0, d, d + 1), {b_, h_});
  }

  void Direction(int64_t d, bool reverse, std::vector<Expr>* ys, std::vector<Expr>* hs, std::vector<Expr>* cs) {
    const int64_t gh = gates_ * h_;
    Expr w = Reshape(ctx_, SliceAxis(ctx_, ctx_.Input(1), 0, d, d + 1), {gh, StaticShape(ctx_, x_)[2]});
    Expr rt = Transpose(ctx_, Reshape(ctx_, SliceAxis(ctx_, ctx_.Input(2), 0, d, d + 1), {gh, h_}), {1, 0});  // [H, G*H]
    Expr xp = ctx_.Call("nn.matmul", {x_, Transpose(ctx_, w, {1, 0})});  // [T, B, G*H]
    Expr rb;
    if (ctx_.HasInput(3)) {
      Expr bias = Reshape(ctx_, SliceAxis(ctx_, ctx_.Input(3), 0, d, d + 1), {2 * gh});
      xp = ctx_.Call("add", {xp, SliceAxis(ctx_, bias, 0, 0, gh)});
      rb = SliceAxis(ctx_, bias, 0, gh, 2 * gh);
    }
    Expr p;
    if (cell_ == Cell::kLstm && ctx_.HasInput(7)) {
      if (ctx_.InputShape(7) != std::vector<int64_t>{dirs_, 3 * h_}) ctx_.Fail("P must be [num_directions, 3 * hidden_size]");
      p = Reshape(ctx_, SliceAxis(ctx_, ctx_.Input(7), 0, d, d + 1), {3 * h_});
    }
    const size_t a0 = static_cast<size_t>(d) * (acts_.size() / dirs_);
    Expr h = InitialState(5, d), c = cell_ == Cell::kLstm ? InitialState(6, d) : Expr();
    std::vector<Expr> y(t_);
    all_rank_ = 2;
    for (int64_t s = 0; s < t_; ++s) {
      const int64_t t = reverse ? t_ - 1 - s : s;
      Expr xt = Reshape(ctx_, SliceAxis(ctx_, xp, 0, t, t + 1), {b_, gh});
      Expr hn, cn;
      if (cell_ == Cell::kRnn) {
        Expr pre = ctx_.Call("add", {xt, ctx_.Call("nn.matmul", {h, rt})});
        if (rb) pre = ctx_.Call("add", {pre, rb});
        hn = Act(acts_[a0], pre);
      } else if (cell_ == Cell::kGru) {
        Expr hr = ctx_.Call("nn.matmul", {h, SliceAxis(ctx_, rt, 1, 0, 2 * h_)});  // z, r
        if (rb) hr = ctx_.Call("add", {hr, SliceAxis(ctx_, rb, 0, 0, 2 * h_)});
        Expr z = Act(acts_[a0], ctx_.Call("add", {Gate(xt, 0), Gate(hr, 0)}));
        Expr r = Act(acts_[a0], ctx_.Call("add", {Gate(xt, 1), Gate(hr, 1)}));
        Expr rh = SliceAxis(ctx_, rt, 1, 2 * h_, 3 * h_);
        Expr rbh = rb ? SliceAxis(ctx_, rb, 0, 2 * h_, 3 * h_) : Expr();
        Expr rec;
        if (linear_before_reset_) {
          rec = ctx_.Call("nn.matmul", {h, rh});
          if (rbh) rec = ctx_.Call("add", {rec, rbh});
          rec = ctx_.Call("multiply", {r, rec});
        } else {
          rec = ctx_.Call("nn.matmul", {ctx_.Call("multiply", {r, h}), rh});
          if (rbh) rec = ctx_.Call("add", {rec, rbh});
        }
        Expr hh = Act(acts_[a0 + 1], ctx_.Call("add", {Gate(xt, 2), rec}));
        Expr one_minus_z = ctx_.Call("subtract", {ctx_.ScalarConst(1, dt_), z});
        hn = ctx_.Call("add", {ctx_.Call("multiply", {one_minus_z, hh}), ctx_.Call("multiply", {z, h})});
      } else {
        Expr g = ctx_.Call("add", {xt, ctx_.Call("nn.matmul", {h, rt})});
        if (rb) g = ctx_.Call("add", {g, rb});
        auto peep = [&](Expr pre, int64_t k, Expr state) {
          return p ? ctx_.Call("add", {pre, ctx_.Call("multiply", {SliceAxis(ctx_, p, 0, k * h_, (k + 1) * h_), state})}) : pre;
        };
        Expr i = Act(acts_[a0], peep(Gate(g, 0), 0, c));
        Expr f = input_forget_ ? ctx_.Call("subtract", {ctx_.ScalarConst(1, dt_), i}) : Act(acts_[a0], peep(Gate(g, 2), 2, c));
        Expr cc = Act(acts_[a0 + 1], Gate(g, 3));
        cn = ctx_.Call("add", {ctx_.Call("multiply", {f, c}), ctx_.Call("multiply", {i, cc})});
        Expr o = Act(acts_[a0], peep(Gate(g, 1), 1, cn));
        hn = ctx_.Call("multiply", {o, Act(acts_[a0 + 2], cn)});
      }
      if (!mask_.empty()) {
        y[t] = ctx_.Call("where", {mask_[t], hn, ctx_.ScalarConst(0, dt_)});
        hn = ctx_.Call("where", {mask_[t], hn, h});
        if (cn) cn = ctx_.Call("where", {mask_[t], cn, c});
      } else {
        y[t] = hn;
      }
      h = hn;
      c = cn;
    }
    std::vector<Expr> parts;
    for (Expr& e : y) parts.push_back(ctx_.Call("expand_dims", {e}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
    ys->push_back(parts.size() == 1 ? parts[0] : Concat(ctx_, parts, 0));  // [T, B, H]
    hs->push_back(h);
    if (c) cs->push_back(c);
  }

  NodeContext& ctx_;
  Cell cell_;
  DataType dt_;
  int64_t layout_ = 0, t_ = 0, b_ = 0, h_ = 0, dirs_ = 1, gates_ = 1, all_rank_ = 2;
  double clip_ = 0;
  bool input_forget_ = false, linear_before_reset_ = false;
  std::vector<Activation> acts_;
  std::vector<Expr> mask_;
  Expr x_;
};

}  // namespace

void RegisterRnnConverters(ConverterTable& t) {
  t["RNN"] = [](NodeContext& ctx) { Unroller(ctx, Cell::kRnn).Run(); };
  t["GRU"] = [](NodeContext& ctx) { Unroller(ctx, Cell::kGru).Run(); };
  t["LSTM"] = [](NodeContext& ctx) { Unroller(ctx, Cell::kLstm).Run(); };
}

}  // namespace tessera::frontend::onnx_import
