// `tessera tune`: search schedules for every kernel of an ONNX model and record them in a tuning
// database that `tessera compile --db` applies (tune/tuner.h).
#include <unistd.h>

#include <array>
#include <cmath>
#include <fstream>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "tessera/driver/build.h"
#include "tessera/driver/tune_model.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"
#include "tessera/tune/tuner.h"

namespace tessera::cli {
namespace {

struct TuneCliOptions {
  std::string model;
  std::string db;
  std::string target = "llvm -mcpu=native";
  std::string time;
  int64_t trials = 0;
  int batch = 8;
  int threads = 0;
  uint64_t seed = 0;
  double timeout = 30;
  int64_t cold_weights = tune::MeasureOptions{}.cold_weights_bytes;
  std::vector<std::string> input_shapes;
  std::vector<std::string> input_values;
  std::string report;
  std::string tasks;  // substring of the task names to tune; empty: every task
  int confirm = 2;
  int check_rounds = 10;
  std::vector<int> check_threads;  // empty: --threads' count and 1
  bool check_only = false;
};

/// The report's "model_check" object.
nlohmann::json CheckJson(const driver::ModelCheckResult& c) {
  auto profile = [](const std::vector<tune::InModelKernelTime>& ks) {
    nlohmann::json out = nlohmann::json::array();
    for (const tune::InModelKernelTime& k : ks)
      out.push_back({{"workload", k.workload}, {"threads", k.threads}, {"default_s", k.default_secs},
                     {"tuned_s", k.tuned_secs}, {"ratio", k.ratio}});
    return out;
  };
  nlohmann::json builds = nlohmann::json::array();
  for (const tune::ModelCheckVerdict& b : c.builds)
    builds.push_back({{"threads", b.threads}, {"rewrites", b.rewrites}, {"untuned_workloads", b.untuned_workloads.size()},
                      {"workload_programs", b.workload_programs.size()}, {"ratio", b.ratio}, {"wins", b.wins},
                      {"apply", b.apply}});
  return {{"checked", c.checked},         {"skipped", c.skipped},         {"fingerprint", c.fingerprint},
          {"apply", c.verdict.apply},     {"rewrites", c.verdict.rewrites},
          {"default_s", c.verdict.default_secs}, {"tuned_s", c.verdict.tuned_secs},
          {"ratio", c.verdict.ratio},     {"rounds", c.verdict.rounds}, {"wins", c.verdict.wins},   {"error", c.verdict.error},
          {"threads", c.verdict.threads}, {"checked_threads", c.verdict.checked_threads},
          {"untuned_workloads", c.verdict.untuned_workloads}, {"workload_programs", c.verdict.workload_programs},
          {"kernels", profile(c.kernels)}, {"second_kernels", profile(c.second_kernels)}, {"builds", builds},
          {"elapsed_s", c.elapsed_s}};
}

/// The --report file: how candidates were measured, every task's status, the graph rewrite decisions,
/// the end-to-end check and the estimated latency after every trial (without the decisions, which come
/// at the end).
void WriteReport(const std::string& path, const driver::TuneModelResult& result, const tune::MeasureOptions& measure,
                 const std::vector<std::array<double, 3>>& curve) {
  const tune::TuneReport& r = result.report;
  const std::vector<tune::RewriteDecision>& decisions = result.decisions;
  nlohmann::json j;
  j["measure"] = {{"threads", measure.num_threads},
                  {"cold_weights_bytes", measure.cold_weights_bytes},
                  {"timeout_s", measure.timeout_s}};
  j["trials"] = r.trials;
  j["elapsed_s"] = r.elapsed_s;
  j["revivals"] = r.revivals;
  j["default_latency_s"] = r.default_latency_s();
  j["best_latency_s"] = r.best_latency_s() - tune::SavedSecs(decisions);
  for (const tune::TaskStatus& t : r.tasks)
    j["tasks"].push_back({{"name", t.name}, {"workload", t.workload_hash}, {"weight", t.weight}, {"flops", t.flops},
                          {"default_secs", t.default_secs}, {"best_secs", t.best_secs}, {"trials", t.trials},
                          {"errors", t.errors}, {"rewrite", t.rewrite}});
  j["decisions"] = nlohmann::json::array();
  for (const tune::RewriteDecision& d : decisions) {
    nlohmann::json costs = nlohmann::json::object();
    for (const auto& [v, secs] : d.cost_secs) costs[std::to_string(v)] = std::isfinite(secs) ? nlohmann::json(secs) : nullptr;
    j["decisions"].push_back({{"knob", d.knob}, {"value", d.value}, {"fallback", d.fallback}, {"cost_secs", costs}});
  }
  j["model_check"] = CheckJson(result.check);
  j["curve"] = nlohmann::json::array();
  for (const auto& [trials, elapsed, latency] : curve) j["curve"].push_back({trials, elapsed, latency});
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  TESSERA_CHECK(out.good(), "--report '", path, "': cannot write the file");
}

/// "10m", "90s", "1.5h", "600" (seconds) -> seconds; UserError otherwise.
double ParseDuration(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  TESSERA_CHECK(used > 0 && scale > 0 && v > 0 && std::isfinite(v), "--time '", text,
                "': expected a positive duration such as 600, 90s, 10m or 1.5h");
  return v * scale;
}

std::string Seconds(double s) {
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof(buf), "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof(buf), "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof(buf), "%.0fs", s);
  return buf;
}

std::string Ms(double secs) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", secs * 1e3);
  return buf;
}

