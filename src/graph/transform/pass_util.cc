// Helpers shared by the graph passes: see pass_util.h.
#include "pass_util.h"

#include "tessera/runtime/float_formats.h"

#include "tessera/graph/functor.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform::detail {

const CallNode* AsOpCall(const Expr& e, const char* name) {
  const auto* c = e ? e->as<CallNode>() : nullptr;
  if (!c) return nullptr;
  const auto* op = c->op->as<OpNode>();
  return op && op->name == name ? c : nullptr;
}

std::string OpName(const Expr& e) {
  const auto* c = e ? e->as<CallNode>() : nullptr;
  const auto* op = c ? c->op->as<OpNode>() : nullptr;
  return op ? op->name : std::string();
}

bool IsReduceOp(const std::string& op) {
  return op == "sum" || op == "mean" || op == "max" || op == "min" || op == "prod";
}

void ForEachUse(const Expr& e, const std::function<void(const Expr&)>& use) {
  if (const auto* c = e->as<CallNode>()) {
    // A Var: a let-bound function (a loop) or a closure. GlobalVars and Constructors are leaves.
    if (c->op->as<FunctionNode>() || c->op->as<VarNode>()) use(c->op);
    for (const auto& a : c->args) use(a);
  } else if (const auto* t = e->as<TupleNode>()) {
    for (const auto& f : t->fields) use(f);
  } else if (const auto* g = e->as<TupleGetItemNode>()) {
    use(g->tuple);
  } else if (const auto* l = e->as<LetNode>()) {
    use(l->value);
    use(l->body);
  } else if (const auto* i = e->as<IfNode>()) {
    use(i->cond);
    use(i->true_branch);
    use(i->false_branch);
  } else if (const auto* f = e->as<FunctionNode>()) {
    use(f->body);
  } else if (const auto* m = e->as<MatchNode>()) {
    use(m->data);
    for (const auto& c : m->clauses) use(c.rhs);
  }
}

std::unordered_map<const ExprNode*, int> CountUses(const Expr& root) {
  std::unordered_map<const ExprNode*, int> uses;
  PostOrderVisit(root, [&](const Expr& e) { ForEachUse(e, [&](const Expr& c) { uses[c.get()]++; }); });
  uses[root.get()]++;
  return uses;
}

std::optional<std::vector<double>> ToDoubles(const runtime::NDArray& a) {
  const DataType dt = a.dtype();
  std::vector<double> out(static_cast<size_t>(a.NumElements()));
  if (dt == DataType::Float(32)) {
    const float* p = a.data<float>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else if (dt == DataType::Float(64)) {
    const double* p = a.data<double>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    return std::nullopt;
  }
  return out;
}

runtime::NDArray FromDoubles(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype) {
  runtime::NDArray a = runtime::NDArray::Empty(std::move(shape), dtype);
  TESSERA_ICHECK(static_cast<size_t>(a.NumElements()) == values.size(), "FromDoubles: ", values.size(),
                 " values for ", a.NumElements(), " elements");
  if (dtype == DataType::Float(32)) {
    float* p = a.data<float>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  } else {
    TESSERA_ICHECK(dtype == DataType::Float(64), "FromDoubles: unsupported dtype ", dtype.str());
    double* p = a.data<double>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  }
  return a;
}

Constant ScalarConstant(double value, DataType dtype) {
  runtime::NDArray a = runtime::NDArray::Empty({}, dtype);
  runtime::StoreFromDouble(a.raw_data(), 0, dtype, value);
  return ConstantNode::make(a);
}

}  // namespace tessera::graph::transform::detail
