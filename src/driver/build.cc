// build(): the compilation pipeline as a list of named passes. See include/tessera/driver/build.h.
#include "tessera/driver/build.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "tessera/byoc/compile_external.h"
#include "tessera/byoc/external_codegen.h"
#include "tessera/codegen/codegen_llvm.h"
#include "tessera/codegen/run_tool.h"
#include "tessera/driver/constant_evaluator.h"
#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/driver/vm_codegen.h"
#include "tessera/graph/transform/alter_op_layout.h"
#include "tessera/graph/transform/dead_code_elimination.h"
#include "tessera/graph/transform/eliminate_common_subexpr.h"
#include "tessera/graph/transform/fold_constant.h"
#include "tessera/graph/transform/fold_scale_axis.h"
#include "tessera/graph/transform/legalize_low_precision.h"
#include "tessera/graph/transform/merge_composite.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/graph/transform/simplify_inference.h"
#include "tessera/graph/verify.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/lower.h"
#include "tessera/graph_lower/op_strategy.h"
#include "tessera/graph_lower/pack_gemm_weights.h"
#include "tessera/graph_lower/winograd_conv2d.h"
#include "tessera/ir/pass.h"
#include "tessera/runtime/param_io.h"
#include "tessera/support/error.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/x86/schedule.h"
#include "tessera/tune/database.h"
#include "tessera/tune/model_check.h"
#include "tessera/tune/rewrite_choice.h"
#include "tessera/tune/space.h"

