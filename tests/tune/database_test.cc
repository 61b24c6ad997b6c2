// The tuning database (tune/database.h): round trip, torn last lines, corruption, the
// (workload, target, version) key, and a real kill -9 of a writer.
#include "tessera/tune/database.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/version.h"

namespace tessera::tune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHashA = "0123456789abcdef";
constexpr const char* kHashB = "fedcba9876543210";
constexpr const char* kTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3";
constexpr const char* kTrace =
    R"({"instructions":[{"attrs":[["name","C"]],"inputs":[],"kind":"get_block","outputs":["b0"]}]})";

// A trace JSON per program number: get_block of a block named "C<n>".
std::string TraceOf(int n) {
  return R"({"instructions":[{"attrs":[["name","C)" + std::to_string(n) +
         R"("]],"inputs":[],"kind":"get_block","outputs":["b0"]}]})";
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessera_db_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = (fs::path(dir_) / "tuning.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_, path_;
};

TuningRecord MakeRecord(const std::string& hash, std::vector<double> secs, std::string error = "",
                        std::map<std::string, int64_t> config = {}) {
  TuningRecord r;
  r.workload_hash = hash;
  r.target = kTarget;
  r.trace_json = kTrace;
  r.run_secs = std::move(secs);
  r.error = std::move(error);
  r.timestamp_s = 1700000000;
  r.config = std::move(config);
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void AppendRaw(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

// Every line of the file is one complete JSON object and the file ends with '\n'.
void ExpectValidJsonLines(const std::string& path) {
  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::istringstream in(text);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << path << " line " << n << ": " << line.substr(0, 100);
  }
}

TEST_F(DatabaseTest, WorkloadsPathIsASibling) {
  EXPECT_EQ(WorkloadsPathFor("/x/tuning.jsonl"), "/x/tuning.workloads.jsonl");
  EXPECT_EQ(WorkloadsPathFor("db"), "db.workloads.jsonl");
}

TEST_F(DatabaseTest, RoundTrip) {
  {
    Database db(path_);
    EXPECT_EQ(db.size(), 0u);
    db.CommitWorkload({kHashA, "fused_dense", "primfunc text\nwith \"quotes\""});
    db.CommitBatch({MakeRecord(kHashA, {1e-3, 3e-3}, "", {{"tile_x", 8}, {"vec", 4}}),
                    MakeRecord(kHashA, {}, "crash: SIGSEGV\nin kernel")});
    EXPECT_EQ(db.size(), 2u);
  }
  Database db(path_);
  ASSERT_EQ(db.size(), 2u);
  ASSERT_TRUE(db.HasWorkload(kHashA));
  EXPECT_FALSE(db.HasWorkload(kHashB));
  EXPECT_EQ(db.FindWorkload(kHashA)->name, "fused_dense");
  EXPECT_EQ(db.FindWorkload(kHashA)->func_text, "primfunc text\nwith \"quotes\"");
  const TuningRecord& r = db.AllRecords()[0];
  EXPECT_EQ(r.workload_hash, kHashA);
  EXPECT_EQ(r.target, kTarget);
  EXPECT_EQ(r.version, TESSERA_VERSION);  // filled in at commit
  EXPECT_EQ(r.trace_json, kTrace);
  EXPECT_EQ(r.run_secs, (std::vector<double>{1e-3, 3e-3}));
  EXPECT_DOUBLE_EQ(r.MeanSecs(), 2e-3);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.timestamp_s, 1700000000);
  EXPECT_EQ(r.config, (std::map<std::string, int64_t>{{"tile_x", 8}, {"vec", 4}}));
  const TuningRecord& failed = db.AllRecords()[1];
  EXPECT_EQ(failed.error, "crash: SIGSEGV\nin kernel");
  EXPECT_FALSE(failed.ok());
  EXPECT_TRUE(std::isinf(failed.MeanSecs()));

  // The trace is a nested object, not an escaped string; one line per record.
  const std::string text = ReadFile(path_);
  EXPECT_NE(text.find(R"("trace":{"instructions":[)"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  ExpectValidJsonLines(path_);
  ExpectValidJsonLines(db.workloads_path());
}

TEST_F(DatabaseTest, EmptyTraceIsNull) {
  TuningRecord r = MakeRecord(kHashA, {1.0});
  r.trace_json.clear();
  Database(path_).CommitBatch({r});
  EXPECT_NE(ReadFile(path_).find(R"("trace":null)"), std::string::npos);
  EXPECT_EQ(Database(path_).AllRecords()[0].trace_json, "");
}

TEST_F(DatabaseTest, WorkloadCommittedTwiceIsStoredOnce) {
  {
    Database db(path_);
    db.CommitWorkload({kHashA, "a", "text"});
    db.CommitWorkload({kHashA, "a", "text"});
  }
  Database db(path_);
  db.CommitWorkload({kHashA, "a", "text"});  // after reopening too
  db.CommitWorkload({kHashB, "b", "text b"});
  EXPECT_EQ(Database(path_).AllWorkloads().size(), 2u);
  const std::string text = ReadFile(db.workloads_path());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

TEST_F(DatabaseTest, KeyIsWorkloadTargetAndVersion) {
  Database db(path_);
  TuningRecord other_target = MakeRecord(kHashA, {1e-6});
  other_target.target = "llvm -mtriple=aarch64-linux-gnu";
  TuningRecord other_version = MakeRecord(kHashA, {1e-7});
  other_version.version = "0.0.1-old";
  std::vector<TuningRecord> batch = {MakeRecord(kHashA, {5e-3}), other_target, other_version, MakeRecord(kHashA, {2e-3}),
                                     MakeRecord(kHashA, {1e-9}, "wrong answer: max abs diff 3.5"),
                                     MakeRecord(kHashA, {4e-3}), MakeRecord(kHashB, {1e-8})};
  for (size_t i = 0; i < batch.size(); ++i) batch[i].trace_json = TraceOf(static_cast<int>(i));  // 7 programs
  db.CommitBatch(batch);
  auto check = [&](const Database& d) {
    EXPECT_EQ(d.size(), 7u);
    auto recs = d.Records(kHashA, kTarget);
    ASSERT_EQ(recs.size(), 4u);  // not the other target, not the other version
    for (const auto& r : recs) {
      EXPECT_EQ(r.target, kTarget);
      EXPECT_EQ(r.version, TESSERA_VERSION);
    }
    auto best = d.Best(kHashA, kTarget);
    ASSERT_TRUE(best.has_value());
    EXPECT_DOUBLE_EQ(best->MeanSecs(), 2e-3);  // not the faster failed one
    EXPECT_DOUBLE_EQ(d.Best(kHashA, "llvm -mtriple=aarch64-linux-gnu")->MeanSecs(), 1e-6);
    EXPECT_FALSE(d.Best(kHashA, "llvm").has_value());
    EXPECT_TRUE(d.Records(kHashB, "other").empty());
  };
  check(db);
  check(Database(path_));
}

TEST_F(DatabaseTest, BestRanksProgramsByTheMedianOfTheirMeasurements) {
  // Program 1 won once by a lucky run (1 ms) and measured 5 and 6 ms when confirmed: median 5 ms.
  // Program 2 measured 3 ms once, program 3 4 and 4.5 ms (median: the lower middle, 4 ms).
  auto rec = [](int program, double secs) {
    TuningRecord r = MakeRecord(kHashA, {secs});
    r.trace_json = TraceOf(program);
    return r;
  };
  Database db(path_);
  db.CommitBatch({rec(1, 1e-3), rec(2, 3e-3), rec(3, 4.5e-3), rec(1, 5e-3), rec(3, 4e-3), rec(1, 6e-3)});
  const std::vector<TuningRecord> records = db.Records(kHashA, kTarget);
  const std::vector<MeasuredProgram> programs = MeasuredPrograms(records);
  ASSERT_EQ(programs.size(), 3u);
  EXPECT_EQ(programs[0].count, 3);
  EXPECT_DOUBLE_EQ(programs[0].median_secs, 5e-3);
  EXPECT_EQ(programs[1].count, 1);
  EXPECT_DOUBLE_EQ(programs[2].median_secs, 4e-3);
  auto best = db.Best(kHashA, kTarget);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->trace_json, TraceOf(2));
  EXPECT_DOUBLE_EQ(best->MeanSecs(), 3e-3);
  // The programs in Best's order, each by its median record: 2 (3 ms), 3 (4 ms), 1 (5 ms).
  const std::vector<TuningRecord> top = db.TopPrograms(kHashA, kTarget, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].trace_json, TraceOf(2));
  EXPECT_EQ(top[1].trace_json, TraceOf(3));
  EXPECT_DOUBLE_EQ(top[1].MeanSecs(), 4e-3);
  const std::vector<TuningRecord> all = db.TopPrograms(kHashA, kTarget, 10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].trace_json, TraceOf(1));
  EXPECT_DOUBLE_EQ(all[2].MeanSecs(), 5e-3);
  EXPECT_TRUE(db.TopPrograms(kHashA, kTarget, 0).empty());
  EXPECT_TRUE(db.TopPrograms(kHashA, "llvm", 2).empty());
}

