#include "tessera/graph/infer_type.h"

#include <sstream>

#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph {

namespace {

std::string ArgTypesStr(const std::vector<Type>& types) {
  std::ostringstream os;
  for (size_t i = 0; i < types.size(); ++i) os << (i ? ", " : "") << TypeStr(types[i]);
  return os.str();
}

class TypeInferencer {
 public:
  Type Infer(const Expr& e) {
    if (e->has_checked_type()) return e->checked_type();
    Type t = Compute(e);
    e->set_checked_type(t);
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
        if (l->var->type_annotation && !StructuralEqual(l->var->type_annotation, vt)) {
          TESSERA_THROW(UserError, "let %", l->var->name_hint, " is annotated ", l->var->type_annotation->str(),
                        " but bound to a value of type ", vt->str());
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
        TESSERA_CHECK(StructuralEqual(t, f), "if branches have different types: ", t->str(), " vs ", f->str());
        return t;
      }
      case ExprKind::kFunction: {
        auto* f = e->as<FunctionNode>();
        std::vector<Type> params;
        for (const Var& p : f->params) params.push_back(Infer(p));
        Type body = Infer(f->body);
        if (f->ret_type && !StructuralEqual(f->ret_type, body)) {
          TESSERA_THROW(UserError, "function declares return type ", f->ret_type->str(), " but its body has type ",
                        body->str());
        }
        return FuncTypeNode::make(std::move(params), body);
      }
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
    Type ft = Infer(call->op);
    auto* fn = ft->as<FuncTypeNode>();
    TESSERA_CHECK(fn != nullptr, "calling a value of non-function type ", ft->str());
    TESSERA_CHECK(fn->arg_types.size() == arg_types.size(), "function of type ", ft->str(), " called with ",
                  arg_types.size(), " arguments");
    for (size_t i = 0; i < arg_types.size(); ++i) {
      TESSERA_CHECK(StructuralEqual(fn->arg_types[i], arg_types[i]), "argument ", i, " of type ",
                    arg_types[i]->str(), " does not match parameter type ", fn->arg_types[i]->str(),
                    " of function ", ft->str());
    }
    return fn->ret_type;
  }
};

}  // namespace

Type InferExprType(const Expr& e) {
  TESSERA_ICHECK(e != nullptr, "InferExprType of a null expression");
  return TypeInferencer().Infer(e);
}

IRModule InferType(const IRModule& mod) {
  IRModule out;
  for (const auto& [name, func] : mod.functions()) {
    Type t;
    try {
      t = InferExprType(func);
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
