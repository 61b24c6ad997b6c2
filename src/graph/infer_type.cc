#include "tessera/graph/infer_type.h"

#include <set>
#include <sstream>

#include "tessera/graph/expr_util.h"
#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph {

namespace {

std::string ArgTypesStr(const std::vector<Type>& types) {
  std::ostringstream os;
  for (size_t i = 0; i < types.size(); ++i) os << (i ? ", " : "") << TypeStr(types[i]);
  return os.str();
}

/// Binds the TypeVars of `pattern` (a constructor's field type) to the parts of `actual`, unifying a
/// TypeVar bound twice; false when the two do not fit.
bool BindTypeVars(const Type& pattern, const Type& actual, std::vector<std::pair<std::string, Type>>* bound) {
  if (auto* v = pattern->as<TypeVarNode>()) {
    for (auto& [name, t] : *bound) {
      if (name != v->name) continue;
      Type u = Unify(t, actual);
      if (!u) return false;
      t = u;
      return true;
    }
    bound->emplace_back(v->name, actual);
    return true;
  }
  if (actual->as<IncompleteTypeNode>()) return true;
  if (pattern->kind != actual->kind) return false;
  auto all = [&](const std::vector<Type>& p, const std::vector<Type>& a) {
    if (p.size() != a.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!BindTypeVars(p[i], a[i], bound)) return false;
    return true;
  };
  if (auto* x = pattern->as<ADTTypeNode>()) return x->name == actual->as<ADTTypeNode>()->name && all(x->args, actual->as<ADTTypeNode>()->args);
  if (auto* x = pattern->as<TupleTypeNode>()) return all(x->fields, actual->as<TupleTypeNode>()->fields);
  if (auto* x = pattern->as<FuncTypeNode>()) {
    auto* y = actual->as<FuncTypeNode>();
    return all(x->arg_types, y->arg_types) && BindTypeVars(x->ret_type, y->ret_type, bound);
  }
  return Unify(pattern, actual) != nullptr;
}

/// The ADT type of a value of `data` with its type params bound (an unbound one is IncompleteType).
Type ApplyTypeData(const TypeDataNode& data, const std::vector<std::pair<std::string, Type>>& bound) {
  std::vector<Type> args;
  for (const std::string& p : data.type_params) {
    Type t = IncompleteTypeNode::make();
    for (const auto& [name, b] : bound)
      if (name == p) t = b;
    args.push_back(t);
  }
  return ADTTypeNode::make(data.name, std::move(args));
}

class TypeInferencer {
 public:
  friend void tessera::graph::InferPatternTypes(const ClausePatternNode& pattern, const Type& type);
  explicit TypeInferencer(const IRModule* mod = nullptr) : mod_(mod) {}

  Type Infer(const Expr& e) {
    // A global's type is the module's, looked up each time (a pass may have retyped the function).
    if (e->has_checked_type() && e->kind != ExprKind::kGlobalVar) return e->checked_type();
    Type t = Compute(e);
    e->set_checked_type(t);
    return t;
  }

  /// The type of global function `name` of the module (its body inferred first when its return
  /// type is not annotated).
  Type GlobalType(const std::string& name) {
    TESSERA_CHECK(mod_ != nullptr, "@", name, " is a global function, and this expression is typed outside a module");
    const Function& f = mod_->Lookup(name);
    if (f->has_checked_type()) return f->checked_type();
    if (f->ret_type && !IsIncomplete(f->ret_type)) {
      std::vector<Type> params;
      for (const Var& p : f->params) params.push_back(p->type_annotation);
      return FuncTypeNode::make(std::move(params), f->ret_type);
    }
    TESSERA_CHECK(!in_progress_.count(name), "@", name,
                  " is called recursively and has no return type: annotate it, `def @", name, "(...) -> T { ... }`");
    return InferGlobal(name);
  }

  /// Infers global function `name` (its body included) and returns its type.
  Type InferGlobal(const std::string& name) {
    TESSERA_CHECK(mod_ != nullptr, "@", name, " is a global function, and this expression is typed outside a module");
    const Function& f = mod_->Lookup(name);
    in_progress_.insert(name);
    Type t = Infer(f);
    in_progress_.erase(name);
    return t;
  }