namespace tessera::driver {
namespace {

/// The graph-level pipeline up to the layout rewrite, in order. A pass runs when its opt_level <=
/// the build's (or it is required) and it is not disabled; see graph/transform/pass.h for each
/// pass's opt_level.
graph::transform::Sequential FrontPasses(const BuildOptions& options, const target::Target& target) {
  using namespace graph::transform;
  ConstantEvaluator evaluate = MakeJITConstantEvaluator(options, target);
  std::vector<Pass> passes = {
      InferTypePass(),
      LegalizeLowPrecisionPass(),
      SimplifyInferencePass(),
      FoldConstantPass(evaluate),
      FoldScaleAxisPass(),
      FoldConstantPass(evaluate),
      EliminateCommonSubexprPass(),
      DeadCodeEliminationPass(),
      UnflattenReductionsPass(),
  };
  if (!options.byoc.empty()) {
    // BYOC: after folding (backends see folded weights and biases), before the layout rewrites
    // (they see NCHW / OIHW); the later passes leave external functions alone (graph/functor.h).
    // The backends' composite patterns first (dnnl: layer norm, GELU): AnnotateTarget gives each
    // composite to its backend.
    if (auto patterns = byoc::CompositePatterns(options.byoc); !patterns.empty())
      passes.push_back(MergeCompositePass(std::move(patterns)));
    passes.push_back(AnnotateTargetPass(byoc::ExternalBackends(options.byoc)));
    passes.push_back(MergeCompilerRegionsPass());
    passes.push_back(PartitionGraphPass());
    passes.push_back(InlineExternalFunctionsPass([](const graph::FunctionNode& fn) { return byoc::WorthOffloading(fn); }));
  }
  // After BYOC: a backend that takes the attention's matmuls keeps them; what is left fuses.
  passes.push_back(FuseAttentionPass());
  return Sequential(std::move(passes));
}

/// The rest of the graph pipeline: the layout rewrites, whose decisions are knobs (`knobs`: null
/// for their fallbacks; tune/rewrite_choice.h), then fusion. Where the target lists blocks to choose
/// from, the NCHWc block (graph_lower::kLayoutBlockKnob) and the least channels of a conv that takes
/// the widest block (graph_lower::kWideBlockKnob) are knobs, one per model.
graph::transform::Sequential BackPasses(const target::Target& target, topi::KnobContext* knobs) {
  using namespace graph::transform;
  const graph_lower::TargetRewrites rewrites = graph_lower::RewritesFor(target);
  AlterOpLayoutOptions layout{rewrites.layout_block(target)};
  if (std::vector<int64_t> blocks = rewrites.layout_blocks ? rewrites.layout_blocks(target) : std::vector<int64_t>{};
      blocks.size() > 1) {
    layout.wide_block = blocks.back();
    layout.out_block = topi::Knob(knobs, graph_lower::kLayoutBlockKnob, std::move(blocks), layout.out_block);
    layout.wide_min_channels = topi::Knob(knobs, graph_lower::kWideBlockKnob, {0, graph_lower::kWideBlockMinChannels},
                                          graph_lower::kWideBlockMinChannels);
  }
  return Sequential({AlterOpLayoutPass(layout), graph_lower::WinogradConv2dPass(target, knobs),
                     graph_lower::PackGemmWeightsPass(target), FuseOpsPass(), InferTypePass()});
}

// The steps after the graph passes change the module's type, so they run as RunStep's.
const ir::PassInfo kGraphExecutorCodegen{"GraphExecutorCodegen",
                                         "executor graph JSON, params, memory plan and kernels", 0, true};
const ir::PassInfo kVMCodegen{"VMCodegen", "VM executable (bytecode with control flow), params and kernels", 0, true};
const ir::PassInfo kLowerPrimitiveFunctions{"LowerPrimitiveFunctions",
                                            "each primitive function -> a scheduled TensorIR PrimFunc", 0, true};
const ir::PassInfo kExternalCodegen{"ExternalCodegen", "BYOC: each backend's source for its external functions", 0,
                                    true};
const ir::PassInfo kCodegenLLVM{"CodegenLLVM", "LLVM object: kernels, executor graph and params", 0, true};

// Every pass and step name a build runs, for checking --disable-pass.
std::set<std::string> KnownPassNames(const BuildOptions& options, const target::Target& target) {
  std::set<std::string> names;
  const tir::transform::Sequential tir_passes = tir::transform::LowerToFlatPasses();
  const graph::transform::Sequential front = FrontPasses(options, target), back = BackPasses(target, nullptr);
  for (const auto& p : front.passes()) names.insert(p.info().name);
  for (const auto& p : back.passes()) names.insert(p.info().name);
  for (const auto& p : tir_passes.passes()) names.insert(p.info().name);
  for (const ir::PassInfo* info :
       {&kGraphExecutorCodegen, &kVMCodegen, &kLowerPrimitiveFunctions, &kExternalCodegen, &kCodegenLLVM})
    names.insert(info->name);
  return names;
}

// A disabled pass that does not exist is a typo the user must hear about, not a no-op.
void CheckDisabledPasses(const BuildOptions& options, const target::Target& target) {
  if (options.disabled_passes.empty()) return;
  const std::set<std::string> known = KnownPassNames(options, target);
  for (const std::string& name : options.disabled_passes) {
    if (known.count(name)) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    TESSERA_THROW(UserError, "--disable-pass '", name, "': no pass has that name; the passes are: ", list);
  }
}

ir::PassContext MakePassContext(const BuildOptions& options) {
  ir::PassContext ctx;
  ctx.opt_level = options.opt_level;
  ctx.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  ctx.options = options.pass_options;
  if (options.verify_ir) ctx.instruments.push_back(std::make_shared<graph::VerifierInstrument>());
  if (!options.dump_ir_dir.empty()) ctx.instruments.push_back(std::make_shared<ir::DumpIRInstrument>(options.dump_ir_dir));
  if (options.time_passes) ctx.instruments.push_back(std::make_shared<ir::PassTimingInstrument>(&std::cerr));
  return ctx;
}

struct Lowered {
  ExecutorPlan plan;
  tir::IRModule kernels;
  std::string params_blob;
  int tuned_kernels = 0;
  std::string tuning_fingerprint;  // with a database: the tuned build's (tune/model_check.h)
  bool tuning_rejected = false;    // built without the database: its end-to-end check said slower
  bool rewrites_rejected = false;  // built without its rewrite decisions: the check said faster so
  int untuned_kernels = 0;         // kernels at their default schedule by BuildOptions::untuned_workloads
  std::vector<byoc::ExternalSource> external;
};

// One source per backend for its external functions, in the order of --byoc.
std::vector<byoc::ExternalSource> GenerateExternal(const ExecutorPlan& plan, const BuildOptions& options) {
  std::vector<byoc::ExternalSource> out;
  for (const std::string& backend : options.byoc) {
    std::vector<byoc::ExternalRegion> regions;
    for (const ExternalFunction& x : plan.externals)
      if (x.compiler == backend) regions.push_back({x.function.get(), x.symbol, x.constant_params});
    if (!regions.empty()) out.push_back(byoc::GetExternalCodegen(backend).Generate(regions));
  }
  return out;
}

std::string PrintExternal(const std::vector<byoc::ExternalSource>& sources) {
  std::string text;
  for (const byoc::ExternalSource& s : sources)
    text += "// ---- backend " + s.backend + " (" + s.language + ") ----\n" + s.code + "\n";
  return text;
}

// GraphExecutorCodegen (VMCodegen for a main with control flow or symbolic shapes) of a module
// after the graph passes: the executor plan with its primitive functions.
ExecutorPlan PlanGraph(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                       const BuildOptions& options, const ir::PassContext& ctx) {
  ExecutorPlan plan;
  if (HasControlFlow(mod) || HasSymbolicShapes(mod)) {
    ctx.RunStep(kVMCodegen, [&] { plan = VMCodegen(mod, output_names, options.input_guards); },
                [&] { return ir::IRView::Of(plan, [&] { return plan.graph_json; }); });
  } else {
    ctx.RunStep(kGraphExecutorCodegen, [&] { plan = GraphExecutorCodegen(mod, output_names, options.input_guards); },
                [&] { return ir::IRView::Of(plan, [&] { return plan.graph_json; }); });
  }
  return plan;
}

// The graph passes (the rewrites' knobs from `knobs`) and the executor plan.
ExecutorPlan PlanModel(const graph::IRModule& input, const std::vector<std::string>& output_names,
                       const BuildOptions& options, const target::Target& target, const ir::PassContext& ctx,
                       topi::KnobContext* knobs) {
  graph_lower::RegisterComputes();
  graph::IRModule mod = FrontPasses(options, target)(input, ctx);
  return PlanGraph(BackPasses(target, knobs)(mod, ctx), output_names, options, ctx);
}

// The tuning database of a build, or nullopt without one.
std::optional<tune::Database> OpenTuningDatabase(const BuildOptions& options) {
  if (options.tuning_db.empty()) return std::nullopt;
  TESSERA_CHECK(std::filesystem::is_regular_file(options.tuning_db), "tuning database '", options.tuning_db,
                "' does not exist; create it with `tessera tune MODEL.onnx --db ", options.tuning_db, "`");
  return tune::Database(options.tuning_db);
}

// The record a build schedules `workload` with: its best on `target`, or the one of
// `programs`' program for it (BuildOptions::workload_programs; nullopt with a warning when the
// database no longer has that program).
std::optional<tune::TuningRecord> ChosenRecord(const tune::Database& db, const std::string& workload,
                                               const std::string& kernel, const target::Target& target,
                                               const std::map<std::string, std::string>& programs) {
  auto chosen = programs.find(workload);
  if (chosen == programs.end()) return db.Best(workload, target.str());
  for (tune::TuningRecord& r : db.TopPrograms(workload, target.str(), SIZE_MAX))
    if (tune::ProgramId(r) == chosen->second) return std::move(r);
  std::cerr << "tessera: warning: the tuning database has no program " << chosen->second << " of kernel '" << kernel
            << "' (workload " << workload << ") any more; using the default schedule\n";
  return std::nullopt;
}

// A kernel's schedule: the database's best record for its workload on `target` (or the one of
// options.workload_programs), replayed from its trace; else (no record, a workload of
// options.untuned_workloads, or a trace that no longer replays: a warning) the default schedule.
// With a database, appends the kernel as the database schedules it to `kernels`, with its default
// schedule's program and whether the record is that program (the hand schedule is a record too:
// TunedKernel::default_program).
tir::PrimFunc ScheduleKernel(const graph_lower::UnscheduledKernel& k, const target::Target& target,
                             const std::optional<tune::Database>& db, const BuildOptions& options, int* tuned,
                             int* kept_default, std::vector<TunedKernel>* kernels) {
  const tir::Schedule by_default = topi::x86::ScheduleDefault(k.func, k.options, k.anchors);
  if (db) {
    const std::string workload = tune::WorkloadHash(k.func);
    const std::string default_trace = by_default.trace().ToJSON();
    kernels->push_back({k.func->name, workload, "-", tune::TraceId(default_trace)});
    std::optional<tune::TuningRecord> best =
        ChosenRecord(*db, workload, k.func->name, target, options.workload_programs);
    if (best && options.untuned_workloads.count(workload)) {
      ++*kept_default;
    } else if (best) {
      try {
        tir::PrimFunc f = tune::ReplayTrace(k.func, tir::Trace::FromJSON(best->trace_json));
        ++*tuned;
        kernels->back().program = tune::ProgramId(*best);
        kernels->back().default_program = best->trace_json == default_trace;
        return f;
      } catch (const std::exception& e) {
        std::cerr << "tessera: warning: the tuning record of kernel '" << k.func->name
                  << "' does not replay (" << e.what() << "); using the default schedule\n";
      }
    }
  }
  return by_default.func();
}

std::string FormatMs(double secs) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g ms", secs * 1e3);
  return buf;
}

// The graph passes (the rewrites' decisions from the database, else their fallbacks:
// tune/rewrite_choice.h), the executor plan and every kernel scheduled (the database's best record,
// else the default schedule), with the build's tuning fingerprint.
struct ScheduledModel {
  ExecutorPlan plan;
  tir::IRModule kernels;
  int tuned_kernels = 0;
  int untuned_kernels = 0;  // with a record, kept at the default schedule (BuildOptions::untuned_workloads)
  TunedBuild tuned;         // empty without a database
};

ScheduledModel ScheduleModel(const graph::IRModule& input, const std::vector<std::string>& output_names,
                             const BuildOptions& options, const target::Target& target, const ir::PassContext& ctx,
                             const std::optional<tune::Database>& db) {
  ScheduledModel out;
  topi::KnobContext rewrite_knobs({}, [&](const std::string& knob) -> std::optional<int64_t> {
    return db && options.apply_rewrite_decisions ? tune::LookupRewrite(*db, knob, target.str()) : std::nullopt;
  });
  out.plan = PlanModel(input, output_names, options, target, ctx, &rewrite_knobs);
  ctx.RunStep(kLowerPrimitiveFunctions, [&] {
    for (const auto& [name, fn] : out.plan.kernels)
      out.kernels.Add(ScheduleKernel(graph_lower::LowerUnscheduled(fn, name, target), target, db, options,
                                     &out.tuned_kernels, &out.untuned_kernels, &out.tuned.kernels));
  }, [&] { return ir::IRView::Of(out.kernels); });
  if (db) {
    std::vector<tune::KernelPrograms> programs;
    for (const TunedKernel& k : out.tuned.kernels) programs.push_back({k.workload, k.program, k.default_id});
    out.tuned.fingerprint = tune::TuningFingerprint(std::move(programs));
  }
  return out;
}

Lowered LowerModel(const graph::IRModule& input, const std::vector<std::string>& output_names,
                   const BuildOptions& options, const target::Target& target, const ir::PassContext& ctx) {
  const std::optional<tune::Database> db = OpenTuningDatabase(options);
  ScheduledModel scheduled = ScheduleModel(input, output_names, options, target, ctx, db);
  // The end-to-end check's verdict on this very build (tune/model_check.h): not faster (at every
  // thread count checked) -> the default;
  // faster without the rewrite decisions or with some kernels at their default schedules -> so.
  const std::string& fingerprint = scheduled.tuned.fingerprint;
  const std::optional<tune::ModelCheckVerdict> verdict =
      db && options.apply_model_check ? tune::LookupModelCheck(*db, fingerprint, target.str()) : std::nullopt;
  if (verdict && !verdict->apply) {
    std::cerr << "tessera: note: the tuning database '" << options.tuning_db
              << "' checked this tuned build end to end and found it "
              << (verdict->error.empty() ? "not faster than the default build (" + FormatMs(verdict->tuned_secs) +
                                               " against " + FormatMs(verdict->default_secs) + " per run" +
                                               (verdict->threads > 0
                                                    ? " at " + std::to_string(verdict->threads) + " thread(s)"
                                                    : std::string()) +
                                               ", faster in " + std::to_string(verdict->wins) + " of " +
                                               std::to_string(verdict->rounds) + " paired rounds)"
                                         : "unusable (" + verdict->error + ")")
              << "; building with the default schedules\n";
    BuildOptions untuned = options;
    untuned.tuning_db.clear();
    Lowered fallback = LowerModel(input, output_names, untuned, target, ctx);
    fallback.tuning_fingerprint = fingerprint;
    fallback.tuning_rejected = true;
    return fallback;
  }
  const bool drop_rewrites = verdict && !verdict->rewrites && options.apply_rewrite_decisions;
  const bool drop_kernels = verdict && !verdict->untuned_workloads.empty();
  const bool second_choices = verdict && !verdict->workload_programs.empty();
  if (drop_rewrites || drop_kernels || second_choices) {
    BuildOptions followed = options;
    followed.apply_model_check = false;
    if (drop_rewrites) {
      std::cerr << "tessera: note: the tuning database '" << options.tuning_db
                << "' checked this tuned build end to end and found its kernels faster without its graph rewrite "
                   "decisions; building them at their defaults\n";
      followed.apply_rewrite_decisions = false;
    }
    if (drop_kernels) {
      std::cerr << "tessera: note: the tuning database '" << options.tuning_db << "' checked this tuned build end to "
                << "end and found the tuned kernels of " << verdict->untuned_workloads.size()
                << " workload(s) slower in the model; building them with their default schedules\n";
      followed.untuned_workloads.insert(verdict->untuned_workloads.begin(), verdict->untuned_workloads.end());
    }
    if (second_choices) {
      std::cerr << "tessera: note: the tuning database '" << options.tuning_db << "' checked this tuned build end to "
                << "end and found the best records of " << verdict->workload_programs.size()
                << " workload(s) slower in the model than their runners-up; building those with the runners-up\n";
      followed.workload_programs.insert(verdict->workload_programs.begin(), verdict->workload_programs.end());
    }
    Lowered fallback = LowerModel(input, output_names, followed, target, ctx);
    fallback.tuning_fingerprint = fingerprint;
    fallback.rewrites_rejected = drop_rewrites;
    return fallback;
  }
  if (db && options.apply_model_check && !verdict && scheduled.tuned_kernels > 0 &&
      tune::HasModelChecks(*db, target.str())) {
    std::cerr << "tessera: note: the tuning database '" << options.tuning_db
              << "' has no end-to-end check of this tuned build (tuned again since the last check, or the default "
                 "schedules it was checked against have changed); building it as its records say. `tessera tune "
                 "MODEL.onnx --db "
              << options.tuning_db << " --check-only` checks it\n";
  }
  Lowered out;
  out.plan = std::move(scheduled.plan);
  out.tuned_kernels = scheduled.tuned_kernels;
  out.untuned_kernels = scheduled.untuned_kernels;
  out.tuning_fingerprint = fingerprint;
  out.kernels = tir::transform::LowerToFlat(scheduled.kernels, ctx);  // one pass per step (tir/transform/lower.h)
  if (!out.plan.externals.empty()) {
    ctx.RunStep(kExternalCodegen, [&] { out.external = GenerateExternal(out.plan, options); },
                [&] { return ir::IRView::Of(out.external, [&] { return PrintExternal(out.external); }); });
  }
  out.params_blob = runtime::SaveParams(out.plan.params);
  return out;
}

// The JIT module's symbols, then the external library's.
class ChainedSymbols : public runtime::SymbolSource {
 public:
  ChainedSymbols(runtime::Module jit, std::shared_ptr<runtime::SymbolSource> external)
      : jit_(std::move(jit)), external_(std::move(external)) {}
  void* Lookup(const std::string& name) override {
    void* p = jit_.Lookup(name);
    return p ? p : external_->Lookup(name);
  }

