// Internal helpers of the schedule primitives (utils.h).
#include "utils.h"

#include <algorithm>
#include <functional>

namespace tessera::tir::sched {

using ir::as_const_int;
using ir::make_const;

// ================================================================== locating
namespace {
class PathCollector : public StmtExprVisitor {
 public:
  std::function<void(const Stmt&, const std::vector<Stmt>&)> on_stmt;
  void VisitStmt(const Stmt& s) override {
    path_.push_back(s);
    on_stmt(s, path_);
    StmtExprVisitor::VisitStmt(s);
    path_.pop_back();
  }
  void VisitExpr(const PrimExpr&) override {}

 private:
  std::vector<Stmt> path_;
};

BlockInfo MakeBlockInfo(const Stmt& s, const std::vector<Stmt>& path) {
  BlockInfo info;
  info.realize_stmt = s;
  info.realize = s.as<BlockRealizeNode>();
  info.block = info.realize->block_node();
  info.path = path;
  for (int i = static_cast<int>(path.size()) - 2; i >= 0; --i) {
    if (auto* f = path[i].as<ForNode>()) {
      info.loops.insert(info.loops.begin(), f);
      info.loop_stmts.insert(info.loop_stmts.begin(), path[i]);
    } else if (auto* b = path[i].as<BlockNode>()) {
      info.scope = b;
      break;
    }
  }
  return info;
}
}  // namespace

std::vector<BlockInfo> CollectBlocks(const Stmt& root) {
  std::vector<BlockInfo> out;
  PathCollector pc;
  pc.on_stmt = [&](const Stmt& s, const std::vector<Stmt>& path) {
    if (s.as<BlockRealizeNode>()) out.push_back(MakeBlockInfo(s, path));
  };
  pc.VisitStmt(root);
  return out;
}

std::optional<BlockInfo> FindBlock(const Stmt& root, const std::string& name) {
  for (auto& b : CollectBlocks(root)) {
    if (b.block->name_hint == name) return b;
  }
  return std::nullopt;
}

std::optional<LoopInfo> FindLoop(const Stmt& root, const VarNode* loop_var) {
  std::optional<LoopInfo> out;
  PathCollector pc;
  pc.on_stmt = [&](const Stmt& s, const std::vector<Stmt>& path) {
    if (auto* f = s.as<ForNode>(); f && !out && f->loop_var.get() == loop_var) {
      out = LoopInfo{s, f, path};
    }
  };
  pc.VisitStmt(root);
  return out;
}

std::vector<const BlockRealizeNode*> BlocksUnder(const Stmt& s) {
  std::vector<const BlockRealizeNode*> out;
  PathCollector pc;
  pc.on_stmt = [&](const Stmt& st, const std::vector<Stmt>&) {
    if (auto* r = st.as<BlockRealizeNode>()) out.push_back(r);
  };
  pc.VisitStmt(s);
  return out;
}

bool Contains(const Stmt& outer, const StmtNode* inner) {
  bool found = false;
  PathCollector pc;
  pc.on_stmt = [&](const Stmt& st, const std::vector<Stmt>&) { found |= st.get() == inner; };
  pc.VisitStmt(outer);
  return found;
}

namespace {
class Replacer : public StmtExprMutator {
 public:
  explicit Replacer(const std::map<const StmtNode*, Stmt>& repl) : repl_(repl) {}
  Stmt VisitStmt(const Stmt& s) override {
    auto it = repl_.find(s.get());
    if (it != repl_.end()) return it->second;
    return StmtExprMutator::VisitStmt(s);
  }
  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override {
    Stmt body = VisitStmt(op->body);
    if (!body.defined()) return Stmt();
    if (body.same_as(op->body)) return s;
    return ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->annotations);
  }
  Stmt VisitStmt_(const SeqStmtNode* op, const Stmt& s) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const auto& st : op->seq) {
      Stmt n = VisitStmt(st);
      changed |= !n.same_as(st);
      if (n.defined()) seq.push_back(n);
    }
    if (!changed) return s;
    if (seq.empty()) return Stmt();
    return SeqStmtNode::make(std::move(seq));
  }

 private:
  const std::map<const StmtNode*, Stmt>& repl_;
};
}  // namespace

