// The `csource` backend: plain C loops for its regions, compiled by the system C compiler into
// the model library (byoc/external_codegen.h). The example a vendor copies: a predicate that says
// what it runs (Supports) and one emitter per op (kEmitters), nothing else.
//
// Every value is float32, NCHW / OIHW, row-major, static shape. The kernel mallocs its
// temporaries per call and frees them before returning; a result written by a step goes straight
// into the output argument.
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

#include "tessera/byoc/external_codegen.h"
#include "tessera/byoc/region.h"
#include "tessera/graph/attrs.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/support/error.h"

namespace tessera::byoc {
namespace {

using Shape = std::vector<int64_t>;

/// One step's view for an emitter: its C names and shapes.
struct StepView {
  const RegionStep& step;
  const Region& region;
  std::vector<std::string> in;  // C expressions of the inputs
  std::string out;
  const Shape& InShape(size_t i) const { return region.values[step.args[i]].shape; }
  const Shape& OutShape() const { return region.values[step.out].shape; }
  const graph::Attrs& attrs() const { return step.call->attrs; }
};

std::string I(int64_t v) { return std::to_string(v); }

/// Nested loops over `shape` (i0, i1, ...) around `body(index of each dim)`.
void Loops(std::ostringstream& os, const Shape& shape, const std::function<std::string()>& body) {
  for (size_t d = 0; d < shape.size(); ++d)
    os << "  for (int64_t i" << d << " = 0; i" << d << " < " << shape[d] << "; ++i" << d << ")\n";
  os << "  { " << body() << " }\n";
}

/// The flat index into a tensor of `in` broadcast (numpy, right-aligned) to `out`.
std::string BroadcastIndex(const Shape& in, const Shape& out) {
  const Shape st = Strides(in);
  std::string idx;
  const size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    idx += (idx.empty() ? "" : " + ") + std::string("i") + std::to_string(d + off) + "*" + I(st[d]);
  }
  return idx.empty() ? "0" : idx;
}

void Binary(std::ostringstream& os, const StepView& s, const std::string& op) {
  const Shape& out = s.OutShape();
  const std::string a = s.in[0] + "[" + BroadcastIndex(s.InShape(0), out) + "]";
  const std::string b = s.in[1] + "[" + BroadcastIndex(s.InShape(1), out) + "]";
  std::string e = op == "max" ? "fmaxf(" + a + ", " + b + ")" : op == "min" ? "fminf(" + a + ", " + b + ")"
                                                                             : a + " " + op + " " + b;
  Loops(os, out, [&] { return s.out + "[" + BroadcastIndex(out, out) + "] = " + e + ";"; });
}

void Unary(std::ostringstream& os, const StepView& s, const std::string& expr_of_x) {
  os << "  for (int64_t i = 0; i < " << s.region.values[s.step.out].NumElements() << "; ++i) { float x = "
     << s.in[0] << "[i]; " << s.out << "[i] = " << expr_of_x << "; }\n";
}

void BiasAdd(std::ostringstream& os, const StepView& s) {
  const Shape& out = s.OutShape();
  int64_t axis = s.attrs().GetInt("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  Loops(os, out, [&] {
    return s.out + "[" + BroadcastIndex(out, out) + "] = " + s.in[0] + "[" + BroadcastIndex(out, out) + "] + " +
           s.in[1] + "[i" + I(axis) + "];";
  });
}

void Conv2D(std::ostringstream& os, const StepView& s) {
  const Shape &x = s.InShape(0), &w = s.InShape(1), &y = s.OutShape();
  const int64_t groups = s.attrs().GetInt("groups", 1);
  const Shape st = s.attrs().GetInts("strides", {1, 1}), dil = s.attrs().GetInts("dilation", {1, 1});
  const Shape pad = Padding2D(s.attrs());
  const int64_t cg = w[1], og = y[1] / groups;
  os << "  for (int64_t n = 0; n < " << y[0] << "; ++n)\n"
     << "  for (int64_t oc = 0; oc < " << y[1] << "; ++oc) {\n"
     << "    const int64_t g = oc / " << og << ";\n"
     << "    for (int64_t oh = 0; oh < " << y[2] << "; ++oh)\n"
     << "    for (int64_t ow = 0; ow < " << y[3] << "; ++ow) {\n"
     << "      float acc = 0.0f;\n"
     << "      for (int64_t ic = 0; ic < " << cg << "; ++ic)\n"
     << "      for (int64_t kh = 0; kh < " << w[2] << "; ++kh) {\n"
     << "        const int64_t ih = oh * " << st[0] << " - " << pad[0] << " + kh * " << dil[0] << ";\n"
     << "        if (ih < 0 || ih >= " << x[2] << ") continue;\n"
     << "        for (int64_t kw = 0; kw < " << w[3] << "; ++kw) {\n"
     << "          const int64_t iw = ow * " << st[1] << " - " << pad[1] << " + kw * " << dil[1] << ";\n"
     << "          if (iw < 0 || iw >= " << x[3] << ") continue;\n"
     << "          acc += " << s.in[0] << "[((n * " << x[1] << " + g * " << cg << " + ic) * " << x[2] << " + ih) * "
     << x[3] << " + iw] * " << s.in[1] << "[((oc * " << cg << " + ic) * " << w[2] << " + kh) * " << w[3] << " + kw];\n"
     << "        }\n"
     << "      }\n"
     << "      " << s.out << "[((n * " << y[1] << " + oc) * " << y[2] << " + oh) * " << y[3] << " + ow] = acc;\n"
     << "    }\n"
     << "  }\n";
}

