#include "tessera/runtime/artifact_info.h"

#include <gtest/gtest.h>

#include "tessera/support/error.h"
#include "tessera/support/version.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

ArtifactInfo HostInfo(std::vector<std::string> features = {}) {
  return {TESSERA_VERSION, HostArch() + "-pc-linux-gnu", std::move(features)};
}

TEST(ArtifactInfo, FormatAndParseRoundTrip) {
  ArtifactInfo info{"1.2.3", "x86_64-pc-linux-gnu", {"avx2", "fma"}};
  const std::string text = FormatArtifactInfo(info);
  EXPECT_EQ(text, "tessera 1.2.3\ntriple x86_64-pc-linux-gnu\nfeatures +avx2,+fma\n");
  ArtifactInfo back = ParseArtifactInfo(text, "m.so");
  EXPECT_EQ(back.version, "1.2.3");
  EXPECT_EQ(back.triple, "x86_64-pc-linux-gnu");
  EXPECT_EQ(back.features, (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_TRUE(ParseArtifactInfo("tessera 1\ntriple t\nfeatures \n", "m.so").features.empty());
}

TEST(ArtifactInfo, MalformedRecordsAreUserErrors) {
  EXPECT_THROW_WITH(ParseArtifactInfo("", "m.so"), UserError, "m.so", "malformed target record", "'tessera '");
  EXPECT_THROW_WITH(ParseArtifactInfo("tessera 1\nfeatures +a\n", "m.so"), UserError, "line 2", "'triple '");
  EXPECT_THROW_WITH(ParseArtifactInfo("tessera 1\ntriple t\nfeatures avx2\n", "m.so"), UserError,
                    "malformed feature 'avx2'");
}

TEST(ArtifactInfo, TheHostRunsWhatItHas) {
  std::vector<std::string> have;
  for (const std::string& f : CheckedFeatures())
    if (HostHasFeature(f)) have.push_back(f);
  EXPECT_NO_THROW(CheckRunsHere(HostInfo(have), "m.so"));
  EXPECT_FALSE(HostHasFeature("not-a-feature"));
}

TEST(ArtifactInfo, MissingFeaturesOtherArchitecturesAndVersionsAreRefused) {
  std::vector<std::string> lacking;
  for (const std::string& f : CheckedFeatures())
    if (!HostHasFeature(f)) lacking.push_back(f);
  ASSERT_FALSE(lacking.empty());  // no machine has both AVX-512 and NEON
  EXPECT_THROW_WITH(CheckRunsHere(HostInfo({lacking[0]}), "m.so"), UserError, "m.so", "this machine lacks",
                    lacking[0].c_str(), "--target native");
  EXPECT_THROW_WITH(CheckRunsHere({TESSERA_VERSION, "sparc64-unknown-linux-gnu", {}}, "m.so"), UserError,
                    "compiled for sparc64-unknown-linux-gnu", "--target native");
  EXPECT_THROW_WITH(CheckRunsHere({"0.0.0-other", HostInfo().triple, {}}, "m.so"), UserError,
                    "built by Tessera 0.0.0-other", "this runtime is Tessera " TESSERA_VERSION);
}

}  // namespace
}  // namespace tessera::runtime
