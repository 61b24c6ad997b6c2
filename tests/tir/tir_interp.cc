#include "tir_interp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "tessera/ir/expr_functor.h"
#include "tessera/tir/expr.h"
#include "tessera/tir/stmt.h"
#include "tessera/tir/transform/lower.h"

namespace tessera::tir::testing {

namespace {

using ir::ExprKind;
using ir::PrimExpr;

// The lanes of one value (1 for a scalar, the vector width for Ramp / Broadcast / vector loads):
// up to 8 (an AVX2 float vector) in place, more on the heap. The interpreter evaluates millions of expressions per conv
// test; a heap vector per value made it allocation-bound (~40% of its time in malloc under ASan).
template <typename T>
class SmallVec {
 public:
  static constexpr size_t kInline = 8;
  SmallVec() = default;
  SmallVec(std::initializer_list<T> v) { for (const T& x : v) push_back(x); }
  explicit SmallVec(size_t n, T value = T()) {
    if (n <= kInline) {
      std::fill(inline_, inline_ + n, value);
      size_ = n;
    } else {
      resize(n, value);
    }
  }
  size_t size() const { return size_; }
  T* data() { return on_heap_ ? heap_.data() : inline_; }
  const T* data() const { return on_heap_ ? heap_.data() : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& back() { return data()[size_ - 1]; }
  void resize(size_t n, T value = T()) {
    if (n > kInline && !on_heap_) {
      heap_.assign(inline_, inline_ + size_);
      on_heap_ = true;
    }
    if (on_heap_) heap_.resize(n, value);
    else std::fill(inline_ + size_, inline_ + std::max(n, size_), value);
    size_ = n;
  }
  void push_back(T v) {
    resize(size_ + 1);
    back() = v;
  }

 private:
  T inline_[kInline];
  std::vector<T> heap_;  // the elements once more than kInline were stored
  bool on_heap_ = false;
  size_t size_ = 0;
};

using Lanes = SmallVec<double>;

struct Storage {
  std::vector<double>* data;
  DataType dtype;
};

double RoundTo(DataType t, double v) {
  if (t.is_float() && t.bits() == 32) return static_cast<double>(static_cast<float>(v));
  if (t.is_bool()) return v != 0 ? 1 : 0;
  if (t.is_int() || t.is_uint()) {
    double r = std::trunc(v);
    if (t.bits() >= 64) return r;
    if (t.bits() == 32 && t.is_int()) return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(r)));
    // Narrower types wrap to their width, as the machine does (two's complement).
    const uint64_t mask = (uint64_t{1} << t.bits()) - 1;
    uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(r)) & mask;
    if (t.is_uint()) return static_cast<double>(u);
    const uint64_t sign = uint64_t{1} << (t.bits() - 1);
    return static_cast<double>(static_cast<int64_t>(u ^ sign) - static_cast<int64_t>(sign));
  }
  return v;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

class Interp {
 public:
  std::map<const ir::PrimExprNode*, Storage> buffers;  // keyed by the buffer's data var
  std::unordered_map<const ir::PrimExprNode*, Lanes> env;
  std::vector<std::unique_ptr<std::vector<double>>> owned;

  void Bind(const tir::Buffer& b, std::vector<double>* data) { buffers[b->data.get()] = {data, b->dtype}; }

  void Alloc(const tir::Buffer& b) {
    int64_t n = 1;
    for (const PrimExpr& e : b->shape) n *= Scalar(e);
    owned.push_back(std::make_unique<std::vector<double>>(static_cast<size_t>(n), std::nan("")));
    Bind(b, owned.back().get());
  }

  int64_t Scalar(const PrimExpr& e) { return static_cast<int64_t>(std::llround(Eval(e)[0])); }