void Pool2D(std::ostringstream& os, const StepView& s, bool max) {
  const Shape &x = s.InShape(0), &y = s.OutShape();
  const Shape k = s.attrs().GetInts("pool_size"), st = s.attrs().GetInts("strides", {1, 1}),
              dil = s.attrs().GetInts("dilation", {1, 1});
  const Shape pad = Padding2D(s.attrs());
  const bool include_pad = s.attrs().GetInt("count_include_pad", 0) != 0;
  os << "  for (int64_t nc = 0; nc < " << y[0] * y[1] << "; ++nc)\n"
     << "  for (int64_t oh = 0; oh < " << y[2] << "; ++oh)\n"
     << "  for (int64_t ow = 0; ow < " << y[3] << "; ++ow) {\n"
     << "    float acc = " << (max ? "-INFINITY" : "0.0f") << "; int64_t count = 0;\n"
     << "    for (int64_t kh = 0; kh < " << k[0] << "; ++kh) {\n"
     << "      const int64_t ih = oh * " << st[0] << " - " << pad[0] << " + kh * " << dil[0] << ";\n"
     << "      if (ih < 0 || ih >= " << x[2] << ") continue;\n"
     << "      for (int64_t kw = 0; kw < " << k[1] << "; ++kw) {\n"
     << "        const int64_t iw = ow * " << st[1] << " - " << pad[1] << " + kw * " << dil[1] << ";\n"
     << "        if (iw < 0 || iw >= " << x[3] << ") continue;\n"
     << "        const float v = " << s.in[0] << "[(nc * " << x[2] << " + ih) * " << x[3] << " + iw];\n"
     << "        " << (max ? "acc = v > acc ? v : acc;" : "acc += v;") << " ++count;\n"
     << "      }\n"
     << "    }\n"
     << "    " << s.out << "[(nc * " << y[2] << " + oh) * " << y[3] << " + ow] = "
     << (max ? "acc" : include_pad ? "acc / " + I(k[0] * k[1]) + ".0f" : "count ? acc / (float)count : 0.0f")
     << ";\n"
     << "  }\n";
}

void GlobalAvgPool(std::ostringstream& os, const StepView& s) {
  const Shape& x = s.InShape(0);
  const int64_t hw = x[2] * x[3];
  os << "  for (int64_t nc = 0; nc < " << x[0] * x[1] << "; ++nc) { float acc = 0.0f;\n"
     << "    for (int64_t i = 0; i < " << hw << "; ++i) acc += " << s.in[0] << "[nc * " << hw << " + i];\n"
     << "    " << s.out << "[nc] = acc / " << hw << ".0f; }\n";
}

// x [M.., K] times w [N, K]^T (dense) or x [M.., K] times w [K, N] (matmul with a 2-D right side).
void Gemm(std::ostringstream& os, const StepView& s, bool transposed_w) {
  const Shape& x = s.InShape(0);
  const Shape& w = s.InShape(1);
  const int64_t k = x.back(), n = transposed_w ? w[0] : w[1];
  const int64_t m = s.region.values[s.step.args[0]].NumElements() / k;
  const std::string widx = transposed_w ? "j * " + I(k) + " + p" : "p * " + I(n) + " + j";
  os << "  for (int64_t i = 0; i < " << m << "; ++i)\n"
     << "  for (int64_t j = 0; j < " << n << "; ++j) { float acc = 0.0f;\n"
     << "    for (int64_t p = 0; p < " << k << "; ++p) acc += " << s.in[0] << "[i * " << k << " + p] * " << s.in[1]
     << "[" << widx << "];\n"
     << "    " << s.out << "[i * " << n << " + j] = acc; }\n";
}

