// FuseOps: see include/tessera/graph/transform/fuse_ops.h for the rules.
#include "tessera/graph/transform/fuse_ops.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/graph/functor.h"
#include "tessera/graph/op_registry.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform {
namespace {

/// A call of an external function (BYOC, partition_graph.h): its backend's kernel, never fused.
bool IsExternalCall(const CallNode* call) {
  const auto* fn = call->op->as<FunctionNode>();
  return fn && IsExternalFunction(*fn);
}

OpPatternKind PatternOf(const CallNode* call) {
  const auto* op = call->op->as<OpNode>();
  TESSERA_ICHECK(op != nullptr, "FuseOps expects calls of operators, not of functions");
  return OpRegistry::Global().Get(op->name).pattern;
}

/// Whether a concatenate may take `members` into one of its inputs. A concatenate's compute
/// selects its input per element (a select chain whose branches are all evaluated, vector lanes
/// included), so whatever is fused into an input runs for every element of the output: only
/// work as cheap as a load is fused (elementwise / broadcast ops and data movement), not a
/// resize's or a gather's index arithmetic and loads (SegFormer's decoder concatenates four
/// resized maps: fused, each output element ran four resizes).
bool CheapInConcatenate(const std::vector<const CallNode*>& members) {
  for (const CallNode* m : members) {
    const std::string& name = m->op->as<OpNode>()->name;
    if (PatternOf(m) <= kBroadcast) continue;
    if (name == "reshape" || name == "transpose" || name == "layout_transform" || name == "squeeze" ||
        name == "expand_dims" || name == "strided_slice" || name == "copy" || name == "broadcast_to")
      continue;
    return false;
  }
  return true;
}

struct Group {
  std::vector<const CallNode*> members;  // in topological order once finalised
  OpPatternKind pattern = kElemWise;     // the most complex pattern in the group
  bool has_master = false;               // holds an out-elemwise-fusable op
};

/// Decides the grouping: one Group per output call.
class GroupPlanner {
 public:
  GroupPlanner(const Expr& body, const FuseOpsOptions& options) : options_(options) {
    PostOrderVisit(body, [this](const Expr& e) { order_.push_back(e.get()); });
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = i;
    for (const ExprNode* n : order_) CountUses(n);
    uses_[body.get()] += 1;  // the function result is a use
  }

  /// Group of each call, keyed by call node.
  std::unordered_map<const CallNode*, std::shared_ptr<Group>> Plan() {
    for (const ExprNode* n : order_) {
      const auto* call = n->as<CallNode>();
      // An external function runs as it is, and a call of a let-bound function is a loop: no group.
      if (!call || IsExternalCall(call) || !call->op->as<OpNode>()) continue;
      auto group = std::make_shared<Group>();
      group->members.push_back(call);
      group->pattern = PatternOf(call);
      group->has_master = group->pattern == kOutEWiseFusable;
      if (options_.fuse_opt_level > 0 && group->pattern != kOpaque) {
        for (const CallNode* producer : Producers(call)) TryMerge(group, call, producer);
        // Diamonds (TVM's post-dominator rule): a producer used several times joins once every
        // use is inside the group, e.g. GELU x * (1 + erf(x / sqrt 2)) / 2 after a dense.
        for (bool changed = true; changed;) {
          changed = false;
          std::vector<const CallNode*> members = group->members;
          for (const CallNode* m : members)
            for (const CallNode* producer : Producers(m))
              if (std::find(group->members.begin(), group->members.end(), producer) == group->members.end())
                changed |= TryMerge(group, m, producer);
        }
        std::sort(group->members.begin(), group->members.end(),
                  [this](const CallNode* a, const CallNode* b) { return position_.at(a) < position_.at(b); });
      }
      for (const CallNode* m : group->members) group_of_[m] = group;
    }
    return group_of_;
  }

 private:
  void CountUses(const ExprNode* n) {
    auto use = [this](const Expr& e) { uses_[e.get()] += 1; };
    if (const auto* c = n->as<CallNode>()) {
      for (const auto& a : c->args) use(a), call_users_[a.get()].push_back(c);
    } else if (const auto* t = n->as<TupleNode>()) {
      for (const auto& f : t->fields) use(f);
    } else if (const auto* g = n->as<TupleGetItemNode>()) {
      use(g->tuple);
    } else if (const auto* i = n->as<IfNode>()) {
      // The If reads its condition and its branches' results as a whole (as a tuple's fields):
      // none is fused into it, and a call inside a branch groups with its own producers only.
      use(i->cond), use(i->true_branch), use(i->false_branch);
    } else if (const auto* l = n->as<LetNode>()) {
      // A let-bound function (a loop the VM runs, vm_codegen.h): its body's calls group among
      // themselves and with producers outside it used only there (then computed per iteration).
      use(l->value), use(l->body);
    } else if (const auto* f = n->as<FunctionNode>()) {
      use(f->body);
    } else if (const auto* m = n->as<MatchNode>()) {
      // As an If: the matched value and each clause's result are read whole.
      use(m->data);
      for (const auto& c : m->clauses) use(c.rhs);
    }
  }

  /// Calls whose single output feeds `call` directly, or through a Tuple used only by it.
  std::vector<const CallNode*> Producers(const CallNode* call) const {
    std::vector<const CallNode*> out;
    for (const auto& a : call->args) {
      if (const auto* c = a->as<CallNode>()) {
        out.push_back(c);
      } else if (const auto* t = a->as<TupleNode>(); t && Uses(t) == 1) {
        for (const auto& f : t->fields)
          if (const auto* c = f->as<CallNode>()) out.push_back(c);
      }
    }
    return out;
  }

