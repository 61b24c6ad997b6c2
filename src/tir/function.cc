// PrimFunc and IRModule (tir/function.h).
#include "tessera/tir/function.h"

#include "tessera/support/error.h"

namespace tessera::tir {

PrimFunc PrimFunc::make(std::string name, std::vector<Buffer> params, Stmt body,
                        std::map<std::string, std::string> attrs) {
  TESSERA_ICHECK(!name.empty(), "PrimFunc needs a name");
  TESSERA_ICHECK(body.defined(), "PrimFunc ", name, ": undefined body");
  for (const auto& p : params) TESSERA_ICHECK(p.defined(), "PrimFunc ", name, ": undefined parameter");
  auto n = std::make_shared<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  return PrimFunc(std::move(n));
}

PrimFunc PrimFunc::WithBody(Stmt body) const {
  TESSERA_ICHECK(defined(), "WithBody on an undefined PrimFunc");
  return make(node_->name, node_->params, std::move(body), node_->attrs);
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
