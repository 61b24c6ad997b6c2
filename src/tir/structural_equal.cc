// TIR structural equality and hashing (tir/structural_equal.h).
#include "tessera/tir/structural_equal.h"

#include <functional>
#include <map>

namespace tessera::tir {

namespace {

class TirComparator : public ir::ExprComparator {
 public:
  using ir::ExprComparator::ExprComparator;

  bool DefineBuffer(const Buffer& a, const Buffer& b) {
    if (!BufferCompatible(a, b)) return false;
    if (!DefineVar(a->data, b->data)) return false;
    if (auto it = l2r_.find(a.get()); it != l2r_.end()) r2l_.erase(it->second);
    if (auto it = r2l_.find(b.get()); it != r2l_.end()) l2r_.erase(it->second);
    l2r_[a.get()] = b.get();
    r2l_[b.get()] = a.get();
    return true;
  }

  bool BufferEqual(const Buffer& a, const Buffer& b) {
    if (auto it = l2r_.find(a.get()); it != l2r_.end()) return it->second == b.get();
    if (r2l_.count(b.get())) return false;
    if (!BufferCompatible(a, b) || !VarEqual(a->data.get_var(), b->data.get_var())) return false;
    l2r_[a.get()] = b.get();
    r2l_[b.get()] = a.get();
    return true;
  }

  bool Equal(const PrimExpr& a, const PrimExpr& b) { return ir::ExprComparator::Equal(a, b); }

  bool Equal(const Stmt& a, const Stmt& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case StmtKind::kBufferStore: {
        auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
        return BufferEqual(x->buffer, y->buffer) && Equal(x->value, y->value) && Exprs(x->indices, y->indices);
      }
      case StmtKind::kFor: {
        auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
        return x->for_kind == y->for_kind && Equal(x->min, y->min) && Equal(x->extent, y->extent) &&
               Annotations(x->annotations, y->annotations) && DefineVar(x->loop_var, y->loop_var) &&
               Equal(x->body, y->body);
      }
      case StmtKind::kSeqStmt: {
        auto *x = a.as<SeqStmtNode>(), *y = b.as<SeqStmtNode>();
        if (x->seq.size() != y->seq.size()) return false;
        for (size_t i = 0; i < x->seq.size(); ++i) {
          if (!Equal(x->seq[i], y->seq[i])) return false;
        }
        return true;
      }
      case StmtKind::kIfThenElse: {
        auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
        return Equal(x->condition, y->condition) && Equal(x->then_case, y->then_case) &&
               Equal(x->else_case, y->else_case);
      }
      case StmtKind::kLetStmt: {
        auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
        return Equal(x->value, y->value) && DefineVar(x->var, y->var) && Equal(x->body, y->body);
      }
      case StmtKind::kEvaluate: return Equal(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
      case StmtKind::kAllocate: {
        auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
        return DefineBuffer(x->buffer, y->buffer) && Equal(x->body, y->body);
      }
      case StmtKind::kBlock: {
        auto *x = a.as<BlockNode>(), *y = b.as<BlockNode>();
        if (x->name_hint != y->name_hint || x->iter_vars.size() != y->iter_vars.size() ||
            x->alloc_buffers.size() != y->alloc_buffers.size()) {
          return false;
        }
        for (size_t i = 0; i < x->iter_vars.size(); ++i) {
          const IterVar &p = x->iter_vars[i], &q = y->iter_vars[i];
          if (p.iter_type != q.iter_type || !Equal(p.dom.min, q.dom.min) || !Equal(p.dom.extent, q.dom.extent) ||
              !DefineVar(p.var, q.var)) {
            return false;
          }
        }
        for (size_t i = 0; i < x->alloc_buffers.size(); ++i) {
          if (!DefineBuffer(x->alloc_buffers[i], y->alloc_buffers[i])) return false;
        }
        return Regions(x->reads, y->reads) && Regions(x->writes, y->writes) &&
               Annotations(x->annotations, y->annotations) && Equal(x->init, y->init) && Equal(x->body, y->body);
      }
      case StmtKind::kBlockRealize: {
        auto *x = a.as<BlockRealizeNode>(), *y = b.as<BlockRealizeNode>();
        return Exprs(x->iter_values, y->iter_values) && Equal(x->predicate, y->predicate) &&
               Equal(x->block, y->block);
      }
    }
    return false;
  }