Stmt ReplaceStmts(const Stmt& root, const std::map<const StmtNode*, Stmt>& repl) {
  return Replacer(repl).VisitStmt(root);
}

// ================================================================== expressions
bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a.dtype() != b.dtype()) return false;
  using K = ir::ExprKind;
  switch (a->kind) {
    case K::kIntImm: return a.as<ir::IntImmNode>()->value == b.as<ir::IntImmNode>()->value;
    case K::kFloatImm: return a.as<ir::FloatImmNode>()->value == b.as<ir::FloatImmNode>()->value;
    case K::kStringImm: return a.as<ir::StringImmNode>()->value == b.as<ir::StringImmNode>()->value;
    case K::kVar: return false;  // distinct nodes
    case K::kNot: return ExprDeepEqual(a.as<ir::NotNode>()->a, b.as<ir::NotNode>()->a);
    case K::kSelect: {
      auto *x = a.as<ir::SelectNode>(), *y = b.as<ir::SelectNode>();
      return ExprDeepEqual(x->condition, y->condition) && ExprDeepEqual(x->true_value, y->true_value) &&
             ExprDeepEqual(x->false_value, y->false_value);
    }
    case K::kCast: return ExprDeepEqual(a.as<ir::CastNode>()->value, b.as<ir::CastNode>()->value);
    case K::kCall: {
      auto *x = a.as<ir::CallNode>(), *y = b.as<ir::CallNode>();
      if (x->op != y->op || x->args.size() != y->args.size()) return false;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (!ExprDeepEqual(x->args[i], y->args[i])) return false;
      }
      return true;
    }
    case K::kRamp: {
      auto *x = a.as<ir::RampNode>(), *y = b.as<ir::RampNode>();
      return x->lanes == y->lanes && ExprDeepEqual(x->base, y->base) && ExprDeepEqual(x->stride, y->stride);
    }
    case K::kBroadcast: {
      auto *x = a.as<ir::BroadcastNode>(), *y = b.as<ir::BroadcastNode>();
      return x->lanes == y->lanes && ExprDeepEqual(x->value, y->value);
    }
    case K::kLet: return false;
    case K::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      if (!x->buffer.same_as(y->buffer) || x->indices.size() != y->indices.size()) return false;
      for (size_t i = 0; i < x->indices.size(); ++i) {
        if (!ExprDeepEqual(x->indices[i], y->indices[i])) return false;
      }
      return true;
    }
    case K::kReduce: return false;
    default: {
      PrimExpr xa, xb, ya, yb;
      if (ir::GetBinaryOperands(a, &xa, &xb) && ir::GetBinaryOperands(b, &ya, &yb)) {
        return ExprDeepEqual(xa, ya) && ExprDeepEqual(xb, yb);
      }
      return false;
    }
  }
}

