// topi::KnobContext (topi/schedule_knobs.h): the configured value, the lookup for knobs the
// configuration does not set (how a build reads the tuner's graph rewrite decisions), and the
// fallback whenever the asked value is no candidate.
#include "tessera/topi/schedule_knobs.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace tessera::topi {
namespace {

TEST(KnobContext, WithoutAContextAKnobIsItsFallback) { EXPECT_EQ(Knob(nullptr, "k", {1, 2, 4}, 2), 2); }

TEST(KnobContext, ConfiguredValueThenLookupThenFallback) {
  std::vector<std::string> asked;
  KnobContext ctx({{"set", 4}}, [&](const std::string& name) -> std::optional<int64_t> {
    asked.push_back(name);
    if (name == "looked_up") return 0;
    if (name == "not_a_candidate") return 3;
    return std::nullopt;
  });
  EXPECT_EQ(ctx.Define("set", {0, 2, 4}, 2), 4);
  EXPECT_EQ(ctx.Define("looked_up", {0, 2, 4}, 2), 0);
  EXPECT_EQ(ctx.Define("not_a_candidate", {0, 2, 4}, 2), 2);
  EXPECT_EQ(ctx.Define("unknown", {0, 4}, 2), 2);
  // The configuration wins without asking the lookup; a knob asked again keeps its first value.
  EXPECT_EQ(asked, (std::vector<std::string>{"looked_up", "not_a_candidate", "unknown"}));
  EXPECT_EQ(ctx.Define("looked_up", {0, 2, 4}, 4), 0);
  EXPECT_EQ(asked.size(), 3u);
  ASSERT_EQ(ctx.space().size(), 4u);
  EXPECT_EQ(ctx.space()[3].candidates, (std::vector<int64_t>{0, 2, 4}));  // the fallback joins the candidates
  EXPECT_EQ(ctx.used(), (KnobConfig{{"set", 4}, {"looked_up", 0}, {"not_a_candidate", 2}, {"unknown", 2}}));
}

}  // namespace
}  // namespace tessera::topi
