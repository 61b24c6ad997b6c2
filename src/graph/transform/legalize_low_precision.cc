// LegalizeLowPrecision: see include/tessera/graph/transform/legalize_low_precision.h.
#include "tessera/graph/transform/legalize_low_precision.h"

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"

namespace tessera::graph::transform {
namespace {

using namespace detail;

/// The type a storage-only dtype computes in (the dtype itself when it is not storage-only).
DataType ComputeType(DataType t) {
  if (!t.is_storage_only()) return t;
  if (t.is_int()) return DataType::Int(8);
  if (t.is_uint()) return DataType::UInt(8);
  return DataType::Float(32);
}

bool IsStorageTensor(const Type& t) {
  const auto* tt = t ? t->as<TensorTypeNode>() : nullptr;
  return tt && tt->dtype.is_storage_only();
}

bool HasStorageType(const Type& t) {
  if (IsStorageTensor(t)) return true;
  if (const auto* tup = t ? t->as<TupleTypeNode>() : nullptr) {
    for (const Type& f : tup->fields)
      if (HasStorageType(f)) return true;
  }
  return false;
}

Expr CastTo(const Expr& e, DataType t) {
  Expr c = CallOp("cast", {e}, Attrs{{"dtype", t.str()}});
  InferExprType(c);
  return c;
}

/// `e` (of the widened type) converted back to `original` (tensor or tuple of tensors).
Expr Narrow(const Expr& e, const Type& original) {
  if (const auto* tt = original->as<TensorTypeNode>()) {
    const auto* now = TensorTypeOf(e);
    return now && now->dtype != tt->dtype ? CastTo(e, tt->dtype) : e;
  }
  const auto* tup = original->as<TupleTypeNode>();
  if (!tup || !HasStorageType(original)) return e;
  std::vector<Expr> fields;
  for (size_t i = 0; i < tup->fields.size(); ++i) {
    Expr item = TupleGetItemNode::make(e, static_cast<int>(i));
    InferExprType(item);
    fields.push_back(Narrow(item, tup->fields[i]));
  }
  Expr t = TupleNode::make(std::move(fields));
  InferExprType(t);
  return t;
}

/// The type of `e`, inferred when a mutation rebuilt it untyped.
const Type& TypeOf(const Expr& e) {
  if (!e->has_checked_type()) InferExprType(e);
  return e->checked_type();
}

class Legalizer : public ExprMutator {
 protected:
  Expr MutateCall_(const Call& call) override {
    Expr rewritten = ExprMutator::MutateCall_(call);
    const auto* c = rewritten->as<CallNode>();
    if (!c || !c->op->as<OpNode>()) return rewritten;
    if (const std::string op = OpName(rewritten); op == "cast" || op == "reinterpret") return rewritten;
    bool storage = HasStorageType(call->checked_type());
    for (const Expr& a : c->args) storage = storage || HasStorageType(TypeOf(a));
    if (!storage) return rewritten;
    std::vector<Expr> args;
    for (const Expr& a : c->args) {
      TypeOf(a);
      const auto* tt = TensorTypeOf(a);
      args.push_back(tt && tt->dtype.is_storage_only() ? CastTo(a, ComputeType(tt->dtype)) : a);
    }
    Expr wide = CallNode::make(c->op, std::move(args), c->attrs);
    InferExprType(wide);
    return Narrow(wide, call->checked_type());
  }
};

}  // namespace

IRModule LegalizeLowPrecision(const IRModule& input) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Legalizer l;
    Expr body = l.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return InferType(out);
}

Pass LegalizeLowPrecisionPass() {
  return Pass({"LegalizeLowPrecision",
               "ops on float16 / bfloat16 / float8 / float4 / int4 / int2 compute in float32 / int8 between casts", 0,
               true},
              [](const IRModule& m, const PassContext&) { return LegalizeLowPrecision(m); });
}

}  // namespace tessera::graph::transform
