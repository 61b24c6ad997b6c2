// FlattenRegion (byoc/region.h).
#include "tessera/byoc/region.h"

#include <unordered_map>

#include "tessera/graph/type.h"
#include "tessera/support/error.h"

namespace tessera::byoc {

int64_t RegionValue::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

bool AllStaticFloat32(const graph::CallNode& call) {
  auto ok = [](const graph::Type& t) {
    const auto* tt = t ? t->as<graph::TensorTypeNode>() : nullptr;
    return tt && tt->dtype == DataType::Float(32) && graph::StaticShape(tt->shape).has_value();
  };
  if (!call.has_checked_type() || !ok(call.checked_type())) return false;
  for (const graph::Expr& a : call.args)
    if (!a->has_checked_type() || !ok(a->checked_type())) return false;
  return true;
}

std::vector<int64_t> Padding2D(const graph::Attrs& attrs) {
  std::vector<int64_t> p = attrs.GetInts("padding", {0, 0, 0, 0});
  if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
  TESSERA_ICHECK(p.size() == 4, "padding must have 1, 2 or 4 values");
  return p;
}

namespace {

class Flattener {
 public:
  Flattener(Region* r, bool composites_as_steps) : r_(*r), composites_as_steps_(composites_as_steps) {}

  void Run(const graph::FunctionNode& fn) {
    for (const graph::Var& p : fn.params) {
      value_of_[p.get()] = NewValue(RegionValue::kParam, static_cast<int>(r_.params.size()), p->checked_type(), "a parameter");
      r_.params.push_back(value_of_[p.get()]);
    }
    if (const auto* t = fn.body->as<graph::TupleNode>()) {
      for (const graph::Expr& f : t->fields) r_.results.push_back(Visit(f));
    } else {
      r_.results.push_back(Visit(fn.body));
    }
    r_.uses.assign(r_.values.size(), 0);
    for (const RegionStep& s : r_.steps)
      for (int a : s.args) r_.uses[a]++;
    for (int v : r_.results) r_.uses[v]++;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    TESSERA_THROW(UnsupportedError, "BYOC backend '", r_.backend, "', region ", r_.symbol, ": ", what,
                  "; its predicate should not have accepted it (keep the op on Tessera's path)");
  }

  int NewValue(RegionValue::Kind kind, int index, const graph::Type& type, const std::string& what) {
    const auto* tt = type ? type->as<graph::TensorTypeNode>() : nullptr;
    if (!tt) Fail(what + " is not a tensor (" + (type ? type->str() : "untyped") + ")");
    auto shape = graph::StaticShape(tt->shape);
    if (!shape) Fail(what + " has the symbolic shape " + type->str());
    r_.values.push_back(RegionValue{kind, index, *shape, tt->dtype});
    return static_cast<int>(r_.values.size()) - 1;
  }

  int Visit(const graph::Expr& e) {
    if (auto it = value_of_.find(e.get()); it != value_of_.end()) return it->second;
    int id = -1;
    if (const auto* c = e->as<graph::ConstantNode>()) {
      id = NewValue(RegionValue::kConstant, static_cast<int>(r_.constants.size()), e->checked_type(), "a constant");
      r_.constants.push_back(c->data);
    } else if (const auto* call = e->as<graph::CallNode>()) {
      std::vector<int> args;
      for (const graph::Expr& a : call->args) args.push_back(Visit(a));
      if (const auto* op = call->op->as<graph::OpNode>()) {
        id = NewValue(RegionValue::kTemp, static_cast<int>(r_.steps.size()), e->checked_type(), "the result of " + op->name);
        r_.steps.push_back(RegionStep{call, op->name, nullptr, std::move(args), id});
      } else if (const auto* f = call->op->as<graph::FunctionNode>(); f && composites_as_steps_) {
        const std::string name = f->attrs.GetString("Composite", "");
        if (name.empty()) Fail("a call of a function that is not a composite");
        id = NewValue(RegionValue::kTemp, static_cast<int>(r_.steps.size()), e->checked_type(), "the result of " + name);
        r_.steps.push_back(RegionStep{call, name, f, std::move(args), id});
      } else if (const auto* f = call->op->as<graph::FunctionNode>()) {
        // A composite: its body's ops, with its parameters bound to the arguments.
        for (size_t i = 0; i < f->params.size(); ++i) value_of_[f->params[i].get()] = args.at(i);
        id = Visit(f->body);
      } else {
        Fail("a call of something other than an op or a composite function");
      }
    } else {
      Fail("an expression of kind " + std::to_string(static_cast<int>(e->kind)) + " (only op calls and constants)");
    }
    value_of_[e.get()] = id;
    return id;
  }

  Region& r_;
  const bool composites_as_steps_;
  std::unordered_map<const graph::ExprNode*, int> value_of_;
};

}  // namespace

Region FlattenRegion(const graph::FunctionNode& fn, const std::string& backend, const std::string& symbol,
                     bool composites_as_steps) {
  Region r;
  r.backend = backend;
  r.symbol = symbol;
  Flattener(&r, composites_as_steps).Run(fn);
  return r;
}

}  // namespace tessera::byoc