 private:
  runtime::Module jit_;
  std::shared_ptr<runtime::SymbolSource> external_;
};

// Every kernel of a plan as a tuning task (unscheduled, template schedules from the op strategy),
// deduplicated by workload hash; `rewrite` labels kernels of a rewrite's other value.
std::vector<tune::TuneTask> PlanTasks(const ExecutorPlan& plan, const target::Target& target,
                                      const std::string& rewrite) {
  std::vector<tune::TuneTask> tasks;
  for (const auto& [name, fn] : plan.kernels) {
    graph_lower::UnscheduledKernel k = graph_lower::LowerUnscheduled(fn, name, target);
    tune::TuneTask t;
    t.name = name;
    t.kernels = {name};
    t.func = k.func;
    t.num_inputs = k.num_inputs;
    t.anchors = std::move(k.anchors);
    t.options = k.options;
    t.workload_hash = tune::WorkloadHash(t.func);
    t.weight = plan.kernel_calls.count(name) ? plan.kernel_calls.at(name) : 1;
    t.flops = tune::EstimateFlops(t.func);
    t.rewrite = rewrite;
    tasks.push_back(std::move(t));
  }
  return tune::DeduplicateTasks(std::move(tasks));
}

BuildSummary Summarize(const Lowered& l) {
  BuildSummary s;
  s.num_kernels = static_cast<int>(l.plan.kernels.size());
  s.num_external = static_cast<int>(l.plan.externals.size());
  s.num_nodes = l.plan.num_nodes;
  s.storage_bytes = l.plan.storage_bytes;
  s.unplanned_bytes = l.plan.unplanned_bytes;
  for (const auto& [name, a] : l.plan.params) s.param_bytes += a.NBytes();
  s.tuned_kernels = l.tuned_kernels;
  s.tuning_fingerprint = l.tuning_fingerprint;
  s.tuning_rejected = l.tuning_rejected;
  s.rewrites_rejected = l.rewrites_rejected;
  s.untuned_kernels = l.untuned_kernels;
  return s;
}

}  // namespace

