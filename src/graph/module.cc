#include "tessera/graph/module.h"

#include "tessera/support/error.h"

namespace tessera::graph {

IRModule IRModule::FromMain(Function main) {
  IRModule m;
  m.Add("main", std::move(main));
  return m;
}

const Function& IRModule::Lookup(const std::string& name) const {
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    std::string names;
    for (const auto& [k, v] : functions_) names += (names.empty() ? "" : ", ") + k;
    TESSERA_THROW(UserError, "IRModule has no function '@", name, "' (functions: ",
                  names.empty() ? "none" : names, ")");
  }
  return it->second;
}

IRModule IRModule::WithTypesOf(const IRModule& mod) {
  IRModule out;
  out.type_defs_ = mod.type_defs_;
  return out;
}

void IRModule::AddTypeDef(const TypeData& data) {
  TESSERA_ICHECK(data != nullptr, "AddTypeDef of a null type");
  if (auto it = type_defs_.find(data->name); it != type_defs_.end()) {
    TESSERA_CHECK(it->second == data || it->second->str() == data->str(), "type ", data->name,
                  " is defined twice, differently:\n", it->second->str(), "\n", data->str());
    return;
  }
  for (const ConstructorDef& c : data->constructors) {
    if (Constructor other = FindConstructor(c.name))
      TESSERA_THROW(UserError, "constructor ", c.name, " of type ", data->name, " is also a constructor of type ",
                    other->type_data->name, ": constructor names are unique in a module");
  }
  type_defs_[data->name] = data;
}

TypeData IRModule::FindTypeDef(const std::string& name) const {
  auto it = type_defs_.find(name);
  return it == type_defs_.end() ? nullptr : it->second;
}

Constructor IRModule::FindConstructor(const std::string& name) const {
  for (const auto& [type_name, data] : type_defs_)
    if (int tag = data->Tag(name); tag >= 0) return ConstructorNode::make(data, tag);
  return nullptr;
}

}  // namespace tessera::graph