  // Flat offsets (one per lane) of buffer[indices]: a single index into a multi-dimensional buffer is
  // already flat (after FlattenBuffer); otherwise row-major over the shape (bounds-checked) or the
  // explicit strides.
  SmallVec<int64_t> Offsets(const tir::Buffer& b, const std::vector<PrimExpr>& indices) {
    SmallVec<int64_t> out(1, 0);
    const auto& shape = b->shape;
    const bool flat = indices.size() == 1 && shape.size() != 1;
    for (size_t d = 0; d < indices.size(); ++d) {
      const Lanes idx = Eval(indices[d]);
      if (idx.size() > out.size()) out.resize(idx.size(), out[0]);  // scalar so far: broadcast
      const int64_t stride = flat || b->strides.empty() ? 0 : Scalar(b->strides[d]);
      const int64_t ext = flat || !b->strides.empty() ? 0 : Scalar(shape[d]);
      for (size_t l = 0; l < out.size(); ++l) {
        const int64_t v = static_cast<int64_t>(std::llround(Lane(idx, l)));
        if (flat) {
          out[l] = v;
        } else if (!b->strides.empty()) {
          out[l] += v * stride;
        } else {
          if (v < 0 || v >= ext) OutOfBounds(b, v, d);
          out[l] = out[l] * ext + v;
        }
      }
    }
    return out;
  }

  [[noreturn]] static void OutOfBounds(const tir::Buffer& b, int64_t v, size_t d) {
    throw std::runtime_error("index " + std::to_string(v) + " out of bounds of " + b->name + " dim " +
                             std::to_string(d));
  }

  Storage& Find(const tir::Buffer& b) {
    auto it = buffers.find(b->data.get());
    if (it == buffers.end()) throw std::runtime_error("unbound buffer " + b->name);
    return it->second;
  }

  [[gnu::noinline]] Lanes Load(const tir::BufferLoadNode* op) {
    Storage& s = Find(op->buffer);
    Lanes out;
    for (int64_t off : Offsets(op->buffer, op->indices)) {
      if (off < 0 || off >= static_cast<int64_t>(s.data->size()))
        throw std::runtime_error("load out of bounds of " + op->buffer->name);
      out.push_back((*s.data)[off]);
    }
    return out;
  }

  static double Lane(const Lanes& v, size_t l) { return v.size() == 1 ? v[0] : v[l]; }

  [[gnu::noinline]] Lanes Binary(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b) {
    Lanes x = Eval(a), y = Eval(b);
    size_t n = std::max(x.size(), y.size());
    Lanes out(n);
    const bool is_int = a.dtype().is_int() || a.dtype().is_uint() || a.dtype().is_bool();
    for (size_t l = 0; l < n; ++l) {
      double p = Lane(x, l), q = Lane(y, l), r = 0;
      int64_t ip = static_cast<int64_t>(std::llround(p)), iq = static_cast<int64_t>(std::llround(q));
      switch (e->kind) {
        case ExprKind::kAdd: r = p + q; break;
        case ExprKind::kSub: r = p - q; break;
        case ExprKind::kMul: r = p * q; break;
        case ExprKind::kDiv: r = is_int ? static_cast<double>(ip / iq) : p / q; break;
        case ExprKind::kMod: r = is_int ? static_cast<double>(ip % iq) : std::fmod(p, q); break;
        case ExprKind::kFloorDiv: r = is_int ? static_cast<double>(FloorDiv(ip, iq)) : std::floor(p / q); break;
        case ExprKind::kFloorMod: r = is_int ? static_cast<double>(ip - FloorDiv(ip, iq) * iq) : p - std::floor(p / q) * q; break;
        case ExprKind::kMin: r = std::min(p, q); break;
        case ExprKind::kMax: r = std::max(p, q); break;
        case ExprKind::kEQ: r = p == q; break;
        case ExprKind::kNE: r = p != q; break;
        case ExprKind::kLT: r = p < q; break;
        case ExprKind::kLE: r = p <= q; break;
        case ExprKind::kGT: r = p > q; break;
        case ExprKind::kGE: r = p >= q; break;
        case ExprKind::kAnd: r = (p != 0) && (q != 0); break;
        case ExprKind::kOr: r = (p != 0) || (q != 0); break;
        default: throw std::runtime_error("bad binary");
      }
      out[l] = RoundTo(e.dtype().element_of(), r);
    }
    return out;
  }

