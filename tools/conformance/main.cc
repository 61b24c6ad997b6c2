// tessera_conformance: runs the ONNX backend conformance cases through Tessera
// (frontend::FromONNX -> driver::BuildJIT -> runtime::MakeExecutor: a graph or the VM), each case in its own
// child process, and reports pass / fail / unsupported / crash per case and per op type.
// See --help, and conformance.h for what each status means.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "case_info.h"
#include "case_runner.h"
#include "compare.h"
#include "conformance.h"
#include "process_pool.h"
#include "report.h"
#include "tessera/support/error.h"

#ifndef TESSERA_CONFORMANCE_DEFAULT_SUITE
#define TESSERA_CONFORMANCE_DEFAULT_SUITE "../shared/onnx-tests"
#endif

namespace tessera::conformance {
namespace {

struct Options {
  std::string suite = TESSERA_CONFORMANCE_DEFAULT_SUITE;
  int jobs = 0;  // 0: the number of cores
  std::string filter;
  double timeout_s = 20;
  std::string json;
  std::string baseline;
  bool check_baseline = false;
  std::string write_baseline;
  std::string coverage_md;
  int threads = 0;  // 0: cores / jobs
  int opt_level = 3;
  size_t memory_limit_mb = 8192;
  int verbosity = 1;  // 0 quiet, 1 failures and crashes, 2 every case
  std::string selftest_crash;  // hidden: cases matching this regex raise SIGSEGV in the child
};

int NumCores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void PrintHelp(const Tolerance& tol) {
  std::cout <<
      "usage: tessera_conformance [options]\n"
      "\n"
      "Runs the ONNX backend conformance cases (<suite>/{node,pytorch-converted,pytorch-operator,simple}/<case>/)\n"
      "through Tessera: import model.onnx, build with the LLVM JIT, feed test_data_set_0/input_<i>.pb in\n"
      "graph-input order (initializer-backed inputs skipped), run, and compare every output with output_<i>.pb.\n"
      "Each case runs in its own child process with a time limit, so a crash never stops the run.\n"
      "\n"
      "Tolerance: " << DescribeTolerance(tol) << "; shapes and dtypes must match.\n"
      "A case whose model uses a random operator (RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial)\n"
      "is compared by support: dtypes and shapes, every value finite, within the reference's [min, max] and\n"
      "integral where the reference is (its values were drawn by NumPy's generator).\n"
      "\n"
      "Status per case:\n"
      "  pass         every output matches\n"
      "  fail         wrong numbers, wrong shape or dtype, missing output (first mismatch recorded)\n"
      "  unsupported  UnsupportedError / UserError at import or build (Tessera's message recorded),\n"
      "               or sequence / optional / map values\n"
      "  crash        a signal, an internal error, or the time limit\n"
      "\n"
      "Options:\n"
      "  --suite DIR            the test data root (default " TESSERA_CONFORMANCE_DEFAULT_SUITE ")\n"
      "  -j, --jobs N           cases run at once, one child process each (default: the number of cores, "
   << NumCores() << ")\n"
      "  --filter REGEX         only cases whose name (e.g. test_abs) or suite/name (node/test_abs) matches\n"
      "  --timeout SECONDS      time limit per case (default 20); a case past it is killed: crash\n"
      "  --threads N            executor threads per case (default: cores / jobs, at least 1)\n"
      "  --opt-level N          driver opt level (default 3; 0 disables fusion)\n"
      "  --memory-limit-mb N    address-space limit of each child (default 8192; 0: none)\n"
      "  --json FILE            write every case (name, suite, status, op types, message, seconds) as JSON\n"
      "  --baseline FILE        compare with a baseline (sorted names of cases that passed before)\n"
      "  --check-baseline       exit 1 and list the baseline cases that no longer pass (the ratchet)\n"
      "  --write-baseline FILE  write the sorted names of the passing cases (with a header)\n"
      "  --coverage-md FILE     write the op type x opset x status table (docs/onnx_coverage.md)\n"
      "  -v, --verbose          print every case; default prints failures and crashes\n"
      "  -q, --quiet            print only the summary\n"
      "  -h, --help             this text\n"
      "\n"
      "Output: per-op-type table, the op types with the most failures + crashes, and as the last line\n"
      "  conformance: P passed, F failed, U unsupported, C crashed of N\n"
      "Exit status: 0; 1 with --check-baseline when a baseline case no longer passes; 2 on a usage error.\n";
}

[[noreturn]] void UsageError(const std::string& msg) {
  std::cerr << "tessera_conformance: " << msg << " (see --help)\n";
  std::exit(2);
}

Options ParseArgs(int argc, char** argv, const Tolerance& tol) {
  Options o;
  auto value = [&](int& i, const std::string& flag) -> std::string {
    if (i + 1 >= argc) UsageError(flag + " needs a value");
    return argv[++i];
  };
  auto number = [&](const std::string& flag, const std::string& v, double lo) -> double {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(d >= lo)) UsageError(flag + " expects a number >= " + std::to_string(lo) + ", got '" + v + "'");
    return d;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      PrintHelp(tol);
      std::exit(0);
    } else if (a == "--suite") {
      o.suite = value(i, a);
    } else if (a == "-j" || a == "--jobs") {
      o.jobs = static_cast<int>(number(a, value(i, a), 1));
    } else if (a.rfind("-j", 0) == 0 && a.size() > 2 && a[2] != '-') {
      o.jobs = static_cast<int>(number("-j", a.substr(2), 1));
    } else if (a == "--filter") {
      o.filter = value(i, a);
    } else if (a == "--timeout") {
      o.timeout_s = number(a, value(i, a), 0);
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(a, value(i, a), 1));
    } else if (a == "--opt-level") {
      o.opt_level = static_cast<int>(number(a, value(i, a), 0));
    } else if (a == "--memory-limit-mb") {
      o.memory_limit_mb = static_cast<size_t>(number(a, value(i, a), 0));
    } else if (a == "--json") {
      o.json = value(i, a);
    } else if (a == "--baseline") {
      o.baseline = value(i, a);
    } else if (a == "--check-baseline") {
      o.check_baseline = true;
    } else if (a == "--coverage-md") {
      o.coverage_md = value(i, a);
    } else if (a == "--write-baseline") {
      o.write_baseline = value(i, a);
    } else if (a == "-v" || a == "--verbose") {
      o.verbosity = 2;
    } else if (a == "-q" || a == "--quiet") {
      o.verbosity = 0;
    } else if (a == "--selftest-crash") {
      o.selftest_crash = value(i, a);
    } else {
      UsageError("unknown argument '" + a + "'");
    }
  }
  if (o.check_baseline && o.baseline.empty()) UsageError("--check-baseline needs --baseline FILE");
  // Messages quote case paths: show them without "main/../shared" detours.
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(o.suite, ec);
  if (!ec) o.suite = canonical.string();
  if (o.jobs <= 0) o.jobs = NumCores();
  if (o.threads <= 0) o.threads = std::max(1, NumCores() / o.jobs);
  return o;
}

