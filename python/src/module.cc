// tessera._core: the C++ API as the Python package (python/tessera) uses it. Thin by design: the
// compiler and the runtime stay in C++; this file converts arguments, releases the GIL around
// every long call and turns tessera::Error into Python exceptions.
//
//   compile(model, output, target, opt_level, db, byoc, input_shapes, disabled_passes) -> dict
//   tune(model, db, seconds, trials, target, threads, batch, seed, timeout, input_shapes, progress) -> dict
//   Session(path): inputs / outputs, run(arrays, torch) -> list, benchmark(...), profile(...)
//   set_num_threads(n, force), num_threads(), __version__
//   Error(RuntimeError) > UserError(Error, ValueError) > UnsupportedError; InternalError(Error)
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "dlpack_bridge.h"
#include "session.h"
#include "tessera/driver/build.h"
#include "tessera/driver/tune_model.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/support/error.h"
#include "tessera/support/version.h"
#include "tessera/tune/rewrite_choice.h"
#include "tessera/tune/tuner.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_user_error = nullptr;
PyObject* g_unsupported_error = nullptr;
PyObject* g_internal_error = nullptr;

void TranslateErrors(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const UnsupportedError& e) {
    PyErr_SetString(g_unsupported_error, e.what());
  } catch (const UserError& e) {
    PyErr_SetString(g_user_error, e.what());
  } catch (const InternalError& e) {
    PyErr_SetString(g_internal_error, e.what());
  } catch (const Error& e) {
    PyErr_SetString(g_error, e.what());
  }
}

// The model argument: bytes (a serialized ModelProto) or a path.
frontend::ImportResult Import(const nb::object& model, const std::map<std::string, std::vector<int64_t>>& shapes,
                              const std::map<std::string, runtime::NDArray>& values = {}) {
  frontend::ImportOptions options;
  options.input_shapes = shapes;
  options.input_values = values;
  if (nb::isinstance<nb::bytes>(model)) {
    nb::bytes b = nb::borrow<nb::bytes>(model);
    std::string bytes(b.c_str(), b.size());
    nb::gil_scoped_release release;
    return frontend::FromONNXBytes(bytes, options, "<onnx model>");
  }
  std::string path = nb::cast<std::string>(model);
  nb::gil_scoped_release release;
  return frontend::FromONNX(path, options);
}

nb::dict Compile(const nb::object& model, const std::string& output, const std::string& target, int opt_level,
                 const std::string& db, const std::vector<std::string>& byoc,
                 const std::map<std::string, std::vector<int64_t>>& input_shapes,
                 const std::vector<std::string>& disabled_passes, const std::map<std::string, PyArray>& input_values) {
  std::map<std::string, runtime::NDArray> values;  // copies: the build runs without the GIL
  for (const auto& [name, array] : input_values) {
    runtime::NDArray view = FromPython(array, "input_values['" + name + "']");
    runtime::NDArray copy = runtime::NDArray::Empty(view.shape(), view.dtype());
    copy.CopyFromBytes(view.raw_data(), view.NBytes());
    values.emplace(name, copy);
  }
  frontend::ImportResult imported = Import(model, input_shapes, values);
  driver::BuildOptions options;
  options.input_guards = imported.input_values;
  options.target = target;
  TESSERA_CHECK(opt_level >= 0 && opt_level <= 3, "opt_level must be 0, 1, 2 or 3, got ", opt_level);
  options.opt_level = opt_level;
  options.tuning_db = db;
  options.byoc = byoc;
  options.disabled_passes = disabled_passes;
  driver::BuildSummary s;
  {
    nb::gil_scoped_release release;
    s = driver::BuildSharedLibrary(imported.module, imported.output_names, output, options);
  }
  nb::dict d;
  d["kernels"] = s.num_kernels;
  d["external_functions"] = s.num_external;
  d["kernel_calls"] = s.num_nodes;
  d["activation_bytes"] = s.storage_bytes;
  d["param_bytes"] = s.param_bytes;
  d["tuned_kernels"] = s.tuned_kernels;
  d["tuning_rejected"] = s.tuning_rejected;
  d["rewrites_rejected"] = s.rewrites_rejected;
  d["untuned_kernels"] = s.untuned_kernels;
  d["bound_dims"] = imported.bound_dims;
  d["opset"] = imported.opset;
  return d;
}

