// UnflattenReductions: see include/tessera/graph/transform/unflatten_reductions.h.
#include "tessera/graph/transform/unflatten_reductions.h"

#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {
namespace {

using namespace detail;

bool IsElementwiseOp(const std::string& op) {
  const OpInfo* info = OpRegistry::Global().Find(op);
  return info && (info->pattern == kElemWise || info->pattern == kBroadcast);
}

// One candidate region: the flattening reshape, its source's shape, and its nodes.
struct Region {
  const CallNode* reshape = nullptr;
  std::vector<int64_t> shape;  // x's static shape
  enum Kind { kFull, kStat, kExit };
  std::unordered_map<const ExprNode*, Kind> kind;
};

class Finder {
 public:
  explicit Finder(const Expr& body) : root_(body.get()) {
    PostOrderVisit(body, [&](const Expr& e) {
      std::unordered_set<const ExprNode*> seen;
      ForEachUse(e, [&](const Expr& c) {
        if (seen.insert(c.get()).second) users_[c.get()].push_back(e);
      });
      if (OpName(e) == "reshape") reshapes_.push_back(e);
    });
  }

  // Every region that may be rewritten, no node in two of them.
  std::vector<Region> Regions() {
    std::vector<Region> out;
    std::unordered_set<const ExprNode*> claimed;
    for (const Expr& r : reshapes_) {
      std::optional<Region> region = Grow(r);
      if (!region) continue;
      bool overlap = false;
      for (const auto& [n, k] : region->kind) overlap |= claimed.count(n) != 0;
      if (overlap) continue;
      for (const auto& [n, k] : region->kind) claimed.insert(n);
      out.push_back(std::move(*region));
    }
    return out;
  }

 private:
  // The region of the flattening reshape `r`, or none when r is not one or the region is not
  // closed (a flattened value used elsewhere, an op the rewrite does not know).
  std::optional<Region> Grow(const Expr& re) {
    const auto* r = re->as<CallNode>();
    const auto x = StaticShapeOf(r->args[0]);
    const auto rs = StaticShapeOf(re);
    if (!x || !rs || x->size() < 3 || rs->size() != 3) return std::nullopt;
    int64_t m = 1;
    for (size_t d = 1; d < x->size(); ++d) m *= (*x)[d];
    const int64_t n = (*x)[0];
    if (m <= 1 || *rs != std::vector<int64_t>{n, 1, m}) return std::nullopt;
    const std::vector<int64_t> full{n, 1, m}, stat{n, 1, 1};
    Region region;
    region.reshape = r;
    region.shape = *x;
    region.kind[r] = Region::kFull;
    std::deque<const ExprNode*> work{r};
    while (!work.empty()) {
      const ExprNode* v = work.front();
      work.pop_front();
      if (v == root_) return std::nullopt;  // a region value is the function's result
      const Region::Kind vk = region.kind.at(v);
      for (const Expr& u : users_[v]) {
        if (region.kind.count(u.get())) continue;
        const auto* call = u->as<CallNode>();
        const std::string op = OpName(u);
        const auto us = StaticShapeOf(u);
        if (!call || op.empty() || !us) return std::nullopt;
        Region::Kind k;
        if (op == "reshape" && vk == Region::kFull && *us == *x) {
          k = Region::kExit;
        } else if (IsReduceOp(op) && vk == Region::kFull && *us == stat && ReducesLastAxis(call->attrs)) {
          k = Region::kStat;
        } else if (IsElementwiseOp(op) && (*us == full || *us == stat)) {
          k = *us == full ? Region::kFull : Region::kStat;
        } else {
          return std::nullopt;
        }
        region.kind[u.get()] = k;
        if (k != Region::kExit) work.push_back(u.get());
      }
    }
    // Every operand of a rewritten op is a region value or one that broadcasts in any rank.
    for (const auto& [node, k] : region.kind) {
      if (node == r || k == Region::kExit) continue;
      for (const Expr& a : static_cast<const CallNode*>(node)->args) {
        if (region.kind.count(a.get())) {
          if (region.kind.at(a.get()) == Region::kExit) return std::nullopt;
          continue;
        }
        if (!BroadcastsAlongSample(a, n)) return std::nullopt;
      }
    }
    return region;
  }