TEST_F(DatabaseTest, BestIsNulloptWhenEveryRecordFailed) {
  Database db(path_);
  db.CommitBatch({MakeRecord(kHashA, {}, "timeout"), MakeRecord(kHashA, {1.0}, "crash: SIGILL")});
  EXPECT_EQ(db.Records(kHashA, kTarget).size(), 2u);
  EXPECT_FALSE(db.Best(kHashA, kTarget).has_value());
}

TEST_F(DatabaseTest, TornLastLineLosesOnlyThatLineAndResumeAppends) {
  {
    Database db(path_);
    db.CommitBatch({MakeRecord(kHashA, {1.0}), MakeRecord(kHashA, {2.0})});
  }
  // A simulated crash in the middle of the next write: half a record line, no '\n'.
  {
    std::string line = ReadFile(path_);
    line = line.substr(0, line.find('\n') + 1);
    AppendRaw(path_, line.substr(0, line.size() / 2));
  }
  {
    Database db(path_);
    ASSERT_EQ(db.size(), 2u);  // only the torn line is lost
    db.CommitBatch({MakeRecord(kHashA, {3.0})});
  }
  ExpectValidJsonLines(path_);
  Database db(path_);
  ASSERT_EQ(db.size(), 3u);
  EXPECT_EQ(db.AllRecords()[2].run_secs, std::vector<double>{3.0});
}