 private:
  Type Compute(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kVar: {
        auto* v = e->as<VarNode>();
        if (!v->type_annotation) {
          TESSERA_THROW(UserError, "variable %", v->name_hint,
                        " has no type: annotate function parameters and free variables with a type");
        }
        return v->type_annotation;
      }
      case ExprKind::kConstant: return e->as<ConstantNode>()->tensor_type();
      case ExprKind::kOp: {
        // An op used as a value (not called) has no first-class type in this IR.
        TESSERA_THROW(UserError, "operator ", e->as<OpNode>()->name, " used as a value; call it instead");
      }
      case ExprKind::kGlobalVar: return GlobalType(e->as<GlobalVarNode>()->name);
      case ExprKind::kConstructor:
        TESSERA_THROW(UserError, "constructor ", e->as<ConstructorNode>()->name(),
                      " used as a value; call it with its fields instead (", e->as<ConstructorNode>()->name(), "(...))");
      case ExprKind::kCall: return InferCall(e->as<CallNode>());
      case ExprKind::kTuple: {
        std::vector<Type> fields;
        for (const Expr& f : e->as<TupleNode>()->fields) fields.push_back(Infer(f));
        return TupleTypeNode::make(std::move(fields));
      }
      case ExprKind::kTupleGetItem: {
        auto* g = e->as<TupleGetItemNode>();
        Type t = Infer(g->tuple);
        auto* tt = t->as<TupleTypeNode>();
        TESSERA_CHECK(tt != nullptr, "TupleGetItem .", g->index, " of a non-tuple of type ", t->str());
        TESSERA_CHECK(static_cast<size_t>(g->index) < tt->fields.size(), "TupleGetItem index ", g->index,
                      " out of range for ", t->str());
        return tt->fields[g->index];
      }
      case ExprKind::kLet: {
        auto* l = e->as<LetNode>();
        Type vt = Infer(l->value);
        if (l->var->type_annotation) {
          Type u = Unify(l->var->type_annotation, vt);
          if (!u) {
            TESSERA_THROW(UserError, "let %", l->var->name_hint, " is annotated ", l->var->type_annotation->str(),
                          " but bound to a value of type ", vt->str());
          }
          vt = u;
        }
        l->var->set_checked_type(vt);
        return Infer(l->body);
      }
      case ExprKind::kIf: {
        auto* i = e->as<IfNode>();
        Type ct = Infer(i->cond);
        auto* c = ct->as<TensorTypeNode>();
        TESSERA_CHECK(c && c->ndim() == 0 && c->dtype.is_bool(),
                      "if condition must be a scalar bool tensor, got ", ct->str());
        Type t = Infer(i->true_branch), f = Infer(i->false_branch);
        Type u = Unify(t, f);
        TESSERA_CHECK(u != nullptr, "if branches have different types: ", t->str(), " vs ", f->str());
        return u;
      }
      case ExprKind::kFunction: {
        auto* f = e->as<FunctionNode>();
        std::vector<Type> params;
        for (const Var& p : f->params) params.push_back(Infer(p));
        Type body = Infer(f->body);
        if (f->ret_type) {
          Type u = Unify(f->ret_type, body);
          if (!u) {
            TESSERA_THROW(UserError, "function declares return type ", f->ret_type->str(), " but its body has type ",
                          body->str());
          }
          body = u;
        }
        return FuncTypeNode::make(std::move(params), body);
      }
      case ExprKind::kMatch: return InferMatch(e->as<MatchNode>());
    }
    TESSERA_ICHECK(false, "unknown expression kind");
    return nullptr;
  }

  Type InferCall(const CallNode* call) {
    std::vector<Type> arg_types;
    for (const Expr& a : call->args) arg_types.push_back(Infer(a));
    if (auto* op = call->op->as<OpNode>()) {
      const OpInfo& info = OpRegistry::Global().Get(op->name);
      try {
        Type t = info.type_relation(arg_types, call->attrs);
        TESSERA_ICHECK(t != nullptr, "type relation of ", op->name, " returned null");
        return t;
      } catch (const UnsupportedError& err) {
        TESSERA_THROW(UnsupportedError, "unsupported ", op->name, "(", ArgTypesStr(arg_types), ")",
                      call->attrs.empty() ? "" : " with ", call->attrs.str(), ": ", err.what());
      } catch (const UserError& err) {
        TESSERA_THROW(UserError, "type error in ", op->name, "(", ArgTypesStr(arg_types), ")",
                      call->attrs.empty() ? "" : " with ", call->attrs.str(), ": ", err.what());
      }
    }
    if (auto* ctor = call->op->as<ConstructorNode>()) return InferConstructorCall(*ctor, arg_types);
    Type ft = Infer(call->op);
    auto* fn = ft->as<FuncTypeNode>();
    TESSERA_CHECK(fn != nullptr, "calling a value of non-function type ", ft->str());
    TESSERA_CHECK(fn->arg_types.size() == arg_types.size(), "function of type ", ft->str(), " called with ",
                  arg_types.size(), " arguments");
    for (size_t i = 0; i < arg_types.size(); ++i) {
      TESSERA_CHECK(Unify(fn->arg_types[i], arg_types[i]) != nullptr, "argument ", i, " of type ",
                    arg_types[i]->str(), " does not match parameter type ", fn->arg_types[i]->str(),
                    " of function ", ft->str());
    }
    return fn->ret_type;
  }