namespace {
struct Linear {
  std::vector<std::pair<PrimExpr, int64_t>> terms;
  int64_t c = 0;
  void Add(const PrimExpr& atom, int64_t coeff) {
    for (auto& t : terms) {
      if (ExprDeepEqual(t.first, atom)) {
        t.second += coeff;
        return;
      }
    }
    terms.emplace_back(atom, coeff);
  }
};

bool IsIndexType(const PrimExpr& e) { return e.dtype().is_int() && e.dtype().is_scalar(); }

PrimExpr SimplifyAtom(const PrimExpr& e);

void Linearize(const PrimExpr& e, int64_t scale, Linear* out) {
  int64_t v;
  if (auto* imm = e.as<ir::IntImmNode>()) {
    out->c += scale * imm->value;
  } else if (auto* add = e.as<ir::AddNode>()) {
    Linearize(add->a, scale, out);
    Linearize(add->b, scale, out);
  } else if (auto* sub = e.as<ir::SubNode>()) {
    Linearize(sub->a, scale, out);
    Linearize(sub->b, -scale, out);
  } else if (auto* mul = e.as<ir::MulNode>(); mul && as_const_int(mul->b, &v)) {
    Linearize(mul->a, scale * v, out);
  } else if (mul && as_const_int(mul->a, &v)) {
    Linearize(mul->b, scale * v, out);
  } else {
    PrimExpr atom = SimplifyAtom(e);
    if (auto* imm2 = atom.as<ir::IntImmNode>()) {
      out->c += scale * imm2->value;
    } else if (!atom.same_as(e) && (atom.as<ir::AddNode>() || atom.as<ir::SubNode>() || atom.as<ir::MulNode>())) {
      // A simplified atom that is a sum again (not a product of two non-constants such as i * n
      // with a shape var n, which is an atom itself).
      Linearize(atom, scale, out);
    } else {
      out->Add(atom, scale);
    }
  }
}

PrimExpr Rebuild(const Linear& l, DataType t) {
  PrimExpr res;
  for (const auto& [atom, coeff] : l.terms) {
    if (coeff == 0) continue;
    if (!res.defined()) {
      res = coeff == 1 ? atom : atom * make_const(t, coeff);
    } else if (coeff > 0) {
      res = res + (coeff == 1 ? atom : atom * make_const(t, coeff));
    } else {
      res = res - (coeff == -1 ? atom : atom * make_const(t, -coeff));
    }
  }
  if (!res.defined()) return make_const(t, l.c);
  if (l.c > 0) return res + make_const(t, l.c);
  if (l.c < 0) return res - make_const(t, -l.c);
  return res;
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

PrimExpr SimplifyAtom(const PrimExpr& e) {
  int64_t c;
  DataType t = e.dtype();
  if (auto* fd = e.as<ir::FloorDivNode>(); fd && as_const_int(fd->b, &c) && c > 0 && IsIndexType(e)) {
    Linear l;
    Linearize(fd->a, 1, &l);
    if (c == 1) return Rebuild(l, t);
    Linear quot, rest;
    for (auto& [atom, coeff] : l.terms) {
      if (coeff % c == 0) quot.Add(atom, coeff / c); else rest.Add(atom, coeff);
    }
    quot.c = FloorDivInt(l.c, c);
    rest.c = l.c - quot.c * c;
    bool rest_empty = std::all_of(rest.terms.begin(), rest.terms.end(), [](auto& p) { return p.second == 0; });
    if (rest_empty) return Rebuild(quot, t);  // rest.c in [0, c): contributes 0
    quot.Add(ir::floordiv(Rebuild(rest, t), make_const(t, c)), 1);
    return Rebuild(quot, t);
  }
  if (auto* fm = e.as<ir::FloorModNode>(); fm && as_const_int(fm->b, &c) && c > 0 && IsIndexType(e)) {
    if (c == 1) return make_const(t, 0);
    Linear l;
    Linearize(fm->a, 1, &l);
    Linear rest;
    for (auto& [atom, coeff] : l.terms) {
      int64_t r = coeff % c;
      if (r != 0) rest.Add(atom, r);
    }
    rest.c = l.c - FloorDivInt(l.c, c) * c;
    if (rest.terms.empty()) return make_const(t, rest.c);
    return ir::floormod(Rebuild(rest, t), make_const(t, c));
  }
  if (auto* mn = e.as<ir::MinNode>()) {
    PrimExpr a = Simplify(mn->a), b = Simplify(mn->b);
    int64_t d;
    if (ConstDiff(a, b, &d)) return d <= 0 ? a : b;
    return ir::min(a, b);
  }
  if (auto* mx = e.as<ir::MaxNode>()) {
    PrimExpr a = Simplify(mx->a), b = Simplify(mx->b);
    int64_t d;
    if (ConstDiff(a, b, &d)) return d >= 0 ? a : b;
    return ir::max(a, b);
  }
  return e;
}
}  // namespace

PrimExpr Simplify(const PrimExpr& e) {
  if (!e.defined()) return e;
  if (IsIndexType(e)) {
    Linear l;
    Linearize(e, 1, &l);
    return Rebuild(l, e.dtype());
  }
  PrimExpr a, b;
  if (ir::GetBinaryOperands(e, &a, &b)) {
    PrimExpr sa = Simplify(a), sb = Simplify(b);
    if (sa.same_as(a) && sb.same_as(b)) return e;
    return ir::MakeBinary(e->kind, sa, sb);
  }
  return e;
}

bool ConstDiff(const PrimExpr& a, const PrimExpr& b, int64_t* diff) {
  if (!IsIndexType(a) || !IsIndexType(b) || a.dtype() != b.dtype()) return false;
  Linear l;
  Linearize(a, 1, &l);
  Linearize(b, -1, &l);
  for (auto& t : l.terms) {
    if (t.second != 0) return false;
  }
  *diff = l.c;
  return true;
}

namespace {
class VarCollector : public StmtExprVisitor {
 public:
  std::set<const VarNode*> vars;

