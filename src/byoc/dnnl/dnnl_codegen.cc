// The `dnnl` backend: oneDNN (Debian libdnnl-dev 2.6) for conv2d (+ bias / eltwise post-ops),
// dense / matmul of any rank (+ bias / eltwise), max / avg / global-avg pooling, eltwise (relu,
// leaky_relu, sigmoid, tanh, exp, sqrt, clip, hard_swish, hard_sigmoid, gelu), binary, softmax,
// the composites of dnnl_patterns.h (layer norm, erf GELU), and reshapes (a view of the plain
// bytes, so that they do not cut regions).
// It emits C++ over the helpers of dnnl_prelude.cc: per external function a Region subclass whose
// constructor creates the primitives (run once, on the first call) and an extern "C" kernel.
//
// Fusion (oneDNN post-ops, TVM's DNNL composites): a conv2d / dense / matmul whose only user is a bias
// (bias_add, or add of a constant per-channel tensor) takes it as its bias; then eltwise ops
// (all but exp and sqrt) that are the only user of the value before them become post-ops.
#include <cstdio>
#include <map>
#include <sstream>

#include "tessera/byoc/external_codegen.h"
#include "tessera/byoc/region.h"
#include "tessera/graph/attrs.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/support/error.h"

#include "dnnl_patterns.h"

namespace tessera::byoc {

extern const char* const kDnnlPrelude;  // dnnl_prelude.cc

namespace {

using Shape = std::vector<int64_t>;

std::string Dims(const Shape& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

/// One oneDNN eltwise operation: algorithm, alpha, beta.
struct Elt {
  std::string alg;
  double alpha = 0, beta = 0;
};

/// The oneDNN eltwise operations an elementwise op is (one, or two for hard_sigmoid), or empty.
std::vector<Elt> EltwiseOf(const RegionStep& s) {
  const graph::Attrs& a = s.call->attrs;
  if (s.op == "nn.relu") return {{"algorithm::eltwise_relu"}};
  if (s.op == "nn.leaky_relu") return {{"algorithm::eltwise_relu", a.GetDouble("alpha", 0.01)}};
  if (s.op == "sigmoid") return {{"algorithm::eltwise_logistic"}};
  if (s.op == "tanh") return {{"algorithm::eltwise_tanh"}};
  if (s.op == "exp") return {{"algorithm::eltwise_exp"}};
  if (s.op == "sqrt") return {{"algorithm::eltwise_sqrt"}};
  if (s.op == "hard_swish") return {{"algorithm::eltwise_hardswish"}};
  if (s.op == "dnnl.gelu") return {{"algorithm::eltwise_gelu_erf"}};  // dnnl_patterns.h
  if (s.op == "nn.gelu")
    return {{a.GetString("approximate", "none") == "tanh" ? "algorithm::eltwise_gelu_tanh" : "algorithm::eltwise_gelu_erf"}};
  if (s.op == "hard_sigmoid")  // clip(alpha x + beta, 0, 1)
    return {{"algorithm::eltwise_linear", a.GetDouble("alpha", 0.2), a.GetDouble("beta", 0.5)},
            {"algorithm::eltwise_clip", 0.0, 1.0}};
  if (s.op == "clip") return {{"algorithm::eltwise_clip", a.GetDouble("a_min"), a.GetDouble("a_max")}};
  return {};
}

bool IsReshape(const std::string& op) {
  return op == "reshape" || op == "squeeze" || op == "expand_dims" || op == "nn.batch_flatten";
}

std::string BinaryAlg(const std::string& op) {
  if (op == "add" || op == "nn.bias_add") return "algorithm::binary_add";
  if (op == "subtract") return "algorithm::binary_sub";
  if (op == "multiply") return "algorithm::binary_mul";
  if (op == "divide") return "algorithm::binary_div";
  if (op == "maximum") return "algorithm::binary_max";
  if (op == "minimum") return "algorithm::binary_min";
  return "";
}

std::string F(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<float>(v));  // exact; a valid C++17 literal
  return std::string(buf) + "f";
}

class Emitter {
 public:
  Emitter(const Region& r, const std::vector<bool>& constant_params) : r_(r), constant_(constant_params) {
    consumers_.resize(r.values.size());
    for (size_t i = 0; i < r.steps.size(); ++i)
      for (int a : r.steps[i].args) consumers_[a].push_back(static_cast<int>(i));
  }

