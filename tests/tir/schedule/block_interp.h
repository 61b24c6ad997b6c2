// A tiny test-only interpreter of *block-level* TensorIR (before lowering): it runs
// BlockRealize with TensorIR semantics (bind iter vars, skip when the predicate is false,
// run init when every reduction iter var is at its domain minimum), so a scheduled
// function can be compared numerically with its unscheduled form.
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"
#include "tessera/tir/function.h"

namespace tessera::tir::testing {

class BlockInterp {
 public:
  using Buffers = std::map<const BufferNode*, std::vector<double>>;

  /// Runs f with the given parameter contents (by parameter position); returns all param buffers.
  std::vector<std::vector<double>> Run(const PrimFunc& f, std::vector<std::vector<double>> args) {
    for (size_t i = 0; i < f->params.size(); ++i) {
      args[i].resize(static_cast<size_t>(f->params[i].NumElements()), 0.0);
      mem_[f->params[i].get()] = args[i];
    }
    Exec(f->body);
    std::vector<std::vector<double>> out;
    for (const auto& p : f->params) out.push_back(mem_[p.get()]);
    return out;
  }

 private:
  Buffers mem_;
  std::map<const ir::VarNode*, double> env_;

  size_t Offset(const Buffer& b, const std::vector<PrimExpr>& idx) {
    int64_t off = 0;
    for (int d = 0; d < b.ndim(); ++d) {
      int64_t i = static_cast<int64_t>(Eval(idx[d]));
      int64_t n = ir::get_const_int(b->shape[d]);
      if (i < 0 || i >= n) throw std::runtime_error("out of bounds access to " + b->name);
      off = off * n + i;
    }
    return static_cast<size_t>(off);
  }

  double Eval(const PrimExpr& e) {
    using K = ir::ExprKind;
    PrimExpr a, b;
    if (ir::GetBinaryOperands(e, &a, &b)) {
      double x = Eval(a), y = Eval(b);
      bool is_int = a.dtype().is_int() || a.dtype().is_uint();
      switch (e->kind) {
        case K::kAdd: return x + y;
        case K::kSub: return x - y;
        case K::kMul: return x * y;
        case K::kDiv: return is_int ? std::trunc(x / y) : x / y;
        case K::kMod: return std::fmod(x, y);
        case K::kFloorDiv: return std::floor(x / y);
        case K::kFloorMod: return x - std::floor(x / y) * y;
        case K::kMin: return std::min(x, y);
        case K::kMax: return std::max(x, y);
        case K::kEQ: return x == y;
        case K::kNE: return x != y;
        case K::kLT: return x < y;
        case K::kLE: return x <= y;
        case K::kGT: return x > y;
        case K::kGE: return x >= y;
        case K::kAnd: return x != 0 && y != 0;
        case K::kOr: return x != 0 || y != 0;
        default: break;
      }
    }
    switch (e->kind) {
      case K::kIntImm: return static_cast<double>(e.as<ir::IntImmNode>()->value);
      case K::kFloatImm: return e.as<ir::FloatImmNode>()->value;
      case K::kVar: return env_.at(e.as<ir::VarNode>());
      case K::kNot: return Eval(e.as<ir::NotNode>()->a) == 0;
      case K::kSelect: {
        auto* s = e.as<ir::SelectNode>();
        return Eval(s->condition) != 0 ? Eval(s->true_value) : Eval(s->false_value);
      }
      case K::kCast: {
        double v = Eval(e.as<ir::CastNode>()->value);
        return e.dtype().is_float() ? v : std::trunc(v);
      }
      case K::kCall: {
        auto* c = e.as<ir::CallNode>();
        double x = Eval(c->args[0]);
        if (c->op == "exp") return std::exp(x);
        if (c->op == "sqrt") return std::sqrt(x);
        if (c->op == "tanh") return std::tanh(x);
        throw std::runtime_error("BlockInterp: unsupported call " + c->op);
      }
      case K::kBufferLoad: {
        auto* l = e.as<BufferLoadNode>();
        return mem_.at(l->buffer.get()).at(Offset(l->buffer, l->indices));
      }
      default: throw std::runtime_error("BlockInterp: unsupported expression");
    }
  }

  void Exec(const Stmt& s) {
    if (auto* st = s.as<BufferStoreNode>()) {
      double v = Eval(st->value);
      mem_.at(st->buffer.get()).at(Offset(st->buffer, st->indices)) = v;
    } else if (auto* f = s.as<ForNode>()) {
      int64_t mn = static_cast<int64_t>(Eval(f->min)), ext = static_cast<int64_t>(Eval(f->extent));
      for (int64_t i = mn; i < mn + ext; ++i) {
        env_[f->loop_var.get_var()] = static_cast<double>(i);
        Exec(f->body);
      }
    } else if (auto* seq = s.as<SeqStmtNode>()) {
      for (const auto& x : seq->seq) Exec(x);
    } else if (auto* r = s.as<BlockRealizeNode>()) {
      const BlockNode* b = r->block_node();
      std::vector<double> vals;
      for (const auto& v : r->iter_values) vals.push_back(Eval(v));
      if (Eval(r->predicate) == 0) return;
      bool at_init = true;
      for (size_t i = 0; i < vals.size(); ++i) {
        env_[b->iter_vars[i].var.get_var()] = vals[i];
        if (b->iter_vars[i].iter_type == IterVarType::kCommReduce) {
          at_init &= vals[i] == Eval(b->iter_vars[i].dom.min);
        }
      }
      for (const auto& buf : b->alloc_buffers) {
        mem_[buf.get()] = std::vector<double>(static_cast<size_t>(buf.NumElements()), std::nan(""));
      }
      if (b->init.defined() && at_init) Exec(b->init);
      Exec(b->body);
    } else {
      throw std::runtime_error("BlockInterp: unsupported statement");
    }
  }
};

/// Random contents for every parameter of f (outputs too; they are overwritten).
inline std::vector<std::vector<double>> RandomArgs(const PrimFunc& f, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> args;
  for (const auto& p : f->params) {
    std::vector<double> v(static_cast<size_t>(p.NumElements()));
    for (auto& x : v) x = dist(rng);
    args.push_back(std::move(v));
  }
  return args;
}

/// Max abs difference between the outputs (all params) of two functions on the same inputs.
inline double MaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed = 7) {
  auto args = RandomArgs(a, seed);
  auto ra = BlockInterp().Run(a, args);
  auto rb = BlockInterp().Run(b, args);
  double m = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    for (size_t j = 0; j < ra[i].size(); ++j) {
      double d = std::fabs(ra[i][j] - rb[i][j]);
      if (std::isnan(d)) return INFINITY;
      m = std::max(m, d);
    }
  }
  return m;
}

}  // namespace tessera::tir::testing