  int Uses(const ExprNode* n) const {
    auto it = uses_.find(n);
    return it == uses_.end() ? 0 : it->second;
  }

  /// Whether every use of `producer` is a direct argument of a call in `group`.
  bool AllUsesIn(const Group& group, const CallNode* producer) const {
    auto it = call_users_.find(producer);
    if (it == call_users_.end() || static_cast<int>(it->second.size()) != Uses(producer)) return false;
    for (const CallNode* user : it->second)
      if (std::find(group.members.begin(), group.members.end(), user) == group.members.end()) return false;
    return true;
  }

  /// Merges the group whose output `producer` is into `group`, where `consumer` (a member) reads it.
  bool TryMerge(const std::shared_ptr<Group>& group, const CallNode* consumer_call, const CallNode* producer) {
    auto it = group_of_.find(producer);
    if (it == group_of_.end()) return false;
    std::shared_ptr<Group> other = it->second;
    if (other == group || other->members.back() != producer) return false;  // not that group's output
    if (Uses(producer) != 1 && !AllUsesIn(*group, producer)) return false;
    // The pattern of the op that reads the producer, not of the group's first member: in
    // add(reshape(strided_slice(a)), dense(h, w)) the group's first member is the strided_slice of
    // the other operand, and a dense feeding the elementwise add is fusable (its epilogue).
    const OpPatternKind consumer = PatternOf(consumer_call);
    bool ok = false;
    if (consumer <= kBroadcast) {
      ok = other->pattern <= kOutEWiseFusable && !(other->has_master && group->has_master);
      // A conv / dense takes elementwise, broadcast and injective work after it, never a reduction
      // of its output (LayerNorm's mean after a dense + residual add: TVM fuses it only where the
      // path to the group's output is elementwise).
      if (other->has_master && group->pattern > kInjective) ok = false;
    } else if (consumer == kInjective || consumer == kCommReduce) {
      ok = other->pattern <= kInjective;
      if (consumer_call->op->as<OpNode>()->name == "concatenate" && !CheapInConcatenate(other->members)) ok = false;
    }
    if (!ok) return false;
    if (static_cast<int>(group->members.size() + other->members.size()) > options_.max_fuse_depth) return false;
    group->members.insert(group->members.begin(), other->members.begin(), other->members.end());
    group->pattern = std::max(group->pattern, other->pattern);
    group->has_master = group->has_master || other->has_master;
    for (const CallNode* m : other->members) group_of_[m] = group;
    return true;
  }

  const FuseOpsOptions& options_;
  std::vector<const ExprNode*> order_;
  std::unordered_map<const ExprNode*, int> uses_;
  std::unordered_map<const ExprNode*, size_t> position_;  // post order: producers first
  std::unordered_map<const ExprNode*, std::vector<const CallNode*>> call_users_;
  std::unordered_map<const CallNode*, std::shared_ptr<Group>> group_of_;
};

/// Rewrites main: each group's output call becomes a call of a new primitive function.
class FuseRewriter : public ExprMutator {
 public:
  explicit FuseRewriter(std::unordered_map<const CallNode*, std::shared_ptr<Group>> groups)
      : groups_(std::move(groups)) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    auto it = groups_.find(call.get());
    if (it == groups_.end() || it->second->members.back() != call.get()) {
      return ExprMutator::MutateCall_(call);  // only reached through a group's output
    }
    const Group& group = *it->second;
    std::unordered_map<const CallNode*, bool> in_group;
    for (const CallNode* m : group.members) in_group[m] = true;

    // Build the function body, turning every external input into a parameter.
    std::vector<Var> params;
    std::vector<Expr> args;
    std::unordered_map<const ExprNode*, Expr> inner;
    std::function<Expr(const Expr&)> rebuild = [&](const Expr& e) -> Expr {
      if (auto found = inner.find(e.get()); found != inner.end()) return found->second;
      Expr out;
      const auto* c = e->as<CallNode>();
      const auto* t = e->as<TupleNode>();
      if (c && in_group.count(c)) {
        std::vector<Expr> new_args;
        for (const auto& a : c->args) new_args.push_back(rebuild(a));
        out = CallNode::make(c->op, std::move(new_args), c->attrs);
      } else if (t) {  // a bundle for a grouped consumer (concatenate's input): rebuilt inside
        std::vector<Expr> fields;
        for (const auto& f : t->fields) fields.push_back(rebuild(f));
        out = TupleNode::make(std::move(fields));
      } else {
        Var p = VarNode::make("p" + std::to_string(params.size()), e->checked_type());
        params.push_back(p);
        args.push_back(Mutate(e));
        out = p;
      }
      inner[e.get()] = out;
      return out;
    };
    Expr body = rebuild(call);
    Attrs attrs;
    attrs.Set("Primitive", 1);
    Function fn = FunctionNode::make(params, body, call->checked_type(), attrs);
    return CallNode::make(fn, std::move(args));
  }

 private:
  std::unordered_map<const CallNode*, std::shared_ptr<Group>> groups_;
};

}  // namespace

IRModule FuseOps(const IRModule& mod, const FuseOpsOptions& options) {
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    // Every global function of the program (main, and those it calls: vm_codegen.h); a primitive or
    // external function is a kernel already.
    if (fn->attrs.GetInt("Primitive", 0) == 1 || IsExternalFunction(*fn)) {
      out.Add(name, fn);
      continue;
    }
    GroupPlanner planner(fn->body, options);
    FuseRewriter rewriter(planner.Plan());
    Expr body = rewriter.Mutate(fn->body);
    out.Add(name, FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

}  // namespace tessera::graph::transform