  void Emit(std::ostringstream& os) {
    const std::string cls = "Region_" + r_.symbol;
    os << "\nnamespace {\nclass " << cls << " : public Region {\n public:\n  " << cls << "() {\n";
    for (size_t v = 0; v < r_.values.size(); ++v) {
      const RegionValue& val = r_.values[v];
      if (val.kind == RegionValue::kParam) {
        const bool c = val.index < static_cast<int>(constant_.size()) && constant_[val.index];
        os << "    memory " << M(v) << " = Arg(" << val.index << ", " << Dims(val.shape) << ", " << (c ? "true" : "false")
           << ");\n";
      } else if (val.kind == RegionValue::kConstant) {
        os << "    memory " << M(v) << " = Const(" << r_.symbol << "_c" << v << ", " << Dims(val.shape) << ");\n";
      }
    }
    absorbed_.assign(r_.steps.size(), false);
    for (size_t i = 0; i < r_.steps.size(); ++i)
      if (!absorbed_[i]) Step(os, static_cast<int>(i));
    for (size_t i = 0; i < r_.results.size(); ++i) {
      const int v = ValueOf(r_.results[i]);
      os << "    Result(" << r_.params.size() + i << ", " << M(v) << ", " << Dims(r_.values[r_.results[i]].shape) << ");\n";
    }
    os << "  }\n};\n}  // namespace\n"
       << "extern \"C\" int32_t " << r_.symbol << "(void* const* args) { return RunRegion<" << cls << ">(args, \""
       << r_.symbol << "\"); }\n"
       << "extern \"C\" int32_t " << r_.symbol << "__init(char* message, int64_t capacity) { return InitRegion<" << cls
       << ">(message, capacity); }\n";
  }

  void EmitConstants(std::ostringstream& os) {
    for (size_t v = 0; v < r_.values.size(); ++v) {
      if (r_.values[v].kind != RegionValue::kConstant) continue;
      const runtime::NDArray& c = r_.constants[r_.values[v].index];
      os << "static const float " << r_.symbol << "_c" << v << "[" << std::max<int64_t>(1, c.NumElements()) << "] = {";
      for (int64_t i = 0; i < c.NumElements(); ++i) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%a", c.data<float>()[i]);
        os << (i ? ", " : "") << buf << "f";
      }
      os << "};\n";
    }
  }

 private:
  std::string M(size_t v) const { return "m" + std::to_string(v); }
  // A step's output absorbed into a later step's post-ops is named by that step's output.
  int ValueOf(int v) const {
    auto it = alias_.find(v);
    return it == alias_.end() ? v : ValueOf(it->second);
  }
  std::string In(int v) const { return M(ValueOf(v)); }

  bool IsConstant(int v) const {
    const RegionValue& val = r_.values[v];
    return val.kind == RegionValue::kConstant ||
           (val.kind == RegionValue::kParam && val.index < static_cast<int>(constant_.size()) && constant_[val.index]);
  }

  /// The only step reading v, when v is read by exactly one step and is no result.
  int SoleConsumer(int v) const {
    if (r_.uses[v] != 1 || consumers_[v].size() != 1) return -1;
    return consumers_[v][0];
  }