std::regex CompileRegex(const std::string& flag, const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    UsageError(flag + " '" + pattern + "' is not a valid regular expression: " + e.what());
  }
}

bool Matches(const std::regex& re, const CaseInfo& c) {
  return std::regex_search(c.name, re) || std::regex_search(c.suite + "/" + c.name, re);
}

std::string FirstLine(const std::string& s, size_t max_chars = 300) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > max_chars) line = line.substr(0, max_chars) + "...";
  return line;
}

int Main(int argc, char** argv) {
  const Tolerance tol;
  const Options o = ParseArgs(argc, argv, tol);

  std::vector<CaseInfo> cases = DiscoverCases(o.suite);
  if (!o.filter.empty()) {
    std::regex re = CompileRegex("--filter", o.filter);
    std::vector<CaseInfo> kept;
    for (auto& c : cases) {
      if (Matches(re, c)) kept.push_back(std::move(c));
    }
    cases = std::move(kept);
  }
  std::optional<std::regex> crash_re;
  if (!o.selftest_crash.empty()) crash_re = CompileRegex("--selftest-crash", o.selftest_crash);

  std::set<std::string> baseline;
  if (!o.baseline.empty()) baseline = ReadBaseline(o.baseline);

  CaseOptions case_options;
  case_options.tolerance = tol;
  case_options.num_threads = o.threads;
  case_options.opt_level = o.opt_level;

  std::cout << "tessera_conformance: " << cases.size() << " cases from " << o.suite << ", " << o.jobs
            << " jobs, time limit " << o.timeout_s << " s per case\n"
            << "tolerance: " << DescribeTolerance(tol) << "\n";
  std::cout.flush();

  // Cases known to be unsupported before running anything do not take a child process.
  std::vector<size_t> to_run;
  std::vector<CaseResult> results(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].unsupported_reason.empty()) {
      to_run.push_back(i);
    } else {
      results[i].status = Status::kUnsupported;
      results[i].message = cases[i].unsupported_reason;
    }
  }

  size_t done = 0;
  auto report = [&](size_t i) {
    ++done;
    const CaseResult& r = results[i];
    bool show = o.verbosity >= 2 || (o.verbosity == 1 && (r.status == Status::kFail || r.status == Status::kCrash));
    if (!show) return;
    char head[64];
    std::snprintf(head, sizeof(head), "[%zu/%zu] %-11s ", done, cases.size(), StatusName(r.status));
    std::cout << head << cases[i].name;
    if (!r.message.empty()) std::cout << ": " << FirstLine(r.message);
    std::cout << "\n";
    std::cout.flush();
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].unsupported_reason.empty()) report(i);
  }

  PoolOptions pool;
  pool.jobs = o.jobs;
  pool.timeout_s = o.timeout_s;
  pool.memory_limit_mb = o.memory_limit_mb;
  auto t0 = std::chrono::steady_clock::now();
  RunInChildren(
      to_run.size(), pool,
      [&](size_t k) -> CaseResult {
        const CaseInfo& c = cases[to_run[k]];
        if (crash_re && Matches(*crash_re, c)) raise(SIGSEGV);
        return RunCase(c, case_options);
      },
      [&](size_t k, const CaseResult& r) {
        results[to_run[k]] = r;
        report(to_run[k]);
      });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (!o.json.empty()) WriteJsonReport(o.json, o.suite, tol, cases, results);
  if (!o.write_baseline.empty()) WriteBaseline(o.write_baseline, cases, results);
  if (!o.coverage_md.empty()) WriteCoverageMarkdown(o.coverage_md, cases, results);

  PrintOpTypeTable(std::cout, cases, results);

  int exit_code = 0;
  if (!o.baseline.empty()) {
    std::set<std::string> selected;
    for (const auto& c : cases) selected.insert(c.name);
    std::optional<std::regex> filter_re;
    if (!o.filter.empty()) filter_re = CompileRegex("--filter", o.filter);
    std::vector<std::string> regressions;
    for (const auto& name : baseline) {
      if (selected.count(name)) continue;
      if (filter_re && !std::regex_search(name, *filter_re)) continue;  // filtered out: not checked
      regressions.push_back(name + ": not found in the suite");
    }
    int newly = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      bool in_baseline = baseline.count(cases[i].name) > 0;
      if (in_baseline && results[i].status != Status::kPass) {
        regressions.push_back(cases[i].name + ": " + StatusName(results[i].status) + ": " + FirstLine(results[i].message));
      }
      if (!in_baseline && results[i].status == Status::kPass) ++newly;
    }
    std::cout << "\nbaseline " << o.baseline << ": " << baseline.size() << " cases, " << regressions.size()
              << " no longer pass, " << newly << " pass and are not in it"
              << (newly ? " (add them: --write-baseline)" : "") << "\n";
    for (const auto& r : regressions) std::cout << "  REGRESSION " << r << "\n";
    if (o.check_baseline && !regressions.empty()) exit_code = 1;
  }

  char timing[160];
  std::snprintf(timing, sizeof(timing), "\nran %zu cases in %.1f s (%d jobs, %g s limit per case)\n", cases.size(),
                seconds, o.jobs, o.timeout_s);
  std::cout << timing << "tolerance: " << DescribeTolerance(tol) << "; shapes and dtypes must match\n";
  std::cout << ConformanceLine(Total(results)) << std::endl;
  return exit_code;
}

}  // namespace
}  // namespace tessera::conformance

int main(int argc, char** argv) {
  try {
    return tessera::conformance::Main(argc, argv);
  } catch (const tessera::Error& e) {
    std::cerr << "tessera_conformance: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessera_conformance: unexpected error: " << e.what() << "\n";
    return 2;
  }
}