/// One progress line: a bar, the task, its trials and best GFLOP/s, the ETA.
void PrintProgress(const tune::TuneProgress& p, bool tty) {
  const tune::TaskStatus& t = p.tasks[p.current];
  const int width = 24;
  const int filled = static_cast<int>(p.budget_fraction * width);
  const double eta = p.budget_fraction > 0 ? p.elapsed_s * (1 - p.budget_fraction) / p.budget_fraction : 0;
  char line[256];
  std::snprintf(line, sizeof(line), "[%s%s] %3.0f%% task %d/%zu %-28.28s trials %3d  best %7.1f GFLOP/s  ETA %s",
                std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), p.budget_fraction * 100,
                p.current + 1, p.tasks.size(), t.name.c_str(), t.trials, t.best_gflops(), Seconds(eta).c_str());
  if (tty) std::cerr << "\r" << line << "\x1b[K" << std::flush;
  else std::cerr << line << "\n";
}

/// "1, 2": thread counts for a line.
std::string ThreadList(const std::vector<int>& counts) {
  std::string out;
  for (int t : counts) out += (out.empty() ? "" : ", ") + std::to_string(t);
  return out;
}

/// The end-to-end check's outcome, one line.
void PrintCheck(const driver::ModelCheckResult& c) {
  if (c.checked && c.verdict.error.empty())
    std::cout << "end to end: " << Ms(c.verdict.default_secs) << " ms default, " << Ms(c.verdict.tuned_secs)
              << " ms tuned per run at " << c.verdict.threads << " thread(s), the worst of "
              << ThreadList(c.verdict.checked_threads) << " (" << (c.verdict.ratio > 0 ? 1 / c.verdict.ratio : 0)
              << "x, median of " << c.verdict.rounds << " paired rounds, faster in " << c.verdict.wins
              << "): `compile --db` builds the "
              << (!c.verdict.apply      ? "default model"
                  : c.verdict.rewrites ? "tuned model"
                                       : "tuned kernels with the graph rewrites at their defaults")
              << (c.verdict.apply && !c.verdict.untuned_workloads.empty()
                      ? ", " + std::to_string(c.verdict.untuned_workloads.size()) +
                            " workload(s) with their default schedules (their tuned kernels ran slower in the model)"
                      : std::string())
              << (c.verdict.apply && !c.verdict.workload_programs.empty()
                      ? ", " + std::to_string(c.verdict.workload_programs.size()) +
                            " workload(s) with their runners-up (their best records ran slower in the model)"
                      : std::string())
              << "\n";
  else if (c.checked)
    std::cout << "end to end: the tuned build is not applied (" << c.verdict.error << ")\n";
  else
    std::cout << "end to end: not checked (" << c.skipped << ")\n";
}