  /// A bias for the conv / dense writing `v` (channels `c`): the consumer step and the bias value.
  bool BiasOf(int v, int64_t c, bool conv, int* step, int* bias) const {
    const int s = SoleConsumer(v);
    if (s < 0) return false;
    const RegionStep& st = r_.steps[s];
    if (st.op != "nn.bias_add" && st.op != "add") return false;
    const int other = st.args[0] == v ? st.args[1] : st.args[0];
    if (other == v || !IsConstant(other)) return false;
    const Shape& b = r_.values[other].shape;
    if (st.op == "nn.bias_add") {
      const int64_t rank = static_cast<int64_t>(r_.values[v].shape.size());
      int64_t axis = st.call->attrs.GetInt("axis", 1);
      if (axis < 0) axis += rank;
      if (axis != (conv ? 1 : rank - 1) || st.args[0] != v) return false;
    } else {
      int64_t n = 1;
      for (int64_t d : b) n *= d;
      if (n != c) return false;
      if (conv) {  // [C, 1, 1] or [1, C, 1, 1]
        if (!((b.size() == 3 && b[0] == c) || (b.size() == 4 && b[0] == 1 && b[1] == c))) return false;
      } else if (!((b.size() == 1) || (b.size() == 2 && b[0] == 1))) {
        return false;
      }
    }
    *step = s;
    *bias = other;
    return true;
  }

  /// Eltwise post-ops after `v`: appends "{alg, a, b}" and marks the steps absorbed; returns the
  /// last value of the chain.
  int PostOps(int v, std::string* list) {
    for (;;) {
      const int s = SoleConsumer(v);
      if (s < 0) return v;
      const RegionStep& st = r_.steps[s];
      const std::vector<Elt> elts = EltwiseOf(st);
      if (elts.empty() || st.op == "exp" || st.op == "sqrt") return v;
      for (const Elt& e : elts)
        *list += std::string(list->empty() ? "" : ", ") + "PostOp{" + e.alg + ", " + F(e.alpha) + ", " + F(e.beta) + "}";
      absorbed_[s] = true;
      alias_[st.out] = v;
      v = st.out;
    }
  }

