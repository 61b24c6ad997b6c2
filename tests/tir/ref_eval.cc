// The test-only reference interpreter (ref_eval.h).
#include "ref_eval.h"

#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "tessera/ir/expr_functor.h"
#include "tessera/support/error.h"

namespace tessera::tir::testing {

namespace {

using Val = std::vector<double>;  // one entry per lane
using ir::ExprKind;

class Interp {
 public:
  std::map<const ir::VarNode*, double> env;
  std::map<const ir::VarNode*, std::vector<float>*> mem;
  std::vector<std::unique_ptr<std::vector<float>>> owned;

  Val Eval(const PrimExpr& e) {
    DataType t = e.dtype();
    PrimExpr a, b;
    if (ir::GetBinaryOperands(e, &a, &b)) {
      Val x = Eval(a), y = Eval(b);
      Val r(std::max(x.size(), y.size()));
      for (size_t i = 0; i < r.size(); ++i) {
        r[i] = Binary(e->kind, a.dtype(), x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]);
      }
      return Round(t, r);
    }
    switch (e->kind) {
      case ExprKind::kIntImm: return {static_cast<double>(e.as<ir::IntImmNode>()->value)};
      case ExprKind::kFloatImm: return Round(t, {e.as<ir::FloatImmNode>()->value});
      case ExprKind::kVar: {
        auto it = env.find(e.as<ir::VarNode>());
        TESSERA_ICHECK(it != env.end(), "ref_eval: unbound variable ", e.as<ir::VarNode>()->name_hint);
        return {it->second};
      }
      case ExprKind::kNot: {
        Val v = Eval(e.as<ir::NotNode>()->a);
        for (auto& x : v) x = x == 0;
        return v;
      }
      case ExprKind::kSelect: {
        auto* s = e.as<ir::SelectNode>();
        Val c = Eval(s->condition), x = Eval(s->true_value), y = Eval(s->false_value);
        Val r(x.size());
        for (size_t i = 0; i < r.size(); ++i) r[i] = c[c.size() == 1 ? 0 : i] ? x[i] : y[i];
        return r;
      }
      case ExprKind::kCast: {
        Val v = Eval(e.as<ir::CastNode>()->value);
        if (t.is_int() || t.is_uint()) for (auto& x : v) x = std::trunc(x);
        if (t.is_bool()) for (auto& x : v) x = x != 0;
        return Round(t, v);
      }
      case ExprKind::kCall: {
        auto* c = e.as<ir::CallNode>();
        std::vector<Val> args;
        for (const auto& x : c->args) args.push_back(Eval(x));
        Val r(t.lanes());
        for (int i = 0; i < t.lanes(); ++i) {
          auto arg = [&](size_t k) { return args[k][args[k].size() == 1 ? 0 : i]; };
          r[i] = Intrinsic(c->op, arg(0), c->args.size() > 1 ? arg(1) : 0.0, c->args.size() > 2 ? arg(2) : 0.0);
        }
        return Round(t, r);
      }
      case ExprKind::kRamp: {
        auto* rp = e.as<ir::RampNode>();
        double base = Eval(rp->base)[0], stride = Eval(rp->stride)[0];
        Val r(rp->lanes);
        for (int i = 0; i < rp->lanes; ++i) r[i] = base + i * stride;
        return r;
      }
      case ExprKind::kBroadcast: {
        auto* bc = e.as<ir::BroadcastNode>();
        return Val(bc->lanes, Eval(bc->value)[0]);
      }
      case ExprKind::kLet: {
        auto* l = e.as<ir::LetNode>();
        env[l->var.get_var()] = Eval(l->value)[0];
        Val r = Eval(l->body);
        env.erase(l->var.get_var());
        return r;
      }
      case ExprKind::kBufferLoad: {
        auto* l = e.as<BufferLoadNode>();
        TESSERA_ICHECK(l->indices.size() == 1, "ref_eval: load of ", l->buffer->name, " is not flat");
        std::vector<float>& m = Mem(l->buffer);
        Val idx = Eval(l->indices[0]);
        Val r(idx.size());
        for (size_t i = 0; i < idx.size(); ++i) r[i] = m.at(Checked(l->buffer, idx[i], m.size()));
        return r;
      }
      default: TESSERA_THROW(InternalError, "ref_eval: unsupported expression kind ", static_cast<int>(e->kind));
    }
  }