void PrintSummary(const driver::TuneModelResult& result) {
  const tune::TuneReport& r = result.report;
  const std::vector<tune::RewriteDecision>& decisions = result.decisions;
  std::cout << "\n  # | task                                       | calls | trials | errors | default ms | best ms | "
               "speedup | GFLOP/s\n";
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const tune::TaskStatus& t = r.tasks[i];
    char line[256];
    const double best = t.best_secs > 0 ? t.best_secs : t.default_secs;
    std::snprintf(line, sizeof(line), "%3zu | %-42.42s | %5lld | %6d | %6d | %10s | %7s | %6.2fx | %7.1f\n", i + 1,
                  t.name.c_str(), static_cast<long long>(t.weight), t.trials, t.errors, Ms(t.default_secs).c_str(),
                  Ms(best).c_str(), best > 0 && t.default_secs > 0 ? t.default_secs / best : 0.0, t.best_gflops());
    std::cout << line;
    if (!t.not_tuned.empty()) std::cout << "    | (" << t.not_tuned << ": the default schedule)\n";
  }
  if (!decisions.empty()) {
    std::cout << "\ngraph rewrite decisions (value: its kernels' ms per run; '-': not all measured):\n";
    for (const tune::RewriteDecision& dec : decisions) {
      std::cout << "  " << dec.knob << " = " << dec.value << (dec.value == dec.fallback ? " (default)" : "") << "  [";
      for (const auto& [v, secs] : dec.cost_secs)
        std::cout << (v == dec.cost_secs.begin()->first ? "" : ", ") << v << ": " << (std::isfinite(secs) ? Ms(secs) : "-");
      std::cout << "]\n";
    }
  }
  const double d = r.default_latency_s(), b = r.best_latency_s() - tune::SavedSecs(decisions);
  std::cout << "kernels' share of a run: " << Ms(d) << " ms with the default schedules, " << Ms(b)
            << " ms tuned (" << (b > 0 ? d / b : 0) << "x); " << r.trials << " trials in " << Seconds(r.elapsed_s);
  if (r.revivals > 0)
    std::cout << " (every task rested for patience with budget left: " << r.revivals << " task wake-ups)";
  std::cout << "\n";
  PrintCheck(result.check);
}

/// --check-only: the end-to-end check of the database as it is.
int CheckOnly(const TuneCliOptions& o) {
  TESSERA_CHECK(o.check_rounds > 0, "--check-only needs --check-rounds > 0");
  TESSERA_CHECK(o.time.empty() && o.trials == 0 && o.tasks.empty(),
                "--check-only tunes nothing: it takes no --time, --trials or --tasks");
  frontend::ImportResult imported =
      frontend::FromONNX(o.model, ImportOptionsFromFlags(o.input_shapes, o.input_values));
  driver::BuildOptions build_options;
  build_options.target = o.target;
  build_options.input_guards = imported.input_values;
  build_options.tuning_db = o.db;
  driver::ModelCheckOptions check;
  check.rounds = o.check_rounds;
  check.thread_counts = o.check_threads;
  std::cerr << "end-to-end check of " << o.model << " with " << o.db << ": " << o.check_rounds << " rounds\n";
  const driver::ModelCheckResult c =
      driver::CheckTunedModel(imported.module, imported.output_names, build_options, check, o.threads);
  PrintCheck(c);
  if (!o.report.empty()) {
    std::ofstream out(o.report);
    out << nlohmann::json{{"model_check", CheckJson(c)}}.dump(1) << "\n";
    TESSERA_CHECK(out.good(), "--report '", o.report, "': cannot write the file");
  }
  return 0;
}