  void Step(std::ostringstream& os, int i) {
    const RegionStep& s = r_.steps[i];
    const graph::Attrs& a = s.call->attrs;
    const Shape& out = r_.values[s.out].shape;
    if (s.op == "nn.conv2d" || s.op == "nn.dense") {
      const bool conv = s.op == "nn.conv2d";
      int last = s.out;
      std::string bias = "nullptr";
      int bias_step, bias_value;
      if (BiasOf(s.out, conv ? out[1] : out.back(), conv, &bias_step, &bias_value)) {
        const std::string name = "b" + std::to_string(i);
        os << "    memory " << name << " = View(" << In(bias_value) << ", {" << (conv ? out[1] : out.back()) << "});\n";
        bias = "&" + name;
        absorbed_[bias_step] = true;
        last = r_.steps[bias_step].out;
        alias_[last] = s.out;
      }
      std::string post;
      last = PostOps(last, &post);
      const bool cw = IsConstant(s.args[1]);
      if (conv) {
        const Shape pad = Padding2D(a);
        os << "    memory " << M(s.out) << " = Conv(" << In(s.args[0]) << ", " << In(s.args[1]) << ", " << bias << ", "
           << Dims(out) << ", " << Dims(a.GetInts("strides", {1, 1})) << ", " << Dims(a.GetInts("dilation", {1, 1}))
           << ", {" << pad[0] << ", " << pad[1] << "}, {" << pad[2] << ", " << pad[3] << "}, " << a.GetInt("groups", 1)
           << ", {" << post << "}, " << (cw ? "true" : "false") << ");\n";
      } else if (out.size() == 2) {
        os << "    memory " << M(s.out) << " = Dense(" << In(s.args[0]) << ", " << In(s.args[1]) << ", " << bias << ", "
           << Dims(out) << ", {" << post << "}, " << (cw ? "true" : "false") << ");\n";
      } else {  // [M.., K] as [M, K], the result [M, N] as [M.., N]
        const int64_t n = out.back(), m = r_.values[s.out].NumElements() / n;
        const int64_t k = r_.values[s.args[0]].shape.back();
        os << "    memory " << M(s.out) << " = View(Plainly(Dense(View(Plainly(" << In(s.args[0]) << "), {" << m << ", " << k
           << "}), " << In(s.args[1]) << ", " << bias << ", {" << m << ", " << n << "}, {" << post << "}, "
           << (cw ? "true" : "false") << ")), " << Dims(out) << ");\n";
      }
      return;
    }
    if (s.op == "nn.matmul") {
      // [.., M, K] x [K, N]: as one [M', K] x [K, N] (M' = the rows of every batch); [.., M, K] x
      // [.., K, N]: batched, the right side's missing leading dims as extent 1 (broadcast).
      const Shape& x = r_.values[s.args[0]].shape;
      const Shape& y = r_.values[s.args[1]].shape;
      const int64_t n = out.back();
      Shape xd = x, yd = y, od = out;
      if (y.size() == 2) {
        xd = {r_.values[s.args[0]].NumElements() / x.back(), x.back()};
        od = {xd[0], n};
      } else {
        while (yd.size() < xd.size()) yd.insert(yd.begin(), 1);
      }
      int last = s.out, bias_step, bias_value;
      std::string bias = "nullptr";
      if (BiasOf(s.out, n, false, &bias_step, &bias_value)) {
        const std::string name = "b" + std::to_string(i);
        Shape bd(od.size(), 1);
        bd.back() = n;
        os << "    memory " << name << " = View(" << In(bias_value) << ", " << Dims(bd) << ");\n";
        bias = "&" + name;
        absorbed_[bias_step] = true;
        last = r_.steps[bias_step].out;
        alias_[last] = s.out;
      }
      std::string post;
      PostOps(last, &post);
      auto view = [&](const std::string& m, const Shape& from, const Shape& to) {
        return from == to ? m : "View(Plainly(" + m + "), " + Dims(to) + ")";
      };
      const std::string mm = "MatMul(" + view(In(s.args[0]), x, xd) + ", " + view(In(s.args[1]), y, yd) + ", " + bias +
                             ", " + Dims(od) + ", {" + post + "}, " + (IsConstant(s.args[1]) ? "true" : "false") + ")";
      os << "    memory " << M(s.out) << " = " << (od == out ? mm : "View(" + mm + ", " + Dims(out) + ")") << ";\n";
      return;
    }
    if (s.op == "nn.max_pool2d" || s.op == "nn.avg_pool2d") {
      const Shape& x = r_.values[s.args[0]].shape;
      const Shape k = a.GetInts("pool_size"), st = a.GetInts("strides", {1, 1});
      const Shape pad = Padding2D(a);
      // pad_r so that oneDNN's output extent is ours (ceil_mode windows past the end).
      const int64_t pr_h = (out[2] - 1) * st[0] + k[0] - x[2] - pad[0];
      const int64_t pr_w = (out[3] - 1) * st[1] + k[1] - x[3] - pad[1];
      const std::string alg = s.op == "nn.max_pool2d" ? "algorithm::pooling_max"
                              : a.GetInt("count_include_pad", 0) ? "algorithm::pooling_avg_include_padding"
                                                                 : "algorithm::pooling_avg_exclude_padding";
      os << "    memory " << M(s.out) << " = Pool(" << In(s.args[0]) << ", " << alg << ", " << Dims(out) << ", "
         << Dims(k) << ", " << Dims(st) << ", {" << pad[0] << ", " << pad[1] << "}, {" << pr_h << ", " << pr_w << "});\n";
      return;
    }
    if (s.op == "nn.global_avg_pool2d") {
      const Shape& x = r_.values[s.args[0]].shape;
      os << "    memory " << M(s.out) << " = Pool(" << In(s.args[0]) << ", algorithm::pooling_avg_exclude_padding, "
         << Dims(out) << ", {" << x[2] << ", " << x[3] << "}, {1, 1}, {0, 0}, {0, 0});\n";
      return;
    }
    if (const std::vector<Elt> elts = EltwiseOf(s); !elts.empty()) {
      std::string x = In(s.args[0]);
      for (size_t k = 0; k < elts.size(); ++k) {
        const std::string out = k + 1 == elts.size() ? M(s.out) : M(s.out) + "_" + std::to_string(k);
        os << "    memory " << out << " = Eltwise(" << x << ", " << elts[k].alg << ", " << F(elts[k].alpha) << ", "
           << F(elts[k].beta) << ");\n";
        x = out;
      }
      return;
    }
    if (IsReshape(s.op)) {  // the same bytes in plain layout
      os << "    memory " << M(s.out) << " = View(Plainly(" << In(s.args[0]) << "), " << Dims(out) << ");\n";
      return;
    }
    if (!BinaryAlg(s.op).empty()) {
      int x = s.args[0], y = s.args[1];
      if (r_.values[x].shape != out) std::swap(x, y);  // Supports: only for commutative ops
      Shape yd = r_.values[y].shape;
      if (s.op == "nn.bias_add") {
        int64_t axis = a.GetInt("axis", 1);
        if (axis < 0) axis += static_cast<int64_t>(out.size());
        yd.assign(out.size(), 1);
        yd[axis] = r_.values[y].shape[0];
      }
      while (yd.size() < out.size()) yd.insert(yd.begin(), 1);
      os << "    memory " << M(s.out) << " = Binary(" << In(x) << ", " << In(y) << ", " << BinaryAlg(s.op) << ", "
         << Dims(yd) << ");\n";
      return;
    }
    if (s.op == "dnnl.layer_norm") {  // args: x, then gamma and beta ([C] or [1, .., C])
      const dnnl::LayerNormParts ln = dnnl::LayerNormOf(*s.composite);
      const int64_t c = out.back();
      auto channel = [&](int param) { return "View(" + In(s.args[param]) + ", {" + std::to_string(c) + "})"; };
      os << "    memory " << M(s.out) << "_shift = " << (ln.shift < 0 ? "memory()" : channel(ln.shift)) << ";\n"
         << "    memory " << M(s.out) << " = LayerNorm(" << In(s.args[0]) << ", " << channel(ln.scale) << ", "
         << (ln.shift < 0 ? "nullptr" : "&" + M(s.out) + "_shift") << ", " << F(ln.epsilon) << ");\n";
      return;
    }
    if (s.op == "nn.softmax") {
      int64_t axis = a.GetInt("axis", -1);
      if (axis < 0) axis += static_cast<int64_t>(out.size());
      os << "    memory " << M(s.out) << " = Softmax(" << In(s.args[0]) << ", " << axis << ");\n";
      return;
    }
    TESSERA_THROW(UnsupportedError, "BYOC backend 'dnnl', region ", r_.symbol, ": no oneDNN primitive for op '", s.op,
                  "'; its predicate should have kept it on Tessera's path");
  }

