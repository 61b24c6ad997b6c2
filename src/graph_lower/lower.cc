#include "tessera/graph_lower/lower.h"

#include <map>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/op_strategy.h"
#include "tessera/support/error.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::graph_lower {

namespace {

using graph::Expr;
using te::Tensor;

// Evaluates the body of a primitive function to TE tensors (a tuple value has several).
class TEBuilder {
 public:
  TEBuilder(std::string fn_name, const target::Target& target, LoweredTE* out)
      : fn_name_(std::move(fn_name)), target_(target), out_(out) {}

  Tensor AddParam(const graph::Var& v) {
    const auto* tt = v->type_annotation ? v->type_annotation->as<graph::TensorTypeNode>() : nullptr;
    TESSERA_CHECK(tt, "cannot lower function '", fn_name_, "': parameter '", v->name_hint,
                  "' must be a tensor, got ", graph::TypeStr(v->type_annotation));
    std::vector<ir::PrimExpr> shape;
    for (const graph::Dim& d : tt->shape) shape.push_back(Extent(d, "parameter '" + v->name_hint + "'"));
    Tensor t = te::placeholder(shape, tt->dtype, v->name_hint);
    memo_[v.get()] = {t};
    return t;
  }

  ir::PrimExpr Extent(const graph::Dim& d, const std::string& what) {
    try {
      return DimExtent(d);
    } catch (const UnsupportedError& err) {
      TESSERA_THROW(UnsupportedError, "cannot lower function '", fn_name_, "': ", what, ": ", err.what());
    }
  }

  /// Whether `got` (a compute's output extents) is the shape of `want` (a type relation's).
  bool SameShape(const std::vector<ir::PrimExpr>& got, const graph::Shape& want) {
    if (got.size() != want.size()) return false;
    for (size_t i = 0; i < got.size(); ++i) {
      int64_t v = 0;
      if (want[i].is_static()) {
        if (!ir::as_const_int(got[i], &v) || v != want[i].value()) return false;
      } else if (got[i].get() != DimExtent(want[i]).get()) {
        return false;
      }
    }
    return true;
  }

  const std::vector<Tensor>& Visit(const Expr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    std::vector<Tensor> value = Compute(e);
    return memo_[e.get()] = std::move(value);
  }

 private:
  std::vector<Tensor> Compute(const Expr& e) {
    if (const auto* call = e->as<graph::CallNode>()) return LowerCall(*call, e);
    if (const auto* tup = e->as<graph::TupleNode>()) {
      std::vector<Tensor> out;
      for (const Expr& f : tup->fields) {
        const auto& v = Visit(f);
        out.insert(out.end(), v.begin(), v.end());
      }
      return out;
    }
    if (const auto* get = e->as<graph::TupleGetItemNode>()) {
      const auto& v = Visit(get->tuple);
      TESSERA_ICHECK(get->index >= 0 && get->index < static_cast<int>(v.size()), "tuple index out of range");
      return {v[get->index]};
    }
    if (const auto* let = e->as<graph::LetNode>()) {
      memo_[let->var.get()] = Visit(let->value);
      return Visit(let->body);
    }
    if (const auto* c = e->as<graph::ConstantNode>()) return {LowerConstant(*c)};
    if (e->as<graph::VarNode>())
      TESSERA_THROW(UserError, "cannot lower function '", fn_name_, "': variable '",
                    e->as<graph::VarNode>()->name_hint, "' is not a parameter");
    TESSERA_THROW(UnsupportedError, "cannot lower function '", fn_name_,
                  "': only op calls, tuples, lets and scalar constants may appear in a primitive function");
  }

