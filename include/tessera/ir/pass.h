// Pass infrastructure shared by every IR level (TVM's Pass / PassContext / Sequential and
// PassInstrument; MLIR's "a pass declares its name, summary and options in one place").
//
//   - PassInfo: a pass's name, one-line summary and opt_level, declared next to the pass.
//   - Pass<Module>: a PassInfo plus a function Module -> Module. Module is any IR module type
//     (graph::IRModule, tir::IRModule...) for which ModuleTraits<Module>::Print exists.
//   - PassContext: the opt_level, the names of disabled passes, string options
//     ("FuseOps.max_depth" = "8") and the instruments; passed to every pass explicitly.
//   - Sequential<Module>: runs its passes in order, skipping those whose opt_level exceeds the
//     context's or whose name is disabled, unless the pass is `required`.
//   - PassInstrument: callbacks before and after every pass that runs (timing, IR dumps,
//     verifiers). Instruments see the module as an IRView: printable, and typed on request.
//
// Errors: a pass's own errors propagate unchanged; instruments may throw (a verifier throws
// InternalError naming the pass that broke an invariant).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

namespace tessera::ir {

/// Specialize for each module type a Pass runs on: `static std::string Print(const M&)`
/// gives the text the dump instrument writes.
template <typename Module>
struct ModuleTraits;

/// What a pass declares about itself, in one place.
struct PassInfo {
  std::string name;     ///< "FoldConstant": the name --disable-pass and the dumps use
  std::string summary;  ///< one line: what it does
  int opt_level = 0;    ///< runs when PassContext::opt_level >= opt_level
  /// Runs whatever the opt_level and the disabled list say (the pipeline cannot do without it:
  /// InferType, FuseOps, code generation).
  bool required = false;
};

/// A module as instruments see it after a pass: its text on demand, its value by type.
class IRView {
 public:
  template <typename Module>
  static IRView Of(const Module& m) {
    IRView v;
    v.module_ = &m;
    v.type_ = std::type_index(typeid(Module));
    v.print_ = [&m] { return ModuleTraits<Module>::Print(m); };
    return v;
  }
  /// A view of a module of a type without traits (a step's result that is printed ad hoc).
  template <typename Module>
  static IRView Of(const Module& m, std::function<std::string()> print) {
    IRView v;
    v.module_ = &m;
    v.type_ = std::type_index(typeid(Module));
    v.print_ = std::move(print);
    return v;
  }
  /// The module when it is a `Module`, else nullptr.
  template <typename Module>
  const Module* as() const {
    return type_ == std::type_index(typeid(Module)) ? static_cast<const Module*>(module_) : nullptr;
  }
  std::string Print() const { return print_ ? print_() : std::string(); }

 private:
  IRView() = default;
  const void* module_ = nullptr;
  std::type_index type_ = std::type_index(typeid(void));
  std::function<std::string()> print_;
};

/// Callbacks around every pass that runs. Default: do nothing.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual std::string name() const = 0;
  virtual void RunBeforePass(const PassInfo& info) {}
  virtual void RunAfterPass(const PassInfo& info, const IRView& ir) {}
  /// Called once when the pipeline that owns the context is done (PassContext::Finish).
  virtual void ExitPipeline() {}
};

class PassContext {
 public:
  /// Passes with opt_level above this are skipped.
  int opt_level = 3;
  /// Pass names never run.
  std::set<std::string> disabled_passes;
  /// Free-form options, "Pass.option" -> value; passes read them with GetOption.
  std::map<std::string, std::string> options;
  /// Run in order before each pass, and in order after it.
  std::vector<std::shared_ptr<PassInstrument>> instruments;

  /// Whether the pass `info` runs under this context.
  bool ShouldRun(const PassInfo& info) const {
    return info.required || (info.opt_level <= opt_level && disabled_passes.count(info.name) == 0);
  }
  /// The option `key`, or `dflt` when unset.
  std::string GetOption(const std::string& key, const std::string& dflt = "") const;
  /// The option `key` as an integer; UserError naming the key when it is not one.
  long long GetIntOption(const std::string& key, long long dflt) const;

  void RunBeforePass(const PassInfo& info) const;
  void RunAfterPass(const PassInfo& info, const IRView& ir) const;
  /// Tells every instrument the pipeline ended (the timing table is printed here).
  void Finish() const;

  /// Runs `step` as the pass `info` (instruments around it) when ShouldRun(info); returns
  /// whether it ran. For steps that change the module type (graph -> executor plan -> TIR):
  /// `view` gives the result to the instruments.
  template <typename Step, typename View>
  bool RunStep(const PassInfo& info, Step&& step, View&& view) const {
    if (!ShouldRun(info)) return false;
    RunBeforePass(info);
    step();
    RunAfterPass(info, view());
    return true;
  }
};

/// A pass: what it declares (PassInfo) and what it does (Module -> Module).
template <typename Module>
class Pass {
 public:
  using Func = std::function<Module(const Module&, const PassContext&)>;
  Pass(PassInfo info, Func func) : info_(std::move(info)), func_(std::move(func)) {}

  const PassInfo& info() const { return info_; }
  /// Runs the pass unconditionally (the caller decided it should run), with instruments.
  Module operator()(const Module& mod, const PassContext& ctx) const {
    ctx.RunBeforePass(info_);
    Module out = func_(mod, ctx);
    ctx.RunAfterPass(info_, IRView::Of(out));
    return out;
  }

 private:
  PassInfo info_;
  Func func_;
};

/// A list of passes run in order, each gated by the context (PassContext::ShouldRun).
template <typename Module>
class Sequential {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<Pass<Module>> passes) : passes_(std::move(passes)) {}
  Sequential& Add(Pass<Module> pass) {
    passes_.push_back(std::move(pass));
    return *this;
  }
  const std::vector<Pass<Module>>& passes() const { return passes_; }

  Module operator()(Module mod, const PassContext& ctx) const {
    for (const auto& pass : passes_) {
      if (ctx.ShouldRun(pass.info())) mod = pass(mod, ctx);
    }
    return mod;
  }

 private:
  std::vector<Pass<Module>> passes_;
};

/// Times every pass; at Finish prints a table (pass, ms, % of total) to `os` (stderr).
class PassTimingInstrument : public PassInstrument {
 public:
  explicit PassTimingInstrument(std::ostream* os = nullptr) : os_(os) {}
  std::string name() const override { return "PassTiming"; }
  void RunBeforePass(const PassInfo& info) override;
  void RunAfterPass(const PassInfo& info, const IRView& ir) override;
  void ExitPipeline() override;
  /// (pass name, milliseconds) of every pass run so far, in run order.
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }
  /// The table ExitPipeline prints.
  std::string Table() const;

 private:
  std::ostream* os_;
  std::vector<std::chrono::steady_clock::time_point> starts_;
  std::vector<std::pair<std::string, double>> timings_;
};

/// Writes the IR after every pass into `dir` as NN_<pass>.txt (NN counts the passes run, from
/// 00). Creates `dir`; UserError when it cannot be created or a file cannot be written.
class DumpIRInstrument : public PassInstrument {
 public:
  explicit DumpIRInstrument(std::string dir);
  std::string name() const override { return "DumpIR"; }
  void RunAfterPass(const PassInfo& info, const IRView& ir) override;

 private:
  std::string dir_;
  int index_ = 0;
};

}  // namespace tessera::ir