BuiltModel Build(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                 const BuildOptions& options) {
  const target::Target target = ResolveTarget(options.target);
  CheckDisabledPasses(options, target);
  ir::PassContext ctx = MakePassContext(options);
  Lowered lowered = LowerModel(mod, output_names, options, target, ctx);
  BuiltModel built;
  built.target = target;
  built.external = lowered.external;
  codegen::ModuleExtras extras{lowered.plan.graph_json, lowered.params_blob};
  ctx.RunStep(kCodegenLLVM, [&] { built.object = codegen::EmitObject(lowered.kernels, target, extras); },
              [&] {
                return ir::IRView::Of(built.object, [&] { return codegen::EmitLLVMIR(lowered.kernels, target, extras); });
              });
  ctx.Finish();
  built.summary = Summarize(lowered);
  return built;
}

BuildSummary BuildSharedLibrary(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                const std::string& out_path, const BuildOptions& options) {
  BuiltModel built = Build(mod, output_names, options);
  // BYOC: the backends' objects and libraries join the LLVM object in the one library.
  codegen::TempDir dir("tessera-byoc");
  std::vector<std::string> extra = byoc::CompileExternalSources(built.external, built.target.triple, dir.path());
  for (const std::string& f : byoc::ExternalLinkFlags(built.external)) extra.push_back(f);
  // A foreign triple links with its cross compiler (codegen::LinkerFor).
  codegen::LinkSharedLibrary(built.object, out_path, built.target.triple, extra);
  return built.summary;
}

