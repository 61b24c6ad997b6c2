// The C++ helpers every source of the `dnnl` backend starts with (dnnl_codegen.cc emits one
// `Region` subclass per external function whose constructor calls them). A region:
//   - builds its oneDNN primitives once, on the first call (one engine and stream per region);
//   - lets each primitive choose its layouts (format_tag::any) and inserts reorders only where a
//     consumer wants another layout; results are reordered into the plain output buffers;
//   - reorders weights (parameters that are constants of the graph) only when their pointer
//     changes: once per executor, not per run;
//   - runs one call at a time (a mutex): several executors share its primitives and buffers.
namespace tessera::byoc {

extern const char* const kDnnlPrelude = R"PRELUDE(
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dnnl.hpp>

namespace {
using namespace dnnl;
using dims = memory::dims;
using dt = memory::data_type;
using tag = memory::format_tag;

tag Plain(size_t rank) {
  switch (rank) {
    case 1: return tag::a;
    case 2: return tag::ab;
    case 3: return tag::abc;
    case 4: return tag::abcd;
    case 5: return tag::abcde;
    default: return tag::abcdef;
  }
}
memory::desc PlainDesc(const dims& d) { return memory::desc(d, dt::f32, Plain(d.size())); }
memory::desc AnyDesc(const dims& d) { return memory::desc(d, dt::f32, tag::any); }

struct PostOp {
  algorithm alg;
  float alpha, beta;
};

struct Exec {
  primitive prim;
  std::unordered_map<int, memory> args;
};

class Region {
 public:
  Region() : eng_(engine::kind::cpu, 0), strm_(eng_) {}
  virtual ~Region() = default;

  int32_t Run(void* const* args) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [i, m] : bound_) m.set_data_handle(args[i]);
    bool fresh = false;
    for (auto& [i, ptr] : weights_) {
      if (ptr != args[i]) fresh = true;
      ptr = args[i];
    }
    if (fresh)
      for (Exec& e : prepare_) e.prim.execute(strm_, e.args);
    for (Exec& e : steps_) e.prim.execute(strm_, e.args);
    strm_.wait();
    return 0;
  }