nb::dict Tune(const nb::object& model, const std::string& db_path, double seconds, int64_t trials,
              const std::string& target_name, int threads, int batch, uint64_t seed, double timeout, int check_rounds,
              const std::vector<int>& check_threads, const std::map<std::string, std::vector<int64_t>>& input_shapes,
              const std::function<void(nb::dict)>& progress) {
  driver::TuneModelOptions options;
  options.tune.max_seconds = seconds;
  options.tune.max_trials = trials;
  TESSERA_CHECK(seconds > 0 || trials > 0, "tune needs a budget: time (e.g. \"10m\") or trials");
  TESSERA_CHECK(batch > 0 && timeout > 0 && threads >= 0 && check_rounds >= 0,
                "tune: batch and timeout must be positive, threads and check_rounds >= 0");
  options.tune.batch_size = batch;
  options.tune.seed = seed;
  options.tune.measure.num_threads = threads;
  options.tune.measure.timeout_s = timeout;
  options.check.rounds = check_rounds;
  options.check.thread_counts = check_threads;
  frontend::ImportResult imported = Import(model, input_shapes);
  driver::TuneModelResult result;
  {
    nb::gil_scoped_release release;
    driver::BuildOptions build_options;
    build_options.target = target_name;
    build_options.tuning_db = db_path;
    build_options.input_guards = imported.input_values;
    result = driver::TuneModel(imported.module, imported.output_names, build_options, options,
                               [&](const tune::TuneProgress& p) {
      if (!progress) return;
      nb::gil_scoped_acquire gil;
      const tune::TaskStatus& t = p.tasks[p.current];
      nb::dict d;
      d["task"] = p.current;
      d["tasks"] = p.tasks.size();
      d["name"] = t.name;
      d["task_trials"] = t.trials;
      d["best_gflops"] = t.best_gflops();
      d["trials"] = p.trials;
      d["elapsed_s"] = p.elapsed_s;
      d["fraction"] = p.budget_fraction;
      progress(d);  // a Python exception (e.g. KeyboardInterrupt) ends the tuning here
    });
  }
  const tune::TuneReport& report = result.report;
  const std::vector<tune::RewriteDecision>& decisions = result.decisions;
  nb::list tasks;
  for (const tune::TaskStatus& t : report.tasks) {
    nb::dict d;
    d["name"] = t.name;
    d["workload"] = t.workload_hash;
    d["calls"] = t.weight;
    d["flops"] = t.flops;
    d["default_s"] = t.default_secs;
    d["best_s"] = t.best_secs;
    d["trials"] = t.trials;
    d["errors"] = t.errors;
    d["rewrite"] = t.rewrite;
    tasks.append(d);
  }
  nb::list rewrites;
  for (const tune::RewriteDecision& r : decisions) {
    nb::dict d, costs;
    for (const auto& [v, secs] : r.cost_secs) costs[nb::int_(v)] = secs;
    d["knob"] = r.knob;
    d["value"] = r.value;
    d["fallback"] = r.fallback;
    d["cost_s"] = costs;
    rewrites.append(d);
  }
  nb::dict d;
  d["tasks"] = tasks;
  d["decisions"] = rewrites;
  d["trials"] = report.trials;
  d["elapsed_s"] = report.elapsed_s;
  d["revivals"] = report.revivals;
  d["default_latency_s"] = report.default_latency_s();
  d["best_latency_s"] = report.best_latency_s() - tune::SavedSecs(decisions);
  const driver::ModelCheckResult& c = result.check;
  nb::dict check;
  check["checked"] = c.checked;
  check["skipped"] = c.skipped;
  check["fingerprint"] = c.fingerprint;
  check["apply"] = c.verdict.apply;
  check["rewrites"] = c.verdict.rewrites;
  check["default_s"] = c.verdict.default_secs;
  check["tuned_s"] = c.verdict.tuned_secs;
  check["ratio"] = c.verdict.ratio;
  check["rounds"] = c.verdict.rounds;
  check["wins"] = c.verdict.wins;
  check["error"] = c.verdict.error;
  nb::list untuned;
  for (const std::string& w : c.verdict.untuned_workloads) untuned.append(w);
  check["untuned_workloads"] = untuned;
  nb::dict programs;
  for (const auto& [w, program] : c.verdict.workload_programs) programs[w.c_str()] = program;
  check["workload_programs"] = programs;
  check["threads"] = c.verdict.threads;
  nb::list checked_threads;
  for (int t : c.verdict.checked_threads) checked_threads.append(t);
  check["checked_threads"] = checked_threads;
  auto profile = [](const std::vector<tune::InModelKernelTime>& ks) {
    nb::list out;
    for (const tune::InModelKernelTime& k : ks) {
      nb::dict kd;
      kd["workload"] = k.workload;
      kd["threads"] = k.threads;
      kd["default_s"] = k.default_secs;
      kd["tuned_s"] = k.tuned_secs;
      kd["ratio"] = k.ratio;
      out.append(kd);
    }
    return out;
  };
  check["kernels"] = profile(c.kernels);
  check["second_kernels"] = profile(c.second_kernels);
  nb::list builds;
  for (const tune::ModelCheckVerdict& b : c.builds) {
    nb::dict bd;
    bd["threads"] = b.threads;
    bd["rewrites"] = b.rewrites;
    bd["untuned_workloads"] = b.untuned_workloads.size();
    bd["workload_programs"] = b.workload_programs.size();
    bd["ratio"] = b.ratio;
    bd["wins"] = b.wins;
    bd["apply"] = b.apply;
    builds.append(bd);
  }
  check["builds"] = builds;
  check["elapsed_s"] = c.elapsed_s;
  d["model_check"] = check;
  return d;
}