  const Region& r_;
  const std::vector<bool>& constant_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> absorbed_;
  std::map<int, int> alias_;
};

bool Rank(const graph::ExprNode& e, size_t lo, size_t hi) {
  const auto* t = e.checked_type()->as<graph::TensorTypeNode>();
  return t && t->shape.size() >= lo && t->shape.size() <= hi;
}
bool Rank(const graph::Expr& e, size_t lo, size_t hi) { return Rank(*e, lo, hi); }

Shape ShapeOf(const graph::Expr& e) {
  const auto* t = e->checked_type()->as<graph::TensorTypeNode>();
  Shape s;
  for (const auto& d : t->shape) s.push_back(d.value());
  return s;
}

class DnnlCodegen : public ExternalCodegen {
 public:
  std::string name() const override { return "dnnl"; }

  bool Supports(const graph::CallNode& call) const override {
    const auto* op = call.op->as<graph::OpNode>();
    if (!op || !AllStaticFloat32(call)) return false;
    const std::string& n = op->name;
    const graph::Attrs& a = call.attrs;
    if (n == "nn.conv2d")
      return a.GetString("data_layout", "NCHW") == "NCHW" && a.GetString("kernel_layout", "OIHW") == "OIHW";
    if (n == "nn.dense") return Rank(call.args[0], 2, 5);  // [M.., K]: as [M, K]
    if (n == "nn.matmul") {  // [.., M, K] x [K, N], or batched with the right side's batch dims broadcast
      if (!Rank(call.args[0], 2, 5) || !Rank(call.args[1], 2, 5)) return false;
      const Shape x = ShapeOf(call.args[0]), y = ShapeOf(call.args[1]);
      if (y.size() > x.size()) return false;
      for (size_t k = 2; k < y.size(); ++k) {  // batch dims, right-aligned
        const int64_t yb = y[y.size() - 1 - k], xb = x[x.size() - 1 - k];
        if (yb != xb && yb != 1) return false;
      }
      return true;
    }
    if (n == "nn.max_pool2d" || n == "nn.avg_pool2d")
      return a.GetString("layout", "NCHW") == "NCHW" && a.GetInts("dilation", {1, 1}) == Shape{1, 1} &&
             (n == "nn.max_pool2d" || a.GetInt("ceil_mode", 0) == 0);
    if (n == "nn.global_avg_pool2d") return a.GetString("layout", "NCHW") == "NCHW";
    if (n == "nn.relu" || n == "nn.leaky_relu" || n == "sigmoid" || n == "tanh" || n == "exp" || n == "sqrt" ||
        n == "clip" || n == "hard_swish" || n == "hard_sigmoid" || n == "nn.gelu")
      return Rank(call.args[0], 1, 5);
    if (IsReshape(n)) {
      // Only after an op of ours: alone, a reshape region would copy what Tessera aliases for free.
      const auto* producer = call.args[0]->as<graph::CallNode>();
      const auto* pop = producer ? producer->op->as<graph::OpNode>() : nullptr;
      return Rank(call.args[0], 1, 5) && Rank(call, 1, 5) && pop && Supports(*producer);
    }
    if (n == "nn.softmax") return Rank(call.args[0], 1, 5);
    if (n == "nn.bias_add") return Rank(call.args[0], 1, 5);
    if (!BinaryAlg(n).empty()) {
      if (!Rank(call.args[0], 1, 5) || !Rank(call.args[1], 1, 5)) return false;
      const Shape x = ShapeOf(call.args[0]), y = ShapeOf(call.args[1]);
      const auto* t = call.checked_type()->as<graph::TensorTypeNode>();
      Shape res;
      for (const auto& d : t->shape) res.push_back(d.value());
      const bool commutative = n == "add" || n == "multiply" || n == "maximum" || n == "minimum";
      return x == res || (commutative && y == res);
    }
    return false;
  }