  bool Func(const PrimFunc& a, const PrimFunc& b) {
    if (a->name != b->name || a->attrs != b->attrs || a->params.size() != b->params.size() ||
        a->shape_vars.size() != b->shape_vars.size()) {
      return false;
    }
    for (size_t i = 0; i < a->shape_vars.size(); ++i) {
      if (!DefineVar(a->shape_vars[i], b->shape_vars[i])) return false;
    }
    for (size_t i = 0; i < a->params.size(); ++i) {
      if (!DefineBuffer(a->params[i], b->params[i])) return false;
    }
    return Equal(a->body, b->body);
  }

 protected:
  bool EqualExtension(const PrimExpr& a, const PrimExpr& b) override {
    auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
    if (x && y) return BufferEqual(x->buffer, y->buffer) && Exprs(x->indices, y->indices);
    return a.same_as(b);
  }

 private:
  bool BufferCompatible(const Buffer& a, const Buffer& b) {
    return a->dtype == b->dtype && a->scope == b->scope && Exprs(a->shape, b->shape) &&
           Exprs(a->strides, b->strides);
  }
  bool Exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Equal(a[i], b[i])) return false;
    }
    return true;
  }
  bool Annotations(const std::map<std::string, PrimExpr>& a, const std::map<std::string, PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia->first != ib->first || !Equal(ia->second, ib->second)) return false;
    }
    return true;
  }
  bool Regions(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!BufferEqual(a[i].buffer, b[i].buffer) || a[i].region.size() != b[i].region.size()) return false;
      for (size_t d = 0; d < a[i].region.size(); ++d) {
        if (!Equal(a[i].region[d].min, b[i].region[d].min) || !Equal(a[i].region[d].extent, b[i].region[d].extent)) {
          return false;
        }
      }
    }
    return true;
  }

  std::map<const BufferNode*, const BufferNode*> l2r_, r2l_;
};

class TirHasher : public ir::ExprHasher {
 public:
  size_t Hash(const PrimExpr& e) { return ir::ExprHasher::Hash(e); }