 protected:
  void VisitExpr_(const VarNode* op) override { vars.insert(op); }
};
}  // namespace

std::set<const VarNode*> VarsIn(const PrimExpr& e) {
  VarCollector vc;
  vc.VisitExpr(e);
  return vc.vars;
}

bool UsesAnyVar(const PrimExpr& e, const std::set<const VarNode*>& vars) {
  for (auto* v : VarsIn(e)) {
    if (vars.count(v)) return true;
  }
  return false;
}

bool UsesAnyVar(const Stmt& s, const std::set<const VarNode*>& vars) {
  VarCollector vc;
  vc.VisitStmt(s);
  for (auto* v : vc.vars) {
    if (vars.count(v)) return true;
  }
  return false;
}

namespace {
Bound AtomBound(const PrimExpr& atom, const std::map<const VarNode*, Range>& relax) {
  if (!UsesAnyVar(atom, [&] {
        std::set<const VarNode*> s;
        for (auto& [v, r] : relax) s.insert(v);
        return s;
      }())) {
    return Bound{atom, atom, true};
  }
  int64_t c;
  if (auto* v = atom.as<VarNode>()) {
    const Range& r = relax.at(v);
    Bound m = EvalBound(r.min, relax);
    if (!m.ok) return {};
    return Bound{m.lo, Simplify(m.hi + r.extent - make_const(r.extent.dtype(), 1)), true};
  }
  if (auto* fd = atom.as<ir::FloorDivNode>(); fd && as_const_int(fd->b, &c) && c > 0) {
    Bound x = EvalBound(fd->a, relax);
    if (!x.ok) return {};
    return Bound{Simplify(ir::floordiv(x.lo, fd->b)), Simplify(ir::floordiv(x.hi, fd->b)), true};
  }
  if (auto* fm = atom.as<ir::FloorModNode>(); fm && as_const_int(fm->b, &c) && c > 0) {
    Bound x = EvalBound(fm->a, relax);
    int64_t d;
    if (x.ok && ConstDiff(Simplify(ir::floordiv(x.hi, fm->b)), Simplify(ir::floordiv(x.lo, fm->b)), &d) && d == 0) {
      return Bound{Simplify(ir::floormod(x.lo, fm->b)), Simplify(ir::floormod(x.hi, fm->b)), true};
    }
    return Bound{make_const(atom.dtype(), 0), make_const(atom.dtype(), c - 1), true};
  }
  if (auto* mn = atom.as<ir::MinNode>()) {
    Bound a = EvalBound(mn->a, relax), b = EvalBound(mn->b, relax);
    if (!a.ok || !b.ok) return {};
    return Bound{Simplify(ir::min(a.lo, b.lo)), Simplify(ir::min(a.hi, b.hi)), true};
  }
  if (auto* mx = atom.as<ir::MaxNode>()) {
    Bound a = EvalBound(mx->a, relax), b = EvalBound(mx->b, relax);
    if (!a.ok || !b.ok) return {};
    return Bound{Simplify(ir::max(a.lo, b.lo)), Simplify(ir::max(a.hi, b.hi)), true};
  }
  return {};
}
}  // namespace

Bound EvalBound(const PrimExpr& e, const std::map<const VarNode*, Range>& relax) {
  if (!IsIndexType(e)) return {};
  Linear l;
  Linearize(Simplify(e), 1, &l);
  Linear lo, hi;
  lo.c = hi.c = l.c;
  for (auto& [atom, coeff] : l.terms) {
    if (coeff == 0) continue;
    Bound b = AtomBound(atom, relax);
    if (!b.ok) return {};
    Linear bl, bh;
    Linearize(coeff > 0 ? b.lo : b.hi, coeff, &bl);
    Linearize(coeff > 0 ? b.hi : b.lo, coeff, &bh);
    for (auto& t : bl.terms) lo.Add(t.first, t.second);
    for (auto& t : bh.terms) hi.Add(t.first, t.second);
    lo.c += bl.c;
    hi.c += bh.c;
  }
  return Bound{Rebuild(lo, e.dtype()), Rebuild(hi, e.dtype()), true};
}

bool IsConstTrue(const PrimExpr& e) {
  int64_t v;
  return !e.defined() || (as_const_int(e, &v) && v != 0);
}

std::vector<PrimExpr> SplitConjuncts(const PrimExpr& e) {
  if (IsConstTrue(e)) return {};
  if (auto* a = e.as<ir::AndNode>()) {
    auto l = SplitConjuncts(a->a), r = SplitConjuncts(a->b);
    l.insert(l.end(), r.begin(), r.end());
    return l;
  }
  return {e};
}

PrimExpr Conjoin(const std::vector<PrimExpr>& terms) {
  PrimExpr res;
  for (const auto& t : terms) res = res.defined() ? (res && t) : t;
  return res.defined() ? res : ir::IntImmNode::make(DataType::Bool(), 1);
}

// ================================================================== blocks
namespace {
class LoadCollector : public StmtExprVisitor {
 public:
  std::vector<std::pair<Buffer, std::vector<std::vector<PrimExpr>>>> loads;