 protected:
  // Kernel argument i, plain `d`; `constant`: a graph constant (weights), prepared once.
  memory Arg(int i, const dims& d, bool constant) {
    memory m(PlainDesc(d), eng_, DNNL_MEMORY_NONE);
    bound_.push_back({i, m});
    if (constant) weights_.push_back({i, nullptr});
    return m;
  }
  memory Const(const float* data, const dims& d) { return memory(PlainDesc(d), eng_, const_cast<float*>(data)); }
  // The same bytes as plain `d` (m must be plain).
  memory View(const memory& m, const dims& d) {
    for (auto& [i, b] : bound_)
      if (b.get() == m.get()) {
        memory v(PlainDesc(d), eng_, DNNL_MEMORY_NONE);
        bound_.push_back({i, v});
        return v;
      }
    return memory(PlainDesc(d), eng_, m.get_data_handle());
  }
  // m in layout d: m itself, or a reorder into a new buffer (in prepare_ when `once`).
  memory Want(const memory& m, const memory::desc& d, bool once = false) {
    if (m.get_desc() == d) return m;
    memory out(d, eng_);
    (once ? prepare_ : steps_).push_back({reorder(m, out), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, out}}});
    return out;
  }
  memory Plainly(const memory& m) { return Want(m, PlainDesc(m.get_desc().dims())); }

  static primitive_attr Attr(const std::vector<PostOp>& post) {
    primitive_attr attr;
    post_ops ops;
    for (const PostOp& p : post) ops.append_eltwise(1.0f, p.alg, p.alpha, p.beta);
    attr.set_post_ops(ops);
    return attr;
  }

  memory Conv(const memory& src, const memory& wei, const memory* bias, const dims& dst, const dims& strides,
              const dims& dilation, const dims& pad_l, const dims& pad_r, int64_t groups,
              const std::vector<PostOp>& post, bool const_weights) {
    dims wd = wei.get_desc().dims();
    memory w_plain = wei;
    if (groups > 1) {
      wd = {groups, wd[0] / groups, wd[1], wd[2], wd[3]};
      w_plain = View(wei, wd);
    }
    dims dil = {dilation[0] - 1, dilation[1] - 1};
    convolution_forward::desc cd(prop_kind::forward_inference, algorithm::convolution_direct,
                                 AnyDesc(src.get_desc().dims()), AnyDesc(wd),
                                 bias ? bias->get_desc() : memory::desc(), AnyDesc(dst), strides, dil, pad_l, pad_r);
    convolution_forward::primitive_desc pd(cd, Attr(post), eng_);
    memory s = Want(src, pd.src_desc());
    memory w = Want(w_plain, pd.weights_desc(), const_weights);
    memory out(pd.dst_desc(), eng_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}};
    if (bias) args[DNNL_ARG_BIAS] = *bias;
    steps_.push_back({convolution_forward(pd), args});
    return out;
  }

  memory Dense(const memory& src, const memory& wei, const memory* bias, const dims& dst,
               const std::vector<PostOp>& post, bool const_weights) {
    inner_product_forward::desc d(prop_kind::forward_inference, AnyDesc(src.get_desc().dims()),
                                  AnyDesc(wei.get_desc().dims()), bias ? bias->get_desc() : memory::desc(),
                                  AnyDesc(dst));
    inner_product_forward::primitive_desc pd(d, Attr(post), eng_);
    memory s = Want(src, pd.src_desc());
    memory w = Want(wei, pd.weights_desc(), const_weights);
    memory out(pd.dst_desc(), eng_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}};
    if (bias) args[DNNL_ARG_BIAS] = *bias;
    steps_.push_back({inner_product_forward(pd), args});
    return out;
  }

  // a [.., M, K] x b [.., K, N], ranks equal (b's extent-1 batch dims broadcast); bias (when given)
  // of dst's rank, [1, .., 1, N]. Constant weights take the primitive's layout, prepared once.
  memory MatMul(const memory& a, const memory& b, const memory* bias, const dims& dst,
                const std::vector<PostOp>& post, bool const_weights) {
    memory pa = Plainly(a), pb = Plainly(b);
    matmul::desc d(pa.get_desc(), const_weights ? AnyDesc(pb.get_desc().dims()) : pb.get_desc(),
                   bias ? bias->get_desc() : memory::desc(), PlainDesc(dst));
    matmul::primitive_desc pd(d, Attr(post), eng_);
    memory w = Want(pb, pd.weights_desc(), const_weights);
    memory out(pd.dst_desc(), eng_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, pa}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}};
    if (bias) args[DNNL_ARG_BIAS] = *bias;
    steps_.push_back({matmul(pd), args});
    return out;
  }

  memory Pool(const memory& src, algorithm alg, const dims& dst, const dims& kernel, const dims& strides,
              const dims& pad_l, const dims& pad_r) {
    pooling_forward::desc d(prop_kind::forward_inference, alg, src.get_desc(), AnyDesc(dst), strides, kernel, pad_l,
                            pad_r);
    pooling_forward::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    steps_.push_back({pooling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, out}}});
    return out;
  }

  memory Eltwise(const memory& src, algorithm alg, float alpha, float beta) {
    eltwise_forward::desc d(prop_kind::forward_inference, alg, src.get_desc(), alpha, beta);
    eltwise_forward::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    steps_.push_back({eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, out}}});
    return out;
  }

  // a (the output's shape) op b broadcast to it; b_dims: b's shape right-aligned to a's rank.
  memory Binary(const memory& a, const memory& b, algorithm alg, const dims& b_dims) {
    if (b_dims == a.get_desc().dims()) {  // same shape: b in a's layout
      try {
        binary::primitive_desc pd(binary::desc(alg, a.get_desc(), a.get_desc(), a.get_desc()), eng_);
        return BinaryIn(pd, a, Want(b, a.get_desc()));
      } catch (const error&) {
      }
    }
    // Broadcast (or no primitive for a's layout): plain, where oneDNN's broadcasting kernels are fast
    // (a blocked src0 with a broadcast src1 took the reference kernel: 10x slower on nanotrack).
    memory pa = Plainly(a);
    memory pb = View(Plainly(b), b_dims);
    return BinaryIn(binary::primitive_desc(binary::desc(alg, pa.get_desc(), pb.get_desc(), pa.get_desc()), eng_), pa,
                    pb);
  }
  memory BinaryIn(const binary::primitive_desc& pd, const memory& a, const memory& b) {
    memory out(pd.dst_desc(), eng_);
    steps_.push_back({binary(pd), {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, out}}});
    return out;
  }

  memory Softmax(const memory& src, int axis) {
    memory p = Plainly(src);
    softmax_forward::desc d(prop_kind::forward_inference, p.get_desc(), axis);
    softmax_forward::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    steps_.push_back({softmax_forward(pd), {{DNNL_ARG_SRC, p}, {DNNL_ARG_DST, out}}});
    return out;
  }

  // Layer normalization over the last axis: (x - mean) / sqrt(var + eps) * scale [+ shift]; scale
  // and shift [C]. Mean and variance are computed per call (inference without global statistics).
  memory LayerNorm(const memory& src, const memory& scale, const memory* shift, float eps) {
    memory p = Plainly(src);
    normalization_flags flags = normalization_flags::use_scale;
    if (shift) flags |= normalization_flags::use_shift;
    layer_normalization_forward::desc d(prop_kind::forward_inference, p.get_desc(), eps, flags);
    layer_normalization_forward::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, p}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_DST, out}};
    if (shift) args[DNNL_ARG_SHIFT] = *shift;
    if (pd.mean_desc().get_size() != 0) {
      args[DNNL_ARG_MEAN] = memory(pd.mean_desc(), eng_);
      args[DNNL_ARG_VARIANCE] = memory(pd.variance_desc(), eng_);
    }
    steps_.push_back({layer_normalization_forward(pd), args});
    return out;
  }

  // Output argument i (plain `d`) receives m.
  void Result(int i, const memory& m, const dims& d) {
    memory out = Arg(i, d, false);
    steps_.push_back({reorder(m, out), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, out}}});
  }

  engine eng_;
  stream strm_;

 private:
  std::mutex mu_;
  std::vector<std::pair<int, memory>> bound_;
  std::vector<std::pair<int, void*>> weights_;
  std::vector<Exec> prepare_, steps_;
};

// Region R, built by the first caller (the executor's load-time <symbol>__init, kernel_abi.h);
// never destroyed: no destructor order at library unload.
template <typename R>
R* Instance() {
  static R* region = new R();
  return region;
}

// <symbol>__init: builds the primitives; a oneDNN error becomes the message the executor reports.
template <typename R>
int32_t InitRegion(char* message, int64_t capacity) {
  try {
    Instance<R>();
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(message, static_cast<size_t>(capacity), "oneDNN: %s", e.what());
    return -1;
  }
}

// <symbol>: runs it; an error is reported on stderr, naming the region, and returned as -1 (the
// graph executor then names the node).
template <typename R>
int32_t RunRegion(void* const* args, const char* symbol) {
  try {
    return Instance<R>()->Run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: BYOC backend 'dnnl', region %s: %s\n", symbol, e.what());
    return -1;
  }
}
}  // namespace
)PRELUDE";

}  // namespace tessera::byoc