std::vector<tune::TuneTask> ExtractTasks(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                         const BuildOptions& options, std::vector<tune::RewriteChoice>* choices) {
  const target::Target target = ResolveTarget(options.target);
  CheckDisabledPasses(options, target);
  ir::PassContext ctx = MakePassContext(options);
  graph_lower::RegisterComputes();
  const graph::IRModule front = FrontPasses(options, target)(mod, ctx);
  topi::KnobContext discovered;
  std::vector<tune::TuneTask> tasks = PlanTasks(
      PlanGraph(BackPasses(target, &discovered)(front, ctx), output_names, options, ctx), target, {});
  ctx.Finish();
  if (!choices) return tasks;
  // Each other value of each knob: the back passes again from the same front module, quietly. (A
  // knob asked only under another value of a knob, such as a Winograd tile under another block,
  // keeps its fallback there: knobs are decided one at a time, the others at their fallbacks.)
  BuildOptions quiet_options = options;
  quiet_options.dump_ir_dir.clear();
  quiet_options.time_passes = false;
  const ir::PassContext quiet = MakePassContext(quiet_options);
  std::map<std::string, int64_t> base;  // the default build: workload hash -> calls per run
  std::set<std::string> known;
  for (const tune::TuneTask& t : tasks) {
    base[t.workload_hash] = t.weight;
    known.insert(t.workload_hash);
  }
  for (const topi::KnobSpec& spec : discovered.space()) {
    std::map<int64_t, std::map<std::string, int64_t>> builds = {{spec.fallback, base}};
    for (int64_t v : spec.candidates) {
      if (v == spec.fallback) continue;
      topi::KnobContext alt({{spec.name, v}});
      const std::string label = spec.name + "=" + std::to_string(v);
      std::vector<tune::TuneTask> alt_tasks =
          PlanTasks(PlanGraph(BackPasses(target, &alt)(front, quiet), output_names, options, quiet), target, label);
      std::map<std::string, int64_t>& calls = builds[v];
      for (tune::TuneTask& t : alt_tasks) {
        calls[t.workload_hash] = t.weight;
        if (known.insert(t.workload_hash).second) tasks.push_back(std::move(t));
      }
    }
    // A knob whose every value builds the same kernels (the wide-block threshold of a model without
    // a wide conv) is no choice.
    tune::RewriteChoice choice = tune::MakeRewriteChoice(spec.name, spec.fallback, builds);
    if (std::any_of(choice.kernels.begin(), choice.kernels.end(), [](const auto& k) { return !k.second.empty(); }))
      choices->push_back(std::move(choice));
  }
  return tasks;
}