  size_t Hash(const Stmt& s) {
    using ir::HashCombine;
    if (!s.defined()) return 0x51;
    size_t h = static_cast<size_t>(s->kind) + 0x100;
    switch (s->kind) {
      case StmtKind::kBufferStore: {
        auto* x = s.as<BufferStoreNode>();
        return Exprs(HashCombine(HashCombine(h, BufferUse(x->buffer)), Hash(x->value)), x->indices);
      }
      case StmtKind::kFor: {
        auto* x = s.as<ForNode>();
        h = HashCombine(h, static_cast<size_t>(x->for_kind));
        h = HashCombine(HashCombine(h, Hash(x->min)), Hash(x->extent));
        for (const auto& [k, v] : x->annotations) h = HashCombine(HashCombine(h, std::hash<std::string>()(k)), Hash(v));
        h = HashCombine(h, DefineVar(x->loop_var.get_var()));
        return HashCombine(h, Hash(x->body));
      }
      case StmtKind::kSeqStmt:
        for (const auto& st : s.as<SeqStmtNode>()->seq) h = HashCombine(h, Hash(st));
        return h;
      case StmtKind::kIfThenElse: {
        auto* x = s.as<IfThenElseNode>();
        return HashCombine(HashCombine(HashCombine(h, Hash(x->condition)), Hash(x->then_case)), Hash(x->else_case));
      }
      case StmtKind::kLetStmt: {
        auto* x = s.as<LetStmtNode>();
        h = HashCombine(h, Hash(x->value));
        h = HashCombine(h, DefineVar(x->var.get_var()));
        return HashCombine(h, Hash(x->body));
      }
      case StmtKind::kEvaluate: return HashCombine(h, Hash(s.as<EvaluateNode>()->value));
      case StmtKind::kAllocate: {
        auto* x = s.as<AllocateNode>();
        return HashCombine(HashCombine(h, BufferDef(x->buffer)), Hash(x->body));
      }
      case StmtKind::kBlock: {
        auto* x = s.as<BlockNode>();
        h = HashCombine(h, std::hash<std::string>()(x->name_hint));
        for (const auto& iv : x->iter_vars) {
          h = HashCombine(h, static_cast<size_t>(iv.iter_type));
          h = HashCombine(HashCombine(h, Hash(iv.dom.min)), Hash(iv.dom.extent));
          h = HashCombine(h, DefineVar(iv.var.get_var()));
        }
        for (const auto& b : x->alloc_buffers) h = HashCombine(h, BufferDef(b));
        for (const auto* rs : {&x->reads, &x->writes}) {
          for (const auto& r : *rs) {
            h = HashCombine(h, BufferUse(r.buffer));
            for (const auto& rg : r.region) h = HashCombine(HashCombine(h, Hash(rg.min)), Hash(rg.extent));
          }
          h = HashCombine(h, 0x77);
        }
        for (const auto& [k, v] : x->annotations) h = HashCombine(HashCombine(h, std::hash<std::string>()(k)), Hash(v));
        return HashCombine(HashCombine(h, Hash(x->init)), Hash(x->body));
      }
      case StmtKind::kBlockRealize: {
        auto* x = s.as<BlockRealizeNode>();
        h = Exprs(h, x->iter_values);
        return HashCombine(HashCombine(h, Hash(x->predicate)), Hash(x->block));
      }
    }
    return h;
  }

  size_t Func(const PrimFunc& f) {
    using ir::HashCombine;
    size_t h = std::hash<std::string>()(f->name);
    for (const auto& [k, v] : f->attrs) h = HashCombine(h, std::hash<std::string>()(k + "=" + v));
    for (const auto& v : f->shape_vars) h = HashCombine(h, DefineVar(v.get_var()));
    h = HashCombine(h, f->shape_vars.size());
    for (const auto& p : f->params) h = HashCombine(h, BufferDef(p));
    return HashCombine(h, Hash(f->body));
  }

 protected:
  size_t HashExtension(const PrimExpr& e) override {
    if (auto* x = e.as<BufferLoadNode>()) return Exprs(BufferUse(x->buffer), x->indices);
    return ir::ExprHasher::HashExtension(e);
  }

 private:
  size_t Exprs(size_t h, const std::vector<PrimExpr>& v) {
    for (const auto& e : v) h = ir::HashCombine(h, Hash(e));
    return ir::HashCombine(h, v.size());
  }
  size_t BufferShape(const Buffer& b) {
    size_t h = std::hash<std::string>()(b->dtype.str() + "@" + b->scope);
    return Exprs(Exprs(h, b->shape), b->strides);
  }
  size_t BufferDef(const Buffer& b) { return ir::HashCombine(BufferShape(b), DefineVar(b->data.get_var())); }
  size_t BufferUse(const Buffer& b) { return ir::HashCombine(BufferShape(b), HashVar(b->data.get_var())); }
};

}  // namespace

bool StructuralEqual(const PrimExpr& a, const PrimExpr& b, bool map_free_vars) {
  return TirComparator(map_free_vars).Equal(a, b);
}
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return TirComparator(map_free_vars).Equal(a, b);
}
bool StructuralEqual(const PrimFunc& a, const PrimFunc& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  return TirComparator(false).Func(a, b);
}

size_t StructuralHash(const PrimExpr& e) { return TirHasher().Hash(e); }
size_t StructuralHash(const Stmt& s) { return TirHasher().Hash(s); }
size_t StructuralHash(const PrimFunc& f) { return TirHasher().Func(f); }

}  // namespace tessera::tir
