#include "tessera/graph/expr.h"

#include <map>
#include <mutex>

#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph {

const Type& ExprNode::checked_type() const {
  TESSERA_ICHECK(checked_type_ != nullptr, "checked_type() read before InferType ran on this expression");
  return checked_type_;
}

Var VarNode::make(std::string name_hint, Type type_annotation) {
  return std::make_shared<const VarNode>(std::move(name_hint), std::move(type_annotation));
}

Type ConstantNode::tensor_type() const {
  return TensorTypeNode::make(data.shape(), data.dtype());
}

Constant ConstantNode::make(runtime::NDArray data) {
  return std::make_shared<const ConstantNode>(std::move(data));
}

Op OpNode::Get(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, Op> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  OpRegistry::Global().Get(name);  // throws InternalError for unknown ops
  Op op = std::make_shared<const OpNode>(name);
  cache.emplace(name, op);
  return op;
}

Call CallNode::make(Expr op, std::vector<Expr> args, Attrs attrs) {
  TESSERA_ICHECK(op != nullptr, "Call with a null callee");
  for (size_t i = 0; i < args.size(); ++i) TESSERA_ICHECK(args[i] != nullptr, "Call argument ", i, " is null");
  if (auto* o = op->as<OpNode>()) {
    const OpInfo& info = OpRegistry::Global().Get(o->name);
    TESSERA_ICHECK(info.num_inputs < 0 || static_cast<size_t>(info.num_inputs) == args.size(), "op ", o->name,
                   " takes ", info.num_inputs, " arguments, got ", args.size());
  }
  return std::make_shared<const CallNode>(std::move(op), std::move(args), std::move(attrs));
}

Tuple TupleNode::make(std::vector<Expr> fields) {
  for (size_t i = 0; i < fields.size(); ++i) TESSERA_ICHECK(fields[i] != nullptr, "Tuple field ", i, " is null");
  return std::make_shared<const TupleNode>(std::move(fields));
}

TupleGetItem TupleGetItemNode::make(Expr tuple, int index) {
  TESSERA_ICHECK(tuple != nullptr, "TupleGetItem of a null tuple");
  TESSERA_ICHECK(index >= 0, "TupleGetItem index must be >= 0, got ", index);
  return std::make_shared<const TupleGetItemNode>(std::move(tuple), index);
}

Let LetNode::make(Var var, Expr value, Expr body) {
  TESSERA_ICHECK(var && value && body, "Let with a null var, value or body");
  return std::make_shared<const LetNode>(std::move(var), std::move(value), std::move(body));
}

If IfNode::make(Expr cond, Expr true_branch, Expr false_branch) {
  TESSERA_ICHECK(cond && true_branch && false_branch, "If with a null condition or branch");
  return std::make_shared<const IfNode>(std::move(cond), std::move(true_branch), std::move(false_branch));
}

Function FunctionNode::make(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs) {
  for (size_t i = 0; i < params.size(); ++i) {
    TESSERA_ICHECK(params[i] != nullptr, "Function parameter ", i, " is null");
    TESSERA_ICHECK(params[i]->type_annotation != nullptr, "Function parameter %", params[i]->name_hint,
                   " has no type annotation");
  }
  TESSERA_ICHECK(body != nullptr, "Function with a null body");
  return std::make_shared<const FunctionNode>(std::move(params), std::move(body), std::move(ret_type),
                                              std::move(attrs));
}

GlobalVar GlobalVarNode::make(std::string name) {
  TESSERA_ICHECK(!name.empty(), "GlobalVar without a name");
  return std::make_shared<const GlobalVarNode>(std::move(name));
}

Constructor ConstructorNode::make(TypeData type_data, int tag) {
  TESSERA_ICHECK(type_data != nullptr, "Constructor of a null TypeData");
  TESSERA_ICHECK(tag >= 0 && tag < static_cast<int>(type_data->constructors.size()), "constructor tag ", tag,
                 " out of range for type ", type_data->name);
  return std::make_shared<const ConstructorNode>(std::move(type_data), tag);
}

ClausePattern ClausePatternNode::Wildcard() {
  return std::make_shared<const ClausePatternNode>(ClausePatternKind::kWildcard, nullptr, nullptr, std::vector<ClausePattern>{});
}

ClausePattern ClausePatternNode::Bind(Var var) {
  TESSERA_ICHECK(var != nullptr, "PatternVar of a null variable");
  return std::make_shared<const ClausePatternNode>(ClausePatternKind::kVar, std::move(var), nullptr, std::vector<ClausePattern>{});
}

ClausePattern ClausePatternNode::Ctor(Constructor ctor, std::vector<ClausePattern> fields) {
  TESSERA_ICHECK(ctor != nullptr, "PatternConstructor of a null constructor");
  TESSERA_ICHECK(fields.size() == ctor->def().fields.size(), "pattern ", ctor->name(), " has ", fields.size(),
                 " sub-patterns for ", ctor->def().fields.size(), " fields");
  for (const auto& f : fields) TESSERA_ICHECK(f != nullptr, "null sub-pattern of ", ctor->name());
  return std::make_shared<const ClausePatternNode>(ClausePatternKind::kConstructor, nullptr, std::move(ctor), std::move(fields));
}

ClausePattern ClausePatternNode::Tuple(std::vector<ClausePattern> fields) {
  for (const auto& f : fields) TESSERA_ICHECK(f != nullptr, "null sub-pattern of a tuple pattern");
  return std::make_shared<const ClausePatternNode>(ClausePatternKind::kTuple, nullptr, nullptr, std::move(fields));
}

std::vector<Var> ClausePatternNode::BoundVars() const {
  std::vector<Var> out;
  if (kind == ClausePatternKind::kVar) out.push_back(var);
  for (const auto& f : fields) {
    std::vector<Var> inner = f->BoundVars();
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

Match MatchNode::make(Expr data, std::vector<MatchClause> clauses) {
  TESSERA_ICHECK(data != nullptr, "Match of a null value");
  TESSERA_ICHECK(!clauses.empty(), "Match without a clause");
  for (const auto& c : clauses) TESSERA_ICHECK(c.pattern && c.rhs, "Match clause with a null pattern or result");
  return std::make_shared<const MatchNode>(std::move(data), std::move(clauses));
}

}  // namespace tessera::graph