  // axis [2] or [-1] (of the rank-3 view), keepdims, not exclude.
  static bool ReducesLastAxis(const Attrs& a) {
    const std::vector<int64_t> axis = a.GetInts("axis", {});
    return axis.size() == 1 && (axis[0] == 2 || axis[0] == -1) && a.GetInt("keepdims", 0) == 1 &&
           a.GetInt("exclude", 0) == 0;
  }

  // An operand from outside the region: every dim 1 (a scalar, [1, 1]), or [N, 1, 1].
  static bool BroadcastsAlongSample(const Expr& a, int64_t n) {
    const auto s = StaticShapeOf(a);
    if (!s || s->size() > 3) return false;
    for (size_t d = 0; d < s->size(); ++d)
      if ((*s)[d] != 1 && !(s->size() == 3 && d == 0 && (*s)[d] == n)) return false;
    return true;
  }

  const ExprNode* root_;
  std::unordered_map<const ExprNode*, std::vector<Expr>> users_;
  std::vector<Expr> reshapes_;
};

class Unflattener : public ExprMutator {
 public:
  explicit Unflattener(std::vector<Region> regions) : regions_(std::move(regions)) {
    for (const Region& r : regions_)
      for (const auto& [node, k] : r.kind)
        if (k == Region::kExit) exit_of_[node] = &r;
  }

 protected:
  Expr MutateCall_(const Call& call) override {
    auto it = exit_of_.find(call.get());
    if (it != exit_of_.end()) return Build(call->args[0], *it->second);
    return ExprMutator::MutateCall_(call);
  }

 private:
  // The rewrite of the region value `e` over x's own axes.
  Expr Build(const Expr& e, const Region& region) {
    auto done = built_.find(e.get());
    if (done != built_.end()) return done->second;
    const auto* call = e->as<CallNode>();
    const int64_t rank = static_cast<int64_t>(region.shape.size());
    Expr out;
    if (call == region.reshape) {
      out = Mutate(call->args[0]);
    } else if (IsReduceOp(OpName(e))) {
      std::vector<int64_t> axes;
      for (int64_t d = 1; d < rank; ++d) axes.push_back(d);
      Attrs attrs = call->attrs;
      attrs.Set("axis", axes);
      out = CallNode::make(call->op, {Build(call->args[0], region)}, attrs);
    } else {
      std::vector<Expr> args;
      for (const Expr& a : call->args) {
        if (region.kind.count(a.get())) {
          args.push_back(Build(a, region));
          continue;
        }
        Expr outside = Mutate(a);
        const auto s = StaticShapeOf(a);
        if (s && s->size() == 3 && (*s)[0] != 1) {
          std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
          ones[0] = (*s)[0];
          outside = CallOp("reshape", {outside}, Attrs{{"newshape", ones}});
        }
        args.push_back(outside);
      }
      out = CallNode::make(call->op, std::move(args), call->attrs);
    }
    return built_[e.get()] = out;
  }

  std::vector<Region> regions_;
  std::unordered_map<const ExprNode*, const Region*> exit_of_;
  std::unordered_map<const ExprNode*, Expr> built_;
};

}  // namespace

IRModule UnflattenReductions(const IRModule& input) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  bool changed = false;
  for (const auto& [name, fn] : mod.functions()) {
    std::vector<Region> regions = Finder(fn->body).Regions();
    if (regions.empty() || fn->attrs.GetInt("Primitive", 0) != 0) {
      out.Add(name, fn);
      continue;
    }
    changed = true;
    Unflattener u(std::move(regions));
    out.Add(name, FunctionNode::make(fn->params, u.Mutate(fn->body), fn->ret_type, fn->attrs));
  }
  return changed ? InferType(out) : mod;
}

Pass UnflattenReductionsPass() {
  return Pass({"UnflattenReductions",
               "a per-sample reduction over a flattened [N, 1, M] view runs over the tensor's own axes (GroupNorm(1))", 2},
              [](const IRModule& m, const PassContext&) { return UnflattenReductions(m); });
}

}  // namespace tessera::graph::transform
