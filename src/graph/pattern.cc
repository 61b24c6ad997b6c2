// Pattern construction and printing (graph/pattern.h).
#include "tessera/graph/pattern.h"

#include <sstream>

#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph {

DFPattern Wildcard() { return std::make_shared<WildcardPatternNode>(); }
DFPattern IsVar(const std::string& name) { return std::make_shared<VarPatternNode>(name); }
DFPattern IsConstant() { return std::make_shared<ConstantPatternNode>(); }
DFPattern IsExpr(const Expr& e) {
  TESSERA_ICHECK(e != nullptr, "IsExpr of a null expression");
  return std::make_shared<ExprPatternNode>(e);
}
DFPattern IsTuple(std::vector<DFPattern> fields) { return std::make_shared<TuplePatternNode>(std::move(fields)); }
DFPattern IsTupleGetItem(DFPattern tuple, int index) {
  return std::make_shared<TupleGetItemPatternNode>(std::move(tuple), index);
}
DFPattern HasAttr(DFPattern p, Attrs attrs) { return std::make_shared<AttrPatternNode>(std::move(p), std::move(attrs)); }
DFPattern HasType(DFPattern p, Type type) { return std::make_shared<TypePatternNode>(std::move(p), std::move(type)); }
DFPattern HasShape(DFPattern p, std::vector<int64_t> shape) {
  return std::make_shared<ShapePatternNode>(std::move(p), std::move(shape));
}
DFPattern HasDType(DFPattern p, DataType dtype) { return std::make_shared<DTypePatternNode>(std::move(p), dtype); }
DFPattern Optional(const DFPattern& p, const std::function<DFPattern(const DFPattern&)>& option) {
  // The longer form first, so that a partition takes the optional node when it is there.
  return option(p) | p;
}
DFPattern Dominates(DFPattern parent, DFPattern path, DFPattern child) {
  return std::make_shared<DominatorPatternNode>(std::move(parent), std::move(path), std::move(child));
}
DFPattern operator|(DFPattern a, DFPattern b) { return std::make_shared<AltPatternNode>(std::move(a), std::move(b)); }

DFPattern OpPatternBuilder::operator()(std::vector<DFPattern> args) const {
  for (const DFPattern& a : args) TESSERA_ICHECK(a != nullptr, "IsOp(", op, "): a null argument pattern");
  return std::make_shared<CallPatternNode>(op, std::move(args), false);
}
DFPattern OpPatternBuilder::operator()() const { return std::make_shared<CallPatternNode>(op, std::vector<DFPattern>{}, true); }

OpPatternBuilder IsOp(const std::string& op) {
  TESSERA_ICHECK(OpRegistry::Global().Has(op), "IsOp: operator '", op, "' is not registered");
  return OpPatternBuilder{op};
}

namespace {

void Print(std::ostream& os, const DFPattern& p) {
  switch (p->kind) {
    case PatternKind::kWildcard: os << "*"; return;
    case PatternKind::kVar: os << "%" << (p->as<VarPatternNode>()->name.empty() ? "var" : p->as<VarPatternNode>()->name); return;
    case PatternKind::kConstant: os << "const"; return;
    case PatternKind::kExpr: os << "expr"; return;
    case PatternKind::kCall: {
      const auto* c = p->as<CallPatternNode>();
      os << c->op << "(";
      if (c->any_args) os << "...";
      for (size_t i = 0; i < c->args.size(); ++i) {
        if (i) os << ", ";
        Print(os, c->args[i]);
      }
      os << ")";
      return;
    }
    case PatternKind::kTuple: {
      os << "(";
      const auto& f = p->as<TuplePatternNode>()->fields;
      for (size_t i = 0; i < f.size(); ++i) {
        if (i) os << ", ";
        Print(os, f[i]);
      }
      os << ")";
      return;
    }
    case PatternKind::kTupleGetItem: {
      const auto* t = p->as<TupleGetItemPatternNode>();
      Print(os, t->tuple);
      os << "." << (t->index < 0 ? std::string("*") : std::to_string(t->index));
      return;
    }
    case PatternKind::kAlt:
      os << "(";
      Print(os, p->as<AltPatternNode>()->left);
      os << " | ";
      Print(os, p->as<AltPatternNode>()->right);
      os << ")";
      return;
    case PatternKind::kAttr: {
      const auto* a = p->as<AttrPatternNode>();
      Print(os, a->pattern);
      os << "{";
      for (size_t i = 0; i < a->attrs.items().size(); ++i)
        os << (i ? ", " : "") << a->attrs.items()[i].first << "=" << AttrValueStr(a->attrs.items()[i].second);
      os << "}";
      return;
    }
    case PatternKind::kType:
      Print(os, p->as<TypePatternNode>()->pattern);
      os << " : " << TypeStr(p->as<TypePatternNode>()->type);
      return;
    case PatternKind::kShape: {
      Print(os, p->as<ShapePatternNode>()->pattern);
      os << " : [";
      const auto& s = p->as<ShapePatternNode>()->shape;
      for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << (s[i] < 0 ? std::string("?") : std::to_string(s[i]));
      os << "]";
      return;
    }
    case PatternKind::kDType:
      Print(os, p->as<DTypePatternNode>()->pattern);
      os << " : " << p->as<DTypePatternNode>()->dtype.str();
      return;
    case PatternKind::kDominator: {
      const auto* d = p->as<DominatorPatternNode>();
      os << "dominates(";
      Print(os, d->parent);
      os << ", ";
      Print(os, d->path);
      os << ", ";
      Print(os, d->child);
      os << ")";
      return;
    }
  }
}

}  // namespace

std::string PatternStr(const DFPattern& p) {
  std::ostringstream os;
  Print(os, p);
  return os.str();
}

}  // namespace tessera::graph