  void Exec(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kBufferStore: {
        auto* st = s.as<BufferStoreNode>();
        TESSERA_ICHECK(st->indices.size() == 1, "ref_eval: store to ", st->buffer->name, " is not flat");
        std::vector<float>& m = Mem(st->buffer);
        Val idx = Eval(st->indices[0]), v = Eval(st->value);
        for (size_t i = 0; i < idx.size(); ++i) {
          m.at(Checked(st->buffer, idx[i], m.size())) = static_cast<float>(v[v.size() == 1 ? 0 : i]);
        }
        return;
      }
      case StmtKind::kFor: {
        auto* f = s.as<ForNode>();
        int64_t mn = static_cast<int64_t>(Eval(f->min)[0]), ext = static_cast<int64_t>(Eval(f->extent)[0]);
        for (int64_t i = mn; i < mn + ext; ++i) {
          env[f->loop_var.get_var()] = static_cast<double>(i);
          Exec(f->body);
        }
        env.erase(f->loop_var.get_var());
        return;
      }
      case StmtKind::kSeqStmt:
        for (const auto& x : s.as<SeqStmtNode>()->seq) Exec(x);
        return;
      case StmtKind::kIfThenElse: {
        auto* i = s.as<IfThenElseNode>();
        if (Eval(i->condition)[0] != 0) {
          Exec(i->then_case);
        } else if (i->else_case.defined()) {
          Exec(i->else_case);
        }
        return;
      }
      case StmtKind::kLetStmt: {
        auto* l = s.as<LetStmtNode>();
        env[l->var.get_var()] = Eval(l->value)[0];
        Exec(l->body);
        env.erase(l->var.get_var());
        return;
      }
      case StmtKind::kEvaluate: Eval(s.as<EvaluateNode>()->value); return;
      case StmtKind::kAllocate: {
        auto* a = s.as<AllocateNode>();
        owned.push_back(std::make_unique<std::vector<float>>(a->buffer.NumElements(), 0.0f));
        mem[a->buffer->data.get_var()] = owned.back().get();
        Exec(a->body);
        mem.erase(a->buffer->data.get_var());
        return;
      }
      default: TESSERA_THROW(InternalError, "ref_eval: blocks must be lowered first");
    }
  }

 private:
  std::vector<float>& Mem(const Buffer& b) {
    auto it = mem.find(b->data.get_var());
    TESSERA_ICHECK(it != mem.end(), "ref_eval: buffer ", b->name, " has no memory");
    return *it->second;
  }
  static size_t Checked(const Buffer& b, double idx, size_t size) {
    TESSERA_ICHECK(idx >= 0 && idx < static_cast<double>(size), "ref_eval: index ", idx, " out of bounds of ",
                   b->name, " (", size, " elements)");
    return static_cast<size_t>(idx);
  }
  static Val Round(DataType t, Val v) {
    if (t.is_float() && t.bits() == 32) for (auto& x : v) x = static_cast<float>(x);
    return v;
  }
  static double Binary(ExprKind k, DataType t, double x, double y) {
    bool is_int = !(t.is_float() || t.is_bfloat16());
    switch (k) {
      case ExprKind::kAdd: return x + y;
      case ExprKind::kSub: return x - y;
      case ExprKind::kMul: return x * y;
      case ExprKind::kDiv: return is_int ? std::trunc(x / y) : x / y;
      case ExprKind::kMod: return std::fmod(x, y);
      case ExprKind::kFloorDiv: return std::floor(x / y);
      case ExprKind::kFloorMod: return x - std::floor(x / y) * y;
      case ExprKind::kMin: return std::min(x, y);
      case ExprKind::kMax: return std::max(x, y);
      case ExprKind::kEQ: return x == y;
      case ExprKind::kNE: return x != y;
      case ExprKind::kLT: return x < y;
      case ExprKind::kLE: return x <= y;
      case ExprKind::kGT: return x > y;
      case ExprKind::kGE: return x >= y;
      case ExprKind::kAnd: return x != 0 && y != 0;
      case ExprKind::kOr: return x != 0 || y != 0;
      default: return 0;
    }
  }
  static double Intrinsic(const std::string& op, double x, double y, double z) {
    if (op == "exp") return std::exp(x);
    if (op == "log") return std::log(x);
    if (op == "sqrt") return std::sqrt(x);
    if (op == "rsqrt") return 1.0 / std::sqrt(x);
    if (op == "tanh") return std::tanh(x);
    if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (op == "fabs") return std::fabs(x);
    if (op == "floor") return std::floor(x);
    if (op == "ceil") return std::ceil(x);
    if (op == "round") return std::nearbyint(x);
    if (op == "trunc") return std::trunc(x);
    if (op == "pow") return std::pow(x, y);
    if (op == "erf") return std::erf(x);
    if (op == "fma") return x * y + z;
    if (op == "exp2") return std::exp2(x);
    if (op == "sin") return std::sin(x);
    if (op == "cos") return std::cos(x);
    TESSERA_THROW(InternalError, "ref_eval: unknown intrinsic ", op);
  }
};

}  // namespace

void RunFlat(const PrimFunc& func, const std::vector<std::vector<float>*>& args) {
  TESSERA_ICHECK(args.size() == func->params.size(), "ref_eval: ", args.size(), " arguments for ",
                 func->params.size(), " parameters");
  Interp in;
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer& p = func->params[i];
    TESSERA_ICHECK(p->dtype == DataType::Float(32), "ref_eval: parameter ", p->name, " is not float32");
    TESSERA_ICHECK(static_cast<int64_t>(args[i]->size()) == p.NumElements(), "ref_eval: argument ", i, " has ",
                   args[i]->size(), " floats, parameter ", p->name, " needs ", p.NumElements());
    in.mem[p->data.get_var()] = args[i];
  }
  in.Exec(func->body);
}

std::vector<std::vector<float>> RunFlatOnRandomInputs(const PrimFunc& flat, const PrimFunc& signature,
                                                      unsigned seed) {
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

}  // namespace tessera::tir::testing