TEST_F(DatabaseTest, TornWorkloadLineIsCutOffBeforeTheNextAppend) {
  Database(path_).CommitWorkload({kHashA, "a", "text"});
  AppendRaw(WorkloadsPathFor(path_), R"({"hash":"fedcba9876543210","na)");
  Database db(path_);
  EXPECT_FALSE(db.HasWorkload(kHashB));
  db.CommitWorkload({kHashB, "b", "text b"});
  ExpectValidJsonLines(db.workloads_path());
  EXPECT_TRUE(Database(path_).HasWorkload(kHashB));
}

TEST_F(DatabaseTest, CorruptLineInTheMiddleIsAUserErrorNamingFileAndLine) {
  Database(path_).CommitBatch({MakeRecord(kHashA, {1.0})});
  const std::string good_line = ReadFile(path_);
  AppendRaw(path_, "{\"workload\": garbage\n" + good_line);
  try {
    Database db(path_);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path_), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  }
}

TEST_F(DatabaseTest, LineMissingAFieldIsCorrupt) {
  AppendRaw(path_, R"({"workload":"0123456789abcdef","target":"x","version":"0.1.0","trace":null})" "\n");
  EXPECT_THROW(Database db(path_), UserError);
}

TEST_F(DatabaseTest, MalformedRecordsAreRefusedAndNothingIsWritten) {
  Database db(path_);
  TuningRecord bad_hash = MakeRecord("0123456789ABCDEF", {1.0});
  TuningRecord bad_trace = MakeRecord(kHashA, {1.0});
  bad_trace.trace_json = "not json";
  TuningRecord bad_time = MakeRecord(kHashA, {std::numeric_limits<double>::infinity()});
  TuningRecord no_target = MakeRecord(kHashA, {1.0});
  no_target.target.clear();
  for (const auto& bad : {bad_hash, bad_trace, bad_time, no_target}) {
    EXPECT_THROW(db.CommitBatch({MakeRecord(kHashA, {1.0}), bad}), UserError);
  }
  EXPECT_THROW(db.CommitWorkload({"abc", "x", "y"}), UserError);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(DatabaseTest, UnwritableFolderIsAUserError) {
  Database db((fs::path(dir_) / "missing" / "tuning.jsonl").string());
  EXPECT_THROW(db.CommitBatch({MakeRecord(kHashA, {1.0})}), UserError);
}

// A writer killed with SIGKILL at an arbitrary moment: every batch it had committed (CommitBatch
// returned) is in the file, at most the batch in flight is lost, the file loads, and appending
// after it keeps it valid.
TEST_F(DatabaseTest, KillDashNineLosesNoCommittedBatch) {
  constexpr int kPerBatch = 40;
  std::string big_trace = R"({"instructions":[)";
  for (int i = 0; i < 20; ++i) {
    big_trace += std::string(i ? "," : "") +
                 R"({"attrs":[["factors",[8,16,32]]],"inputs":["l1"],"kind":"split","outputs":["l2","l3"]})";
  }
  big_trace += "]}";
  int expected_total = 0, torn_tails = 0;
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      try {
        Database db(path_);
        for (int32_t batch = 0;; ++batch) {
          std::vector<TuningRecord> recs;
          for (int k = 0; k < kPerBatch; ++k) {
            TuningRecord r = MakeRecord(kHashA, {1e-3 * (k + 1)}, "", {{"round", round}, {"batch", batch}, {"k", k}});
            r.trace_json = big_trace;
            recs.push_back(std::move(r));
          }
          db.CommitBatch(recs);
          if (::write(fds[1], &batch, sizeof(batch)) != sizeof(batch)) ::_exit(3);
        }
      } catch (...) {
        ::_exit(2);
      }
    }
    ::close(fds[1]);
    // Let it commit a few batches, then kill it at a moment that varies per round.
    int32_t acked = -1, got = 0;
    while (acked < 4 + 3 * round && ::read(fds[0], &got, sizeof(got)) == sizeof(got)) acked = got;
    ::usleep(static_cast<useconds_t>(300 + 1700 * round));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer died on its own: " << status;
    while (::read(fds[0], &got, sizeof(got)) == sizeof(got)) acked = got;
    ::close(fds[0]);

    const std::string text = ReadFile(path_);
    if (!text.empty() && text.back() != '\n') ++torn_tails;  // killed mid-write (not guaranteed)
    Database db(path_);  // loads: at most a torn last line
    std::map<int64_t, int> per_batch;
    for (const auto& r : db.AllRecords()) {
      if (r.config.at("round") == round) ++per_batch[r.config.at("batch")];
    }
    for (int32_t b = 0; b <= acked; ++b) EXPECT_EQ(per_batch[b], kPerBatch) << "round " << round << " batch " << b;
    // Beyond the acknowledged ones: at most the one in flight (complete or partly written).
    int64_t max_batch = per_batch.empty() ? -1 : per_batch.rbegin()->first;
    EXPECT_LE(max_batch, acked + 1);
    int in_round = 0;
    for (const auto& [b, n] : per_batch) in_round += n;
    expected_total += in_round;
    EXPECT_EQ(db.size(), static_cast<size_t>(expected_total));
    EXPECT_EQ(db.Records(kHashA, kTarget).size(), db.size());
  }
  RecordProperty("torn_tails", torn_tails);
  // Resuming after the last kill keeps the file whole.
  Database db(path_);
  db.CommitBatch({MakeRecord(kHashA, {9.0})});
  ExpectValidJsonLines(path_);
  EXPECT_EQ(Database(path_).size(), static_cast<size_t>(expected_total + 1));
}

}  // namespace
}  // namespace tessera::tune