  /// `Cons(x, xs)`: the ADT type with its type params bound by the fields' types.
  Type InferConstructorCall(const ConstructorNode& ctor, const std::vector<Type>& arg_types) {
    const ConstructorDef& def = ctor.def();
    TESSERA_CHECK(def.fields.size() == arg_types.size(), "constructor ", def.name, " of type ",
                  ctor.type_data->name, " takes ", def.fields.size(), " field(s), got ", arg_types.size());
    std::vector<std::pair<std::string, Type>> bound;
    for (size_t i = 0; i < arg_types.size(); ++i) {
      if (!BindTypeVars(def.fields[i], arg_types[i], &bound)) {
        std::vector<std::pair<std::string, Type>> so_far = bound;
        TESSERA_THROW(UserError, "field ", i, " of ", def.name, "(", ArgTypesStr(arg_types), ") has type ",
                      arg_types[i]->str(), " where ", ctor.type_data->name, " expects ",
                      Substitute(def.fields[i], so_far)->str());
      }
    }
    return ApplyTypeData(*ctor.type_data, bound);
  }

  /// The types `pattern`'s variables take when it matches a value of type `type`.
  static void TypePattern(const ClausePatternNode& pattern, const Type& type) {
    switch (pattern.kind) {
      case ClausePatternKind::kWildcard: return;
      case ClausePatternKind::kVar: {
        Type t = type;
        if (const Type& a = pattern.var->type_annotation) {
          t = Unify(a, type);
          TESSERA_CHECK(t != nullptr, "pattern variable %", pattern.var->name_hint, " is annotated ", a->str(),
                        " but matches a value of type ", type->str());
        }
        pattern.var->set_checked_type(t);
        return;
      }
      case ClausePatternKind::kConstructor: {
        const ConstructorNode& ctor = *pattern.ctor;
        auto* adt = type->as<ADTTypeNode>();
        TESSERA_CHECK(adt && adt->name == ctor.type_data->name, "pattern ", ctor.name(), "(...) of type ",
                      ctor.type_data->name, " matches a value of type ", type->str());
        std::vector<Type> fields = ConstructorFieldTypes(ctor, *adt);
        for (size_t i = 0; i < fields.size(); ++i) TypePattern(*pattern.fields[i], fields[i]);
        return;
      }
      case ClausePatternKind::kTuple: {
        auto* tt = type->as<TupleTypeNode>();
        TESSERA_CHECK(tt && tt->fields.size() == pattern.fields.size(), "a tuple pattern of ", pattern.fields.size(),
                      " fields matches a value of type ", type->str());
        for (size_t i = 0; i < tt->fields.size(); ++i) TypePattern(*pattern.fields[i], tt->fields[i]);
        return;
      }
    }
  }

  Type InferMatch(const MatchNode* match) {
    Type data = Infer(match->data);
    Type result;
    for (size_t i = 0; i < match->clauses.size(); ++i) {
      const MatchClause& c = match->clauses[i];
      TypePattern(*c.pattern, data);
      Type t = Infer(c.rhs);
      Type u = result ? Unify(result, t) : t;
      TESSERA_CHECK(u != nullptr, "match clauses have different types: clause ", i, " has ", t->str(),
                    ", the clauses before it ", result->str());
      result = u;
    }
    return result;
  }

  const IRModule* mod_;
  std::set<std::string> in_progress_;  // globals whose type is being inferred
};

}  // namespace

void InferPatternTypes(const ClausePatternNode& pattern, const Type& type) {
  TESSERA_ICHECK(type != nullptr, "InferPatternTypes of a null type");
  TypeInferencer::TypePattern(pattern, type);
}

Type InferExprType(const Expr& e, const IRModule* mod) {
  TESSERA_ICHECK(e != nullptr, "InferExprType of a null expression");
  return TypeInferencer(mod).Infer(e);
}

IRModule InferType(const IRModule& mod) {
  IRModule out = IRModule::WithTypesOf(mod);
  TypeInferencer inferencer(&mod);
  for (const auto& [name, func] : mod.functions()) {
    Type t;
    try {
      t = inferencer.InferGlobal(name);
    } catch (const UnsupportedError& err) {
      TESSERA_THROW(UnsupportedError, "in function @", name, ": ", err.what());
    } catch (const UserError& err) {
      TESSERA_THROW(UserError, "in function @", name, ": ", err.what());
    }
    if (func->ret_type) {
      out.Add(name, func);
    } else {
      Function typed = FunctionNode::make(func->params, func->body, t->as<FuncTypeNode>()->ret_type, func->attrs);
      typed->set_checked_type(t);
      out.Add(name, typed);
    }
  }
  return out;
}

}  // namespace tessera::graph
