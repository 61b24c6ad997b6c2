// The pass infrastructure (ir/pass.h) on a toy module type: opt_level gating, disabled and
// required passes, options, instrument order, the timing table and the IR dump files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/ir/pass.h"
#include "tessera/support/error.h"

namespace {
/// A module that records which passes ran.
struct ToyModule {
  std::string log;
};
}  // namespace

template <>
struct tessera::ir::ModuleTraits<ToyModule> {
  static std::string Print(const ToyModule& m) { return "toy:" + m.log; }
};

namespace tessera::ir {
namespace {

Pass<ToyModule> Append(const std::string& name, int opt_level, bool required = false) {
  return Pass<ToyModule>({name, "appends its name", opt_level, required},
                         [name](const ToyModule& m, const PassContext&) { return ToyModule{m.log + name + ";"}; });
}

Sequential<ToyModule> Pipeline() {
  return Sequential<ToyModule>({Append("A", 0), Append("B", 1), Append("C", 2), Append("D", 3), Append("R", 4, true)});
}

TEST(Pass, OptLevelGatesPasses) {
  PassContext ctx;
  ctx.opt_level = 1;
  EXPECT_EQ(Pipeline()(ToyModule{}, ctx).log, "A;B;R;");
  ctx.opt_level = 3;
  EXPECT_EQ(Pipeline()(ToyModule{}, ctx).log, "A;B;C;D;R;");
}

TEST(Pass, DisabledPassesAreSkippedButRequiredOnesRun) {
  PassContext ctx;
  ctx.disabled_passes = {"A", "C", "R"};
  EXPECT_EQ(Pipeline()(ToyModule{}, ctx).log, "B;D;R;");
}

TEST(Pass, OptionsAreReadByName) {
  PassContext ctx;
  ctx.options["Fuse.max_depth"] = "8";
  ctx.options["bad"] = "eight";
  EXPECT_EQ(ctx.GetIntOption("Fuse.max_depth", 3), 8);
  EXPECT_EQ(ctx.GetIntOption("missing", 3), 3);
  EXPECT_EQ(ctx.GetOption("missing", "x"), "x");
  EXPECT_THROW(ctx.GetIntOption("bad", 0), UserError);
}

class Recorder : public PassInstrument {
 public:
  Recorder(std::string tag, std::vector<std::string>* events) : tag_(std::move(tag)), events_(events) {}
  std::string name() const override { return tag_; }
  void RunBeforePass(const PassInfo& info) override { events_->push_back(tag_ + ".before." + info.name); }
  void RunAfterPass(const PassInfo& info, const IRView& ir) override {
    const ToyModule* m = ir.as<ToyModule>();
    events_->push_back(tag_ + ".after." + info.name + "=" + (m ? m->log : "?"));
  }
  void ExitPipeline() override { events_->push_back(tag_ + ".exit"); }

 private:
  std::string tag_;
  std::vector<std::string>* events_;
};

TEST(PassInstrument, CalledInOrderAroundEachPassThatRuns) {
  std::vector<std::string> events;
  PassContext ctx;
  ctx.opt_level = 0;
  ctx.instruments = {std::make_shared<Recorder>("i1", &events), std::make_shared<Recorder>("i2", &events)};
  Sequential<ToyModule>({Append("A", 0), Append("B", 1)})(ToyModule{}, ctx);
  int step_ran = 0;
  EXPECT_TRUE(ctx.RunStep({"Step", "", 0}, [&] { step_ran++; }, [&] { return IRView::Of(step_ran, [] { return std::string("s"); }); }));
  EXPECT_FALSE(ctx.RunStep({"Skipped", "", 2}, [&] { step_ran++; }, [&] { return IRView::Of(step_ran, [] { return std::string(); }); }));
  ctx.Finish();
  EXPECT_EQ(step_ran, 1);
  std::vector<std::string> want = {"i1.before.A",     "i2.before.A", "i1.after.A=A;", "i2.after.A=A;",
                                   "i1.before.Step",  "i2.before.Step", "i1.after.Step=?", "i2.after.Step=?",
                                   "i1.exit",         "i2.exit"};
  EXPECT_EQ(events, want);
}

TEST(PassInstrument, TimingTableListsEveryPass) {
  std::ostringstream os;
  auto timing = std::make_shared<PassTimingInstrument>(&os);
  PassContext ctx;
  ctx.instruments = {timing};
  Pipeline()(ToyModule{}, ctx);
  ctx.Finish();
  ASSERT_EQ(timing->timings().size(), 5u);
  EXPECT_EQ(timing->timings()[2].first, "C");
  const std::string table = os.str();
  for (const char* name : {"pass", "A ", "B ", "C ", "D ", "R ", "total"}) EXPECT_NE(table.find(name), std::string::npos) << table;
}

TEST(PassInstrument, DumpWritesOneNumberedFilePerPass) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera_pass_test_dump";
  std::filesystem::remove_all(dir);
  PassContext ctx;
  ctx.opt_level = 1;
  ctx.instruments = {std::make_shared<DumpIRInstrument>(dir.string())};
  Pipeline()(ToyModule{}, ctx);
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"00_A.txt", "01_B.txt", "02_R.txt"}));
  std::ifstream in(dir / "01_B.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "toy:A;B;");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::ir