TunedBuild DescribeTunedBuild(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                              const BuildOptions& options) {
  const target::Target target = ResolveTarget(options.target);
  CheckDisabledPasses(options, target);
  BuildOptions quiet_options = options;
  quiet_options.dump_ir_dir.clear();
  quiet_options.time_passes = false;
  ir::PassContext ctx = MakePassContext(quiet_options);
  const std::optional<tune::Database> db = OpenTuningDatabase(options);
  TESSERA_CHECK(db, "DescribeTunedBuild: the build options name no tuning database");
  return ScheduleModel(mod, output_names, options, target, ctx, db).tuned;
}

std::string TuningFingerprint(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                              const BuildOptions& options) {
  return DescribeTunedBuild(mod, output_names, options).fingerprint;
}

runtime::Module BuildJIT(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                         const BuildOptions& options) {
  return BuildJIT(mod, output_names, ResolveTarget(options.target), options);
}

runtime::Module BuildJIT(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                         const target::Target& target, const BuildOptions& options) {
  TESSERA_CHECK(RunsOnHost(target), "cannot JIT-run a model compiled for '", target.str(),
                "' on this machine; compile it to a library instead (tessera compile), or use --target native");
  CheckDisabledPasses(options, target);
  ir::PassContext ctx = MakePassContext(options);
  Lowered lowered = LowerModel(mod, output_names, options, target, ctx);
  codegen::ModuleExtras extras{lowered.plan.graph_json, lowered.params_blob};
  std::optional<runtime::Module> jit;
  ctx.RunStep(kCodegenLLVM, [&] { jit = codegen::BuildJIT(lowered.kernels, target, extras); },
              [&] { return ir::IRView::Of(*jit, [&] { return codegen::EmitLLVMIR(lowered.kernels, target, extras); }); });
  ctx.Finish();
  if (lowered.external.empty()) return std::move(*jit);
  // BYOC: the external kernels come from a temporary library loaded into this process.
  auto source = std::make_shared<ChainedSymbols>(*jit, byoc::LoadExternalLibrary(lowered.external));
  return runtime::Module(source, "<jit + byoc>", source);
}

}  // namespace tessera::driver