int Tune(const TuneCliOptions& o) {
  if (o.check_only) return CheckOnly(o);
  tune::TuneOptions opt;
  if (!o.time.empty()) opt.max_seconds = ParseDuration(o.time);
  opt.max_trials = o.trials;
  TESSERA_CHECK(opt.max_seconds > 0 || opt.max_trials > 0, "tessera tune needs a budget: --time 10m or --trials N");
  opt.batch_size = o.batch;
  opt.confirm_repeats = o.confirm;
  opt.seed = o.seed;
  opt.measure.num_threads = o.threads;
  opt.measure.timeout_s = o.timeout;
  opt.measure.cold_weights_bytes = o.cold_weights;

  const frontend::ImportOptions import_options = ImportOptionsFromFlags(o.input_shapes, o.input_values);
  frontend::ImportResult imported = frontend::FromONNX(o.model, import_options);
  driver::BuildOptions build_options;
  build_options.target = o.target;
  build_options.input_guards = imported.input_values;
  build_options.tuning_db = o.db;
  driver::TuneModelOptions tune_options;
  tune_options.tune = opt;
  tune_options.tasks = o.tasks;
  tune_options.check.rounds = o.check_rounds;
  tune_options.check.thread_counts = o.check_threads;
  const bool tty = isatty(STDERR_FILENO);
  bool midline = false;  // a progress line without its newline is on the terminal
  tune_options.log = [&](const std::string& line) {
    std::cerr << (midline ? "\n" : "") << line << "\n";
    midline = false;
  };
  std::cerr << "tessera tune " << o.model << "\n";
  std::vector<std::array<double, 3>> curve;  // trials, elapsed seconds, estimated latency
  const driver::TuneModelResult result =
      driver::TuneModel(imported.module, imported.output_names, build_options, tune_options,
                        [&](const tune::TuneProgress& p) {
                          PrintProgress(p, tty);
                          midline = tty;
                          curve.push_back({static_cast<double>(p.trials), p.elapsed_s, tune::EstimatedLatency(p.tasks)});
                        });
  if (midline) std::cerr << "\n";
  PrintSummary(result);
  if (!o.report.empty()) WriteReport(o.report, result, opt.measure, curve);
  std::cout << "records in " << o.db << "; compile with: tessera compile " << o.model << " --db " << o.db
            << " -o MODEL.so\n";
  return 0;
}

}  // namespace

Action AddTuneCommand(CLI::App& app) {
  auto opts = std::make_shared<TuneCliOptions>();
  auto* cmd = app.add_subcommand("tune", "Search faster schedules for a model's kernels and record them in a tuning database");
  cmd->add_option("model", opts->model, "the ONNX model (.onnx)")->required();
  cmd->add_option("--db", opts->db, "the tuning database (JSON lines; created, or resumed when it exists)")->required();
  cmd->add_option("--target", opts->target, "the machine to tune for (must be this machine: native, or a tag it runs)");
  cmd->add_option("--time", opts->time, "the time budget: 600, 90s, 10m, 1.5h");
  cmd->add_option("--trials", opts->trials, "the budget in measured candidates (all tasks together)")->check(CLI::PositiveNumber);
  cmd->add_option("--batch", opts->batch, "candidates measured per round of a task (default 8)")->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", opts->threads, "runtime threads while measuring (default: the runtime's default)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--seed", opts->seed, "the search's random seed (default 0)");
  cmd->add_option("--timeout", opts->timeout, "seconds one candidate may take to build and run (default 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cold-weights", opts->cold_weights,
                  "evict a kernel's inputs after the first (weights, biases, a residual) from the caches before every "
                  "timed call when they hold at least this many bytes, as a model streams its weights (0: always; -1: "
                  "never, every call finds them cached; default 1048576, tune/measure.h)")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--input-shape", opts->input_shapes, "NAME=D0,D1,...: a static shape for an input with symbolic dimensions");
  cmd->add_option("--input-value", opts->input_values,
                  "NAME=NUMBER|FILE: tune the model specialized for this input value (as tessera compile --input-value)");
  cmd->add_option("--confirm", opts->confirm,
                  "measure each task's best program this many more times at the end and rank programs by their median "
                  "(default 2; 0: off)")
      ->check(CLI::Range(0, 16));
  cmd->add_option("--tasks", opts->tasks,
                  "tune only the tasks whose name contains this text (e.g. conv2d_NCHWc); the others keep their default "
                  "schedules, and a graph rewrite knob is decided only when all its kernels are among them");
  cmd->add_option("--check-rounds", opts->check_rounds,
                  "end-to-end check: time the model with and without the tuned records this many paired rounds "
                  "and record which `compile --db` builds (default 10; 0: off)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--check-threads", opts->check_threads,
                  "end-to-end check: the runtime thread counts to time the model at, each in turn (e.g. 1,2); a tuned "
                  "kernel slower at any of them keeps its default schedule, and the tuned model is applied only when "
                  "faster at every one (default: --threads' count and 1)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--check-only", opts->check_only,
                "tune nothing: run the end-to-end check on the database as it is and record its verdict (the "
                "database must exist)");
  cmd->add_option("--report", opts->report,
                  "write a JSON report: every task's default / best time, the graph rewrite decisions, the end-to-end "
                  "check and the estimated latency after every trial (with --check-only: the check alone)");
  return [opts] { return Tune(*opts); };
}

}  // namespace tessera::cli