void Softmax(std::ostringstream& os, const StepView& s) {
  const Shape& x = s.InShape(0);
  int64_t axis = s.attrs().GetInt("axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  const int64_t len = x[axis];
  os << "  for (int64_t o = 0; o < " << outer << "; ++o) for (int64_t in = 0; in < " << inner << "; ++in) {\n"
     << "    const int64_t base = o * " << len * inner << " + in; float mx = -INFINITY, sum = 0.0f;\n"
     << "    for (int64_t a = 0; a < " << len << "; ++a) { float v = " << s.in[0] << "[base + a * " << inner
     << "]; mx = v > mx ? v : mx; }\n"
     << "    for (int64_t a = 0; a < " << len << "; ++a) { float e = expf(" << s.in[0] << "[base + a * " << inner
     << "] - mx); " << s.out << "[base + a * " << inner << "] = e; sum += e; }\n"
     << "    for (int64_t a = 0; a < " << len << "; ++a) " << s.out << "[base + a * " << inner << "] /= sum;\n"
     << "  }\n";
}

void Transpose(std::ostringstream& os, const StepView& s) {
  const Shape& x = s.InShape(0);
  const Shape& y = s.OutShape();
  Shape axes = s.attrs().GetInts("axes", {});
  if (axes.empty())
    for (int64_t d = static_cast<int64_t>(x.size()) - 1; d >= 0; --d) axes.push_back(d);
  const Shape xs = Strides(x);
  std::string src;
  for (size_t d = 0; d < y.size(); ++d) {
    int64_t a = axes[d] < 0 ? axes[d] + static_cast<int64_t>(x.size()) : axes[d];
    src += (src.empty() ? "" : " + ") + std::string("i") + std::to_string(d) + "*" + I(xs[a]);
  }
  Loops(os, y, [&] { return s.out + "[" + BroadcastIndex(y, y) + "] = " + s.in[0] + "[" + (src.empty() ? "0" : src) + "];"; });
}

using Emitter = std::function<void(std::ostringstream&, const StepView&)>;

const std::map<std::string, Emitter>& Emitters() {
  static const std::map<std::string, Emitter> table = {
      {"nn.conv2d", Conv2D},
      {"nn.bias_add", BiasAdd},
      {"add", [](auto& os, const auto& s) { Binary(os, s, "+"); }},
      {"subtract", [](auto& os, const auto& s) { Binary(os, s, "-"); }},
      {"multiply", [](auto& os, const auto& s) { Binary(os, s, "*"); }},
      {"divide", [](auto& os, const auto& s) { Binary(os, s, "/"); }},
      {"maximum", [](auto& os, const auto& s) { Binary(os, s, "max"); }},
      {"minimum", [](auto& os, const auto& s) { Binary(os, s, "min"); }},
      {"nn.relu", [](auto& os, const auto& s) { Unary(os, s, "x > 0.0f ? x : 0.0f"); }},
      {"sigmoid", [](auto& os, const auto& s) { Unary(os, s, "1.0f / (1.0f + expf(-x))"); }},
      {"tanh", [](auto& os, const auto& s) { Unary(os, s, "tanhf(x)"); }},
      {"exp", [](auto& os, const auto& s) { Unary(os, s, "expf(x)"); }},
      {"sqrt", [](auto& os, const auto& s) { Unary(os, s, "sqrtf(x)"); }},
      {"clip",
       [](auto& os, const auto& s) {
         char lo[64], hi[64];
         std::snprintf(lo, sizeof lo, "%a", static_cast<float>(s.attrs().GetDouble("a_min")));
         std::snprintf(hi, sizeof hi, "%a", static_cast<float>(s.attrs().GetDouble("a_max")));
         Unary(os, s, std::string("x < ") + lo + "f ? " + lo + "f : (x > " + hi + "f ? " + hi + "f : x)");
       }},
      {"nn.max_pool2d", [](auto& os, const auto& s) { Pool2D(os, s, true); }},
      {"nn.avg_pool2d", [](auto& os, const auto& s) { Pool2D(os, s, false); }},
      {"nn.global_avg_pool2d", GlobalAvgPool},
      {"nn.dense", [](auto& os, const auto& s) { Gemm(os, s, true); }},
      {"nn.matmul", [](auto& os, const auto& s) { Gemm(os, s, false); }},
      {"nn.softmax", Softmax},
      {"transpose", Transpose},
      // No reshape / squeeze / expand_dims: on Tessera's path they are zero-copy aliases.
  };
  return table;
}

/// The C name of a value.
std::string Name(const Region& r, int v) {
  return r.values[v].kind == RegionValue::kConstant ? r.symbol + "_c" + std::to_string(v) : "v" + std::to_string(v);
}

void EmitC(std::ostringstream& os, const Region& r) {
  os << "\n/* region " << r.symbol << " */\n";
  for (size_t v = 0; v < r.values.size(); ++v) {
    if (r.values[v].kind != RegionValue::kConstant) continue;
    const runtime::NDArray& c = r.constants[r.values[v].index];
    os << "static const float " << Name(r, static_cast<int>(v)) << "[" << std::max<int64_t>(1, c.NumElements()) << "] = {";
    for (int64_t i = 0; i < c.NumElements(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%a", c.data<float>()[i]);
      os << (i ? ", " : "") << buf << "f";
    }
    os << "};\n";
  }
  os << "\nint32_t " << r.symbol << "(void* const* args) {\n";
  for (size_t i = 0; i < r.params.size(); ++i)
    os << "  const float* " << Name(r, r.params[i]) << " = (const float*)args[" << i << "];\n";
  // Each result's output argument; a temp that is a result (the first time) is written there.
  std::map<int, std::string> bound;
  std::vector<std::string> copies;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const int v = r.results[i];
    const std::string arg = "(float*)args[" + std::to_string(r.params.size() + i) + "]";
    if (r.values[v].kind == RegionValue::kTemp && !bound.count(v)) {
      bound[v] = arg;
      os << "  float* " << Name(r, v) << " = " << arg << ";\n";
    } else {
      copies.push_back("  memcpy(" + arg + ", " + Name(r, v) + ", sizeof(float) * " + I(r.values[v].NumElements()) + ");\n");
    }
  }
  std::vector<std::string> temps;
  for (const RegionStep& s : r.steps) {
    if (bound.count(s.out)) continue;
    temps.push_back(Name(r, s.out));
    os << "  float* " << temps.back() << " = (float*)malloc(sizeof(float) * " << r.values[s.out].NumElements() << ");\n";
  }
  os << "  int32_t status = 0;\n";
  for (const std::string& t : temps) os << "  if (!" << t << ") { status = -1; goto done; }\n";
  for (const RegionStep& s : r.steps) {
    StepView view{s, r, {}, Name(r, s.out)};
    for (int a : s.args) view.in.push_back(Name(r, a));
    os << "  /* " << s.op << " */\n";
    auto it = Emitters().find(s.op);
    if (it == Emitters().end())
      TESSERA_THROW(UnsupportedError, "BYOC backend 'csource', region ", r.symbol, ": no C emitter for op '", s.op,
                    "'; its predicate should have kept it on Tessera's path");
    it->second(os, view);
  }
  for (const std::string& c : copies) os << c;
  os << "done:\n";
  for (const std::string& t : temps) os << "  free(" << t << ");\n";
  os << "  return status;\n}\n";
}

class CSourceCodegen : public ExternalCodegen {
 public:
  std::string name() const override { return "csource"; }

  bool Supports(const graph::CallNode& call) const override {
    const auto* op = call.op->as<graph::OpNode>();
    if (!op || !Emitters().count(op->name) || !AllStaticFloat32(call)) return false;
    const graph::Attrs& a = call.attrs;
    if (op->name == "nn.conv2d")
      return a.GetString("data_layout", "NCHW") == "NCHW" && a.GetString("kernel_layout", "OIHW") == "OIHW";
    if (op->name == "nn.max_pool2d" || op->name == "nn.avg_pool2d" || op->name == "nn.global_avg_pool2d")
      return a.GetString("layout", "NCHW") == "NCHW" && (op->name != "nn.avg_pool2d" || a.GetInt("ceil_mode", 0) == 0);
    if (op->name == "nn.matmul") {  // [.., K] times a 2-D [K, N]
      const auto* b = call.args[1]->checked_type()->as<graph::TensorTypeNode>();
      const auto* x = call.args[0]->checked_type()->as<graph::TensorTypeNode>();
      return b->ndim() == 2 && x->ndim() >= 2;
    }
    return true;
  }

  ExternalSource Generate(const std::vector<ExternalRegion>& regions) const override {
    std::ostringstream os;
    os << "// Generated by Tessera's csource BYOC backend.\n"
       << "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n";
    ExternalSource out{name(), "c", "", {}};
    for (const ExternalRegion& x : regions) {
      EmitC(os, FlattenRegion(*x.function, name(), x.symbol));
      out.symbols.push_back(x.symbol);
    }
    out.code = os.str();
    return out;
  }
};

}  // namespace

std::unique_ptr<ExternalCodegen> MakeCSourceCodegen() { return std::make_unique<CSourceCodegen>(); }

}  // namespace tessera::byoc
