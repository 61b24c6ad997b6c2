#include <gtest/gtest.h>

#include "tessera/graph/attrs.h"
#include "tessera/support/error.h"

namespace tessera::graph {
namespace {

TEST(Attrs, TypedGettersAndOrder) {
  Attrs a{{"strides", std::vector<int64_t>{2, 2}}, {"groups", int64_t{4}}, {"layout", std::string("NCHW")}};
  a.Set("epsilon", 1e-5).Set("scales", std::vector<double>{0.5, 2.0});
  EXPECT_EQ(a.GetInts("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.GetInt("groups"), 4);
  EXPECT_EQ(a.GetString("layout"), "NCHW");
  EXPECT_DOUBLE_EQ(a.GetDouble("epsilon"), 1e-5);
  EXPECT_DOUBLE_EQ(a.GetDouble("groups"), 4.0);  // int converts to double
  EXPECT_EQ(a.GetInt("missing", 7), 7);
  EXPECT_EQ(a.str(), "strides=[2, 2], groups=4, layout=\"NCHW\", epsilon=1e-05f, scales=[0.5f, 2f]");
  a.Set("groups", 1);  // replaces in place, keeps the position
  EXPECT_EQ(a.items()[1].first, "groups");
  EXPECT_EQ(a.GetInt("groups"), 1);
}

TEST(Attrs, MissingOrWrongKindThrowsInternalError) {
  Attrs a{{"axis", int64_t{1}}};
  try {
    a.GetInts("axes");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("'axes' is missing"), std::string::npos) << e.what();
  }
  try {
    a.GetString("axis");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("'axis' is a int, expected string"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::graph