 protected:
  void VisitExpr_(const BufferLoadNode* op) override {
    for (auto& [buf, idx] : loads) {
      if (buf.same_as(op->buffer)) {
        idx.push_back(op->indices);
        StmtExprVisitor::VisitExpr_(op);
        return;
      }
    }
    loads.push_back({op->buffer, {op->indices}});
    StmtExprVisitor::VisitExpr_(op);
  }
};

class StoreCollector : public StmtExprVisitor {
 public:
  std::vector<const BufferStoreNode*> stores;

 protected:
  void VisitStmt_(const BufferStoreNode* op) override {
    stores.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
  }
};
}  // namespace

std::vector<BufferRegion> DetectReadRegions(const BlockNode* block) {
  LoadCollector lc;
  if (block->init.defined()) lc.VisitStmt(block->init);
  lc.VisitStmt(block->body);
  std::vector<BufferRegion> out;
  for (auto& [buf, accesses] : lc.loads) {
    // As in TVM, a reduction's read of its own output (C = C + ...) is not a read region.
    bool own = false;
    for (const auto& w : block->writes) own |= w.buffer.same_as(buf);
    if (own) continue;
    BufferRegion r{buf, {}};
    for (int d = 0; d < buf.ndim(); ++d) {
      const PrimExpr& first = accesses[0][d];
      int64_t lo = 0, hi = 0;
      bool ok = true;
      for (auto& acc : accesses) {
        int64_t diff;
        if (!ConstDiff(acc[d], first, &diff)) {
          ok = false;
          break;
        }
        lo = std::min(lo, diff);
        hi = std::max(hi, diff);
      }
      DataType t = buf->shape[d].dtype();
      if (ok && first.dtype() == t) {
        r.region.emplace_back(Simplify(first + make_const(t, lo)), make_const(t, hi - lo + 1));
      } else {
        r.region.emplace_back(make_const(t, 0), buf->shape[d]);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

Stmt WithRegions(const BlockNode* b, Stmt body, Stmt init, std::vector<BufferRegion> writes) {
  Stmt tmp = BlockNode::make(b->name_hint, b->iter_vars, {}, writes, body, init, b->alloc_buffers,
                             b->annotations);
  auto reads = DetectReadRegions(tmp.as<BlockNode>());
  return BlockNode::make(b->name_hint, b->iter_vars, std::move(reads), std::move(writes), std::move(body),
                         std::move(init), b->alloc_buffers, b->annotations);
}

std::vector<const BufferStoreNode*> CollectStores(const Stmt& s) {
  StoreCollector sc;
  sc.VisitStmt(s);
  return sc.stores;
}

bool ReadsBuffer(const BlockNode* block, const Buffer& buffer) {
  LoadCollector lc;
  if (block->init.defined()) lc.VisitStmt(block->init);
  lc.VisitStmt(block->body);
  for (auto& [b, a] : lc.loads) {
    if (b.same_as(buffer)) return true;
  }
  return false;
}

bool WritesBuffer(const BlockNode* block, const Buffer& buffer) {
  for (auto* st : CollectStores(block->body)) {
    if (st->buffer.same_as(buffer)) return true;
  }
  for (const auto& w : block->writes) {
    if (w.buffer.same_as(buffer)) return true;
  }
  return false;
}

const char* NonSpatialKind(const BlockNode* block) {
  bool scan = false, reduction = block->init.defined();
  for (const auto& iv : block->iter_vars) {
    scan |= iv.iter_type == IterVarType::kOrdered;
    reduction |= iv.iter_type == IterVarType::kCommReduce;
  }
  return reduction ? "a reduction" : scan ? "a scan" : nullptr;
}

std::set<const VarNode*> ReductionLoopVars(const BlockRealizeNode* realize) {
  std::set<const VarNode*> out;
  const BlockNode* b = realize->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    if (b->iter_vars[i].iter_type == IterVarType::kCommReduce) {
      auto vs = VarsIn(realize->iter_values[i]);
      out.insert(vs.begin(), vs.end());
    }
  }
  return out;
}

std::set<const VarNode*> SpatialLoopVars(const BlockRealizeNode* realize) {
  std::set<const VarNode*> out;
  const BlockNode* b = realize->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    if (b->iter_vars[i].iter_type == IterVarType::kDataPar) {
      auto vs = VarsIn(realize->iter_values[i]);
      out.insert(vs.begin(), vs.end());
    }
  }
  return out;
}

std::string LoopName(const ForNode* loop) { return loop->loop_var->name_hint; }

LoopCopies CopySpatialLoops(const BlockInfo& info, size_t from, const std::set<const VarNode*>& spatial,
                            const std::string& suffix) {
  LoopCopies c;
  c.from = from;
  for (size_t i = from; i < info.loops.size(); ++i) {
    const VarNode* v = info.loops[i]->loop_var.get_var();
    if (!spatial.count(v)) continue;
    c.loops.push_back(info.loops[i]);
    c.vars.emplace_back(v->name_hint + suffix, v->dtype);
    c.map[v] = c.vars.back();
  }
  return c;
}

Stmt LoopCopies::Wrap(Stmt body) const {
  for (int i = static_cast<int>(loops.size()) - 1; i >= 0; --i) {
    const ForNode* f = loops[i];
    body = ForNode::make(vars[i], Substitute(f->min, map), Substitute(f->extent, map), f->for_kind, body, f->annotations);
  }
  return body;
}

PrimExpr LoopCopies::Predicate(const BlockInfo& info) const {
  std::set<const VarNode*> dropped;
  for (size_t i = from; i < info.loops.size(); ++i) {
    if (!map.count(info.loops[i]->loop_var.get_var())) dropped.insert(info.loops[i]->loop_var.get_var());
  }
  std::vector<PrimExpr> preds;
  for (const auto& p : SplitConjuncts(info.realize->predicate)) {
    if (!UsesAnyVar(p, dropped)) preds.push_back(Substitute(p, map));
  }
  return Conjoin(preds);
}

IterVarCopies CopySpatialIterVars(const BlockRealizeNode* realize, const std::map<const VarNode*, PrimExpr>& loop_map) {
  IterVarCopies c;
  const BlockNode* b = realize->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (iv.iter_type != IterVarType::kDataPar) continue;
    Var nv(iv.var->name_hint, iv.var.dtype());
    c.map[iv.var.get_var()] = nv;
    c.ivs.push_back(IterVar{nv, iv.dom, IterVarType::kDataPar});
    c.bindings.push_back(Simplify(Substitute(realize->iter_values[i], loop_map)));
  }
  return c;
}

Stmt UpdateRootAllocs(const Stmt& body, const std::vector<Buffer>& add, const Buffer& remove) {
  auto* realize = body.as<BlockRealizeNode>();
  TESSERA_ICHECK(realize != nullptr, "schedule: function body is not a root BlockRealize");
  const BlockNode* root = realize->block_node();
  std::vector<Buffer> allocs;
  for (const auto& b : root->alloc_buffers) {
    if (!(remove.defined() && b.same_as(remove))) allocs.push_back(b);
  }
  allocs.insert(allocs.end(), add.begin(), add.end());
  Stmt blk = BlockNode::make(root->name_hint, root->iter_vars, root->reads, root->writes, root->body, root->init,
                             allocs, root->annotations);
  return BlockRealizeNode::make(realize->iter_values, realize->predicate, blk);
}

}  // namespace tessera::tir::sched