  ExternalSource Generate(const std::vector<ExternalRegion>& regions) const override {
    std::ostringstream os;
    os << "// Generated by Tessera's dnnl BYOC backend (oneDNN).\n" << kDnnlPrelude;
    ExternalSource out{name(), "c++", "", {}};
    for (const ExternalRegion& x : regions) {
      const Region r = FlattenRegion(*x.function, name(), x.symbol, /*composites_as_steps=*/true);
      Emitter e(r, x.constant_params);
      e.EmitConstants(os);
      e.Emit(os);
      out.symbols.push_back(x.symbol);
    }
    out.code = os.str();
    return out;
  }

  // nodelete: oneDNN's worker threads (OpenMP) outlive a dlclose of the model library, so the
  // library (and with it libdnnl) stays mapped until the process exits.
  // A region of only elementwise / binary ops costs a call and its layout copies for work Tessera
  // fuses into its neighbours' kernels: only regions with an anchor op are worth it.
  bool WorthOffloading(const graph::FunctionNode& region) const override {
    for (const std::string& op : graph::transform::ExternalFunctionOps(region))
      if (op == "nn.conv2d" || op == "nn.dense" || op == "nn.matmul" || op == "nn.max_pool2d" ||
          op == "nn.avg_pool2d" || op == "nn.global_avg_pool2d" || op == "nn.softmax" || op == "dnnl.layer_norm")
        return true;
    return false;
  }

  std::vector<graph::transform::CompositePattern> Patterns() const override { return dnnl::Patterns(); }

  std::vector<std::string> LinkFlags() const override { return {"-ldnnl", "-lstdc++", "-Wl,-z,nodelete"}; }
};

}  // namespace

std::unique_ptr<ExternalCodegen> MakeDnnlCodegen() { return std::make_unique<DnnlCodegen>(); }

}  // namespace tessera::byoc