  static double Intrinsic(const std::string& op, const double* a) {
    if (op == "exp") return std::exp(a[0]);
    if (op == "log") return std::log(a[0]);
    if (op == "sqrt") return std::sqrt(a[0]);
    if (op == "rsqrt") return 1.0 / std::sqrt(a[0]);
    if (op == "tanh") return std::tanh(a[0]);
    if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-a[0]));
    if (op == "fabs") return std::fabs(a[0]);
    if (op == "floor") return std::floor(a[0]);
    if (op == "ceil") return std::ceil(a[0]);
    if (op == "round") return std::nearbyint(a[0]);
    if (op == "trunc") return std::trunc(a[0]);
    if (op == "pow") return std::pow(a[0], a[1]);
    if (op == "erf") return std::erf(a[0]);
    if (op == "fma") return a[0] * a[1] + a[2];
    if (op == "exp2") return std::exp2(a[0]);
    if (op == "sin") return std::sin(a[0]);
    if (op == "cos") return std::cos(a[0]);
    auto i = [&](size_t k) { return static_cast<int64_t>(a[k]); };
    if (op == "bitwise_and") return static_cast<double>(i(0) & i(1));
    if (op == "bitwise_or") return static_cast<double>(i(0) | i(1));
    if (op == "bitwise_xor") return static_cast<double>(i(0) ^ i(1));
    if (op == "bitwise_not") return static_cast<double>(~i(0));
    if (op == "shift_left") return i(1) < 0 || i(1) >= 64 ? 0.0 : static_cast<double>(static_cast<uint64_t>(i(0)) << i(1));
    if (op == "shift_right") return i(1) < 0 || i(1) >= 64 ? 0.0 : static_cast<double>(i(0) >> i(1));
    if (op == "checked_index") {  // ir::checked_index: the kernel fails outside [-n, n)
      if (i(0) < -i(1) || i(0) >= i(1))
        throw std::out_of_range("checked_index: " + std::to_string(i(0)) + " outside [-" + std::to_string(i(1)) + ", " +
                                std::to_string(i(1)) + ")");
      return static_cast<double>(i(0) < 0 ? i(0) + i(1) : i(0));
    }
    throw std::runtime_error("unknown intrinsic " + op);
  }

  // Eval dispatches to one function per kind, not inlined: under ASan every call of a function with
  // Lanes locals allocates its frame on the fake stack, and one frame holding every case's locals
  // was 4 KiB per call.
  Lanes Eval(const PrimExpr& e) {
    switch (e->kind) {
      case ExprKind::kIntImm: return Lanes(1, static_cast<double>(e.as<ir::IntImmNode>()->value));
      case ExprKind::kFloatImm: return Lanes(1, RoundTo(e.dtype(), e.as<ir::FloatImmNode>()->value));
      case ExprKind::kVar: return EvalVar(e);
      case ExprKind::kNot: return EvalNot(e.as<ir::NotNode>());
      case ExprKind::kSelect: return EvalSelect(e.as<ir::SelectNode>());
      case ExprKind::kCast: return EvalCast(e);
      case ExprKind::kCall: return EvalCall(e);
      case ExprKind::kRamp: return EvalRamp(e.as<ir::RampNode>());
      case ExprKind::kBroadcast: {
        const auto* b = e.as<ir::BroadcastNode>();
        return Lanes(b->lanes, Eval(b->value)[0]);
      }
      case ExprKind::kLet: {
        const auto* l = e.as<ir::LetNode>();
        env[l->var.get()] = Eval(l->value);
        return Eval(l->body);
      }
      case ExprKind::kBufferLoad: return Load(e.as<tir::BufferLoadNode>());
      default: {
        PrimExpr a, b;
        if (ir::GetBinaryOperands(e, &a, &b)) return Binary(e, a, b);
        throw std::runtime_error("unsupported expression kind " + std::to_string(static_cast<int>(e->kind)));
      }
    }
  }

  [[gnu::noinline]] Lanes EvalVar(const PrimExpr& e) {
    auto it = env.find(e.get());
    if (it == env.end()) throw std::runtime_error("unbound var " + e.as<ir::VarNode>()->name_hint);
    return it->second;
  }

  [[gnu::noinline]] Lanes EvalNot(const ir::NotNode* op) {
    Lanes v = Eval(op->a);
    for (double& x : v) x = x == 0;
    return v;
  }

  [[gnu::noinline]] Lanes EvalSelect(const ir::SelectNode* s) {
    Lanes c = Eval(s->condition), t = Eval(s->true_value), f = Eval(s->false_value);
    size_t n = std::max({c.size(), t.size(), f.size()});
    Lanes out(n);
    for (size_t l = 0; l < n; ++l) out[l] = Lane(c, l) != 0 ? Lane(t, l) : Lane(f, l);
    return out;
  }

  [[gnu::noinline]] Lanes EvalCast(const PrimExpr& e) {
    Lanes v = Eval(e.as<ir::CastNode>()->value);
    for (double& x : v) x = RoundTo(e.dtype().element_of(), x);
    return v;
  }

  [[gnu::noinline]] Lanes EvalCall(const PrimExpr& e) {
    const auto* c = e.as<ir::CallNode>();
    std::vector<Lanes> args;
    args.reserve(c->args.size());
    size_t n = 1;
    for (const PrimExpr& a : c->args) {
      args.push_back(Eval(a));
      n = std::max(n, args.back().size());
    }
    Lanes out(n);
    SmallVec<double> a(args.size());
    for (size_t l = 0; l < n; ++l) {
      for (size_t k = 0; k < args.size(); ++k) a[k] = Lane(args[k], l);
      out[l] = RoundTo(e.dtype().element_of(), Intrinsic(c->op, a.data()));
    }
    return out;
  }

  [[gnu::noinline]] Lanes EvalRamp(const ir::RampNode* r) {
    double b = Eval(r->base)[0], s = Eval(r->stride)[0];
    Lanes out(r->lanes);
    for (int l = 0; l < r->lanes; ++l) out[l] = b + s * l;
    return out;
  }

  void Exec(const tir::Stmt& s) {
    switch (s->kind) {
      case tir::StmtKind::kBufferStore: return Store(s.as<tir::BufferStoreNode>());
      case tir::StmtKind::kFor: {
        const auto* op = s.as<tir::ForNode>();
        int64_t mn = Scalar(op->min), ext = Scalar(op->extent);
        for (int64_t i = mn; i < mn + ext; ++i) {
          env[op->loop_var.get()] = Lanes(1, static_cast<double>(i));  // the body may rebind (no reference kept)
          Exec(op->body);
        }
        return;
      }
      case tir::StmtKind::kSeqStmt:
        for (const tir::Stmt& c : s.as<tir::SeqStmtNode>()->seq) Exec(c);
        return;
      case tir::StmtKind::kIfThenElse: {
        const auto* op = s.as<tir::IfThenElseNode>();
        if (Eval(op->condition)[0] != 0) Exec(op->then_case);
        else if (op->else_case.defined()) Exec(op->else_case);
        return;
      }
      case tir::StmtKind::kLetStmt: {
        const auto* op = s.as<tir::LetStmtNode>();
        env[op->var.get()] = Eval(op->value);
        Exec(op->body);
        return;
      }
      case tir::StmtKind::kEvaluate: return;
      case tir::StmtKind::kAllocate: {
        const auto* op = s.as<tir::AllocateNode>();
        Alloc(op->buffer);
        Exec(op->body);
        return;
      }
      case tir::StmtKind::kBlock: {
        const auto* b = s.as<tir::BlockNode>();
        for (const tir::Buffer& buf : b->alloc_buffers) Alloc(buf);
        Exec(b->body);
        return;
      }
      case tir::StmtKind::kBlockRealize: return Realize(s.as<tir::BlockRealizeNode>());
    }
    throw std::runtime_error("unsupported statement");
  }

  [[gnu::noinline]] void Store(const tir::BufferStoreNode* op) {
    Storage& st = Find(op->buffer);
    Lanes v = Eval(op->value);
    SmallVec<int64_t> offs = Offsets(op->buffer, op->indices);
    for (size_t l = 0; l < offs.size(); ++l) {
      if (offs[l] < 0 || offs[l] >= static_cast<int64_t>(st.data->size()))
        throw std::runtime_error("store out of bounds of " + op->buffer->name);
      (*st.data)[offs[l]] = RoundTo(st.dtype, Lane(v, l));
    }
  }

  [[gnu::noinline]] void Realize(const tir::BlockRealizeNode* r) {
    const tir::BlockNode* b = r->block_node();
    std::vector<Lanes> vals;
    vals.reserve(r->iter_values.size());
    for (const PrimExpr& v : r->iter_values) vals.push_back(Eval(v));
    if (r->predicate.defined() && Eval(r->predicate)[0] == 0) return;
    bool at_init = true;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      env[b->iter_vars[i].var.get()] = vals[i];
      if (b->iter_vars[i].iter_type == tir::IterVarType::kCommReduce &&
          vals[i][0] != Eval(b->iter_vars[i].dom.min)[0])
        at_init = false;
    }
    for (const tir::Buffer& buf : b->alloc_buffers) Alloc(buf);
    if (b->init.defined() && at_init) Exec(b->init);
    Exec(b->body);
  }
};

}  // namespace

