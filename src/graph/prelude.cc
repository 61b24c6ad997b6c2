// The prelude's types: see include/tessera/graph/prelude.h.
#include "tessera/graph/prelude.h"

namespace tessera::graph {

TypeData PreludeList() {
  static const TypeData list = [] {
    const Type a = TypeVarNode::make("A");
    return TypeDataNode::make("List", {"A"}, {{"Cons", {a, ADTTypeNode::make("List", {a})}}, {"Nil", {}}});
  }();
  return list;
}

TypeData PreludeOption() {
  static const TypeData option = [] {
    return TypeDataNode::make("Option", {"A"}, {{"Some", {TypeVarNode::make("A")}}, {"None", {}}});
  }();
  return option;
}

void AddPrelude(IRModule* mod) {
  mod->AddTypeDef(PreludeList());
  mod->AddTypeDef(PreludeOption());
}

std::string PreludeText() { return PreludeList()->str() + "\n\n" + PreludeOption()->str() + "\n\n"; }

}  // namespace tessera::graph