std::vector<runtime::NDArray> Arrays(const std::vector<PyArray>& arrays, const Session& s) {
  std::vector<runtime::NDArray> out;
  for (size_t i = 0; i < arrays.size(); ++i)
    out.push_back(FromPython(arrays[i], i < s.inputs().size() ? "input '" + s.inputs()[i].name + "'" : "an input"));
  return out;
}

nb::list Infos(const std::vector<TensorInfo>& infos) {
  nb::list l;
  for (const TensorInfo& t : infos) {
    nb::list shape;  // a symbolic dim as its name (vm.h "Shapes")
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (d < t.dim_names.size() && !t.dim_names[d].empty()) shape.append(nb::str(t.dim_names[d].c_str()));
      else shape.append(nb::int_(t.shape[d]));
    }
    l.append(nb::make_tuple(t.name, shape, t.dtype));
  }
  return l;
}

}  // namespace
}  // namespace tessera::python

NB_MODULE(_core, m) {
  using namespace tessera::python;
  m.doc() = "Tessera's C++ compiler and runtime (use the tessera package, not this module)";
  m.attr("__version__") = TESSERA_VERSION;

  g_error = PyErr_NewExceptionWithDoc("tessera.Error", "Base class of every error Tessera raises on purpose.",
                                      PyExc_RuntimeError, nullptr);
  nb::object user_bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_user_error = PyErr_NewExceptionWithDoc("tessera.UserError",
                                           "Bad input: a missing or corrupt file, a wrong input name, dtype or shape.",
                                           user_bases.ptr(), nullptr);
  g_unsupported_error = PyErr_NewExceptionWithDoc(
      "tessera.UnsupportedError", "The model uses an operator, attribute or dtype Tessera does not support.",
      g_user_error, nullptr);
  g_internal_error = PyErr_NewExceptionWithDoc("tessera.InternalError", "A bug in Tessera (please report it).",
                                               g_error, nullptr);
  m.attr("Error") = nb::handle(g_error);
  m.attr("UserError") = nb::handle(g_user_error);
  m.attr("UnsupportedError") = nb::handle(g_unsupported_error);
  m.attr("InternalError") = nb::handle(g_internal_error);
  nb::register_exception_translator(TranslateErrors);

  m.def("set_num_threads", &tessera::runtime::SetNumThreads, "n"_a, "force"_a = false,
        "Sets the runtime's thread pool to n threads: 1 <= n <= 4 x the hardware threads, or up to 4096 with "
        "force=True; UserError otherwise.");
  m.def("num_threads", &tessera::runtime::NumThreads, "The runtime's thread pool size.");
  m.def("compile", &Compile, "model"_a, "output"_a, "target"_a, "opt_level"_a, "db"_a, "byoc"_a, "input_shapes"_a,
        "disabled_passes"_a, "input_values"_a,
        "Compiles an ONNX model (bytes of a ModelProto, or a path) into the shared library `output`; "
        "returns the build summary.");
  m.def("tune", &Tune, "model"_a, "db"_a, "seconds"_a, "trials"_a, "target"_a, "threads"_a, "batch"_a, "seed"_a,
        "timeout"_a, "check_rounds"_a, "check_threads"_a, "input_shapes"_a, "progress"_a.none(),
        "Tunes every kernel of an ONNX model, appending to the tuning database `db`; returns the report.");

  nb::class_<Session>(m, "Session", "A loaded model library: run it from any number of threads.")
      .def(nb::init<const std::string&>(), "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("path", &Session::path)
      .def_prop_ro("inputs", [](const Session& s) { return Infos(s.inputs()); },
                   "[(name, shape, dtype)] of the graph inputs (a symbolic dim: its name, a str)")
      .def_prop_ro("outputs", [](const Session& s) { return Infos(s.outputs()); },
                   "[(name, shape, dtype)] of the graph outputs")
      .def(
          "run",
          [](Session& s, const std::vector<PyArray>& arrays, bool torch) {
            std::vector<tessera::runtime::NDArray> inputs = Arrays(arrays, s);
            std::vector<tessera::runtime::NDArray> outputs;
            {
              nb::gil_scoped_release release;
              outputs = s.Run(inputs);
            }
            nb::list result;
            for (const auto& o : outputs) result.append(ToPython(o, torch));
            return result;
          },
          "inputs"_a, "torch"_a = false,
          "Runs the model on one array per input (graph order); returns the outputs as numpy arrays "
          "(torch tensors with torch=True), without copies.")
      .def(
          "benchmark",
          [](Session& s, const std::vector<PyArray>& arrays, int warmup, int repeat) {
            std::vector<tessera::runtime::NDArray> inputs = Arrays(arrays, s);
            nb::gil_scoped_release release;
            return s.Benchmark(inputs, warmup, repeat);
          },
          "inputs"_a, "warmup"_a, "repeat"_a, "Seconds of each of `repeat` runs after `warmup` runs.")
      .def(
          "profile",
          [](Session& s, const std::vector<PyArray>& arrays, int runs) {
            std::vector<tessera::runtime::NDArray> inputs = Arrays(arrays, s);
            std::vector<tessera::runtime::GraphExecutor::NodeProfile> rows;
            {
              nb::gil_scoped_release release;
              rows = s.Profile(inputs, runs);
            }
            nb::list l;
            for (const auto& r : rows) l.append(nb::make_tuple(r.node, r.kernel, r.arg_shapes, r.ms_per_run, r.serial));
            return l;
          },
          "inputs"_a, "runs"_a, "[(node, kernel, arg_shapes, ms_per_run, serial)] over `runs` runs, slowest first.");
}
