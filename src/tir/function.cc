// PrimFunc and IRModule (tir/function.h).
#include "tessera/tir/function.h"

#include <set>

#include "tessera/support/error.h"

namespace tessera::tir {

PrimFunc PrimFunc::make(std::string name, std::vector<Buffer> params, Stmt body,
                        std::map<std::string, std::string> attrs, std::vector<ir::Var> shape_vars) {
  TESSERA_ICHECK(!name.empty(), "PrimFunc needs a name");
  TESSERA_ICHECK(body.defined(), "PrimFunc ", name, ": undefined body");
  for (const auto& p : params) TESSERA_ICHECK(p.defined(), "PrimFunc ", name, ": undefined parameter");
  std::set<const ir::VarNode*> known;
  for (const auto& v : shape_vars) {
    TESSERA_ICHECK(v.defined(), "PrimFunc ", name, ": undefined shape var");
    TESSERA_ICHECK(known.insert(v.get_var()).second, "PrimFunc ", name, ": shape var ", v->name_hint,
                   " listed twice");
  }
  for (const auto& p : params) {
    for (const auto& d : p->shape) {
      if (auto* v = d.as<ir::VarNode>()) {
        TESSERA_ICHECK(known.count(v), "PrimFunc ", name, ": dimension '", v->name_hint, "' of param ", p->name,
                       " is not among its shape_vars");
      }
    }
  }
  auto n = std::make_shared<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  n->shape_vars = std::move(shape_vars);
  return PrimFunc(std::move(n));
}

PrimFunc PrimFunc::WithBody(Stmt body) const {
  TESSERA_ICHECK(defined(), "WithBody on an undefined PrimFunc");
  return make(node_->name, node_->params, std::move(body), node_->attrs, node_->shape_vars);
}

void IRModule::Add(const PrimFunc& func) {
  TESSERA_ICHECK(func.defined(), "IRModule::Add of an undefined function");
  TESSERA_ICHECK(!Contains(func->name), "IRModule already has a function named ", func->name);
  index_[func->name] = functions_.size();
  functions_.push_back(func);
}

const PrimFunc& IRModule::Lookup(const std::string& name) const {
  auto it = index_.find(name);
  TESSERA_ICHECK(it != index_.end(), "IRModule has no function named ", name);
  return functions_[it->second];
}

}  // namespace tessera::tir