  std::vector<Tensor> LowerCall(const graph::CallNode& call, const Expr& e) {
    const auto* op = call.op->as<graph::OpNode>();
    TESSERA_CHECK(op, "cannot lower function '", fn_name_, "': it calls a function, not an op (not a primitive function)");
    std::vector<Tensor> inputs;
    for (const Expr& a : call.args) {
      const auto& v = Visit(a);
      inputs.insert(inputs.end(), v.begin(), v.end());
    }
    const StrategyCall query{call.attrs, inputs, e->checked_type(), target_};
    OpImplementation impl;
    try {
      impl = OpStrategyTable::Global().Select(op->name, query);
    } catch (const UnsupportedError& err) {
      TESSERA_THROW(UnsupportedError, "cannot lower function '", fn_name_, "': ", err.what());
    }
    out_->implementations.push_back(impl.name);
    if (impl.schedule) {
      bool seen = false;
      for (const auto& s : out_->schedules) seen |= s.name == impl.schedule->name;
      if (!seen) out_->schedules.push_back(*impl.schedule);
    }
    std::vector<Tensor> out;
    if (HasSymbolicShapes(query)) {
      // A compute written for static shapes stops at its first non-constant extent (an internal
      // check): for a symbolic call that is a missing feature, reported as such.
      try {
        out = impl.compute(query);
      } catch (const InternalError& err) {
        TESSERA_THROW(UnsupportedError, "cannot lower function '", fn_name_, "': ", op->name, " (", impl.name,
                      ") with symbolic shapes (", graph::TypeStr(e->checked_type()),
                      ") is not supported yet; bind the dims at import (--input-shape NAME=D0,D1,...): ", err.what());
      }
    } else {
      out = impl.compute(query);
    }
    TESSERA_ICHECK(!out.empty(), "the compute ", impl.name, " of ", op->name, " returned no tensor");
    // The compute must agree with the op's type relation, or the kernel's buffers would not.
    if (const auto* tt = e->checked_type()->as<graph::TensorTypeNode>()) {
      TESSERA_ICHECK(out.size() == 1 && SameShape(out[0].shape(), tt->shape) && out[0].dtype() == tt->dtype,
                     "the compute of ", op->name, " disagrees with its type relation (", graph::TypeStr(e->checked_type()),
                     ") in function '", fn_name_, "'");
    }
    return out;
  }

  // A scalar constant (e.g. `x * 0.5`) becomes a compute of that value, which inlines.
  Tensor LowerConstant(const graph::ConstantNode& c) {
    TESSERA_CHECK(c.data.NumElements() == 1, "cannot lower function '", fn_name_,
                  "': it holds a non-scalar constant; pass it as a parameter");
    DataType t = c.data.dtype();
    double v = 0;
    if (t == DataType::Float(32)) v = *static_cast<const float*>(c.data.raw_data());
    else if (t == DataType::Float(64)) v = *static_cast<const double*>(c.data.raw_data());
    else if (t == DataType::Int(32)) v = *static_cast<const int32_t*>(c.data.raw_data());
    else if (t == DataType::Int(64)) v = static_cast<double>(*static_cast<const int64_t*>(c.data.raw_data()));
    else TESSERA_THROW(UnsupportedError, "cannot lower function '", fn_name_, "': constant of dtype ", t.str());
    std::vector<int64_t> shape(c.data.shape().begin(), c.data.shape().end());
    PrimExpr value = t.is_float() ? ir::make_const(t, v) : ir::make_const(t, static_cast<int64_t>(v));
    return te::compute(
        topi::MakeShape(shape), [&](const std::vector<ir::Var>&) { return value; }, "T_const", topi::tag::kElemWise);
  }

  using PrimExpr = ir::PrimExpr;
  std::string fn_name_;
  const target::Target& target_;
  LoweredTE* out_;
  std::map<const graph::ExprNode*, std::vector<Tensor>> memo_;
};

}  // namespace

LoweredTE LowerToTE(const graph::Function& fn, const std::string& name, const target::Target& target) {
  TESSERA_ICHECK(fn != nullptr, "null function");
  RegisterComputes();
  if (!fn->body->has_checked_type()) graph::InferExprType(fn);
  LoweredTE out;
  TEBuilder builder(name, target, &out);
  for (const graph::Var& p : fn->params) out.inputs.push_back(builder.AddParam(p));
  std::vector<Tensor> results = builder.Visit(fn->body);
  // The kernel must write every output buffer itself: copy params and repeated outputs.
  for (size_t i = 0; i < results.size(); ++i) {
    bool needs_copy = results[i].op()->kind == te::OpKind::kPlaceholder;
    for (size_t j = 0; j < i; ++j) needs_copy |= results[j].same_as(results[i]);
    if (needs_copy) results[i] = topi::copy(results[i], "T_output_copy");
  }
  out.outputs = std::move(results);
  return out;
}

UnscheduledKernel LowerUnscheduled(const graph::Function& fn, const std::string& name, const target::Target& target) {
  LoweredTE te_graph = LowerToTE(fn, name, target);
  std::vector<Tensor> args = te_graph.inputs;
  args.insert(args.end(), te_graph.outputs.begin(), te_graph.outputs.end());
  UnscheduledKernel k;
  k.func = topi::x86::UniquifyBlockNames(te::create_prim_func(args, name));
  k.num_inputs = static_cast<int>(te_graph.inputs.size());
  k.anchors = std::move(te_graph.schedules);
  k.options = RewritesFor(target).schedule_options(target);
  return k;
}

tir::PrimFunc LowerPrimitiveFunction(const graph::Function& fn, const std::string& name, const target::Target& target,
                                     bool schedule) {
  UnscheduledKernel k = LowerUnscheduled(fn, name, target);
  if (!schedule) return k.func;
  return topi::x86::ScheduleDefault(k.func, k.options, k.anchors).func();
}

}  // namespace tessera::graph_lower