void RunPrimFunc(const tir::PrimFunc& f, const std::vector<std::vector<double>*>& args,
                 const std::vector<int64_t>& shape_values) {
  if (args.size() != f->params.size())
    throw std::runtime_error("expected " + std::to_string(f->params.size()) + " arguments");
  if (shape_values.size() != f->shape_vars.size())
    throw std::runtime_error("expected " + std::to_string(f->shape_vars.size()) + " shape values");
  Interp in;
  for (size_t i = 0; i < shape_values.size(); ++i) {
    in.env[f->shape_vars[i].get()] = {static_cast<double>(shape_values[i])};
  }
  for (size_t i = 0; i < args.size(); ++i) {
    int64_t n = 1;
    for (const PrimExpr& e : f->params[i]->shape) n *= in.Scalar(e);
    if (static_cast<int64_t>(args[i]->size()) != n)
      throw std::runtime_error("argument " + std::to_string(i) + " has the wrong size");
    in.Bind(f->params[i], args[i]);
  }
  in.Exec(f->body);
}

void RunFlat(const PrimFunc& func, const std::vector<std::vector<float>*>& args) {
  std::vector<std::vector<double>> mem;
  for (const auto* a : args) mem.emplace_back(a->begin(), a->end());
  std::vector<std::vector<double>*> ptrs;
  for (auto& m : mem) ptrs.push_back(&m);
  RunPrimFunc(func, ptrs);
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t j = 0; j < mem[i].size(); ++j) (*args[i])[j] = static_cast<float>(mem[i][j]);
}

std::vector<std::vector<float>> RunFlatOnRandomInputs(const PrimFunc& flat, const PrimFunc& signature, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::vector<float>> data;
  for (const Buffer& p : signature->params) {
    data.emplace_back(p.NumElements());
    for (float& x : data.back()) x = u(rng);
  }
  std::vector<std::vector<float>*> args;
  for (auto& d : data) args.push_back(&d);
  RunFlat(flat, args);
  return data;
}

std::vector<std::vector<double>> RandomArgs(const PrimFunc& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> args;
  for (const auto& p : f->params) {
    std::vector<double> v(static_cast<size_t>(p.NumElements()));
    const bool f32 = p->dtype == DataType::Float(32);
    for (auto& x : v) x = f32 ? static_cast<double>(static_cast<float>(dist(rng))) : dist(rng);
    args.push_back(std::move(v));
  }
  return args;
}

namespace {
double MaxAbsDiff(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < a[i].size(); ++j) {
      const double d = std::fabs(a[i][j] - b[i][j]);
      if (std::isnan(d)) return INFINITY;
      m = std::max(m, d);
    }
  }
  return m;
}

std::vector<std::vector<double>> RunOn(const PrimFunc& f, std::vector<std::vector<double>> args) {
  std::vector<std::vector<double>*> ptrs;
  for (auto& a : args) ptrs.push_back(&a);
  RunPrimFunc(f, ptrs);
  return args;
}
}  // namespace

double MaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed) {
  const auto args = RandomArgs(a, seed);
  return MaxAbsDiff(RunOn(a, args), RunOn(b, args));
}

double LoweredMaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed) {
  const auto args = RandomArgs(a, seed);
  return MaxAbsDiff(RunOn(transform::LowerToFlat(a), args), RunOn(transform::LowerToFlat(b), args));
}

}  // namespace tessera::tir::testing
