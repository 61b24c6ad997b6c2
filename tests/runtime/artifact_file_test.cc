// ReadArtifactFile / ParseArtifactImage (artifact_file.h) and the content hash (artifact_info.h):
// a library is read from its file without loading it, in any byte order and for any machine, and
// a library whose data changed after compilation is refused.
#include "tessera/runtime/artifact_file.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "fake_elf.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/param_io.h"
#include "tessera/support/content_hash.h"
#include "tessera/support/version.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

using testing::BuildFakeElf;
using testing::FakeElf;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::U64Bytes;
using testing::WriteFile;

TEST(ArtifactFile, ReadsTheFixtureLibraryWithoutLoadingIt) {
  const ArtifactFile a = ReadArtifactFile(TESSERA_FIXTURE_MODEL);
  EXPECT_EQ(a.arch, HostArch());
  EXPECT_EQ(ParseArtifactInfo(a.target_info, "fixture").version, TESSERA_VERSION);
  const GraphPlan plan = ParseGraphPlan(a.graph_json, "fixture");
  ASSERT_EQ(plan.inputs.size(), 1u);
  EXPECT_EQ(plan.inputs[0].name, "x");
  EXPECT_EQ(plan.nodes.size(), 2u);
  const auto params = LoadParams(a.params_blob.data(), a.params_blob.size());
  EXPECT_EQ(params.size(), 2u);
  EXPECT_TRUE(params.count("bias"));
  ASSERT_TRUE(a.has_content_hash);
  EXPECT_EQ(a.content_hash, ArtifactContentHash(a.graph_json, a.params_blob));
  // The same bytes as the loaded library's symbols.
  const Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  EXPECT_EQ(a.graph_json, m.GraphJson());
  EXPECT_EQ(a.params_blob, m.ParamsBlob());
}

TEST(ArtifactFile, ReadingRunsNoConstructorButLoadingDoes) {
  TempDir dir;
  const std::string marker = dir.File("constructor-ran");
  ASSERT_EQ(setenv("TESSERA_TEST_CONSTRUCTOR_MARKER", marker.c_str(), 1), 0);
  const ArtifactFile a = ReadArtifactFile(TESSERA_FIXTURE_CONSTRUCTOR);
  EXPECT_NE(a.graph_json.find("tessera-graph"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "reading the library ran its constructor";
  // The fixture's constructor works: dlopen runs it.
  void* handle = dlopen(TESSERA_FIXTURE_CONSTRUCTOR, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_TRUE(std::filesystem::exists(marker));
  dlclose(handle);
  unsetenv("TESSERA_TEST_CONSTRUCTOR_MARKER");
}

FakeElf FakeModel(bool little, uint16_t machine) {
  FakeElf spec;
  spec.little_endian = little;
  spec.machine = machine;
  const std::string blob = SaveParams({});
  const std::string json = "{\"format\": \"tessera-graph\"}";
  spec.symbols[kGraphJsonSymbol] = json + '\0';
  spec.symbols[kTargetInfoSymbol] = std::string("tessera 9.9\ntriple aarch64-unknown-linux-gnu\nfeatures +neon\n") + '\0';
  spec.symbols[kParamsBlobSymbol] = blob;
  spec.symbols[kParamsSizeSymbol] = U64Bytes(blob.size(), little);
  spec.symbols[kContentHashSymbol] = U64Bytes(ArtifactContentHash(json, blob), little);
  return spec;
}

TEST(ArtifactFile, ForeignMachinesAndByteOrdersReadTheSame) {
  for (bool little : {true, false}) {
    for (uint16_t machine : {uint16_t{183}, uint16_t{62}, uint16_t{243}, uint16_t{2}}) {
      const FakeElf spec = FakeModel(little, machine);
      const ArtifactFile a = ParseArtifactImage(BuildFakeElf(spec), "fake.so");
      EXPECT_EQ(a.arch, ElfMachineArch(machine));
      EXPECT_EQ(a.graph_json, "{\"format\": \"tessera-graph\"}");
      EXPECT_EQ(ParseArtifactInfo(a.target_info, "fake.so").triple, "aarch64-unknown-linux-gnu");
      EXPECT_EQ(a.params_blob, SaveParams({}));
      ASSERT_TRUE(a.has_content_hash);
      EXPECT_NO_THROW(CheckContentHash(a.content_hash, a.graph_json, a.params_blob, "fake.so"));
    }
  }
  EXPECT_EQ(ElfMachineArch(183), "aarch64");
}

TEST(ArtifactFile, MissingAndInconsistentSymbolsAreClearErrors) {
  FakeElf spec = FakeModel(true, 183);
  spec.symbols.erase(kGraphJsonSymbol);
  EXPECT_THROW_WITH(ParseArtifactImage(BuildFakeElf(spec), "m.so"), UserError, "m.so", "not a Tessera model");
  spec = FakeModel(true, 183);
  spec.symbols.erase(kTargetInfoSymbol);
  EXPECT_THROW_WITH(ParseArtifactImage(BuildFakeElf(spec), "m.so"), UserError, "no target record");
  spec = FakeModel(true, 183);
  spec.symbols.erase(kParamsSizeSymbol);
  EXPECT_THROW_WITH(ParseArtifactImage(BuildFakeElf(spec), "m.so"), UserError, kParamsBlobSymbol, "but not");
  spec = FakeModel(true, 183);
  spec.symbols[kParamsSizeSymbol] = U64Bytes(1 << 20, true);
  EXPECT_THROW_WITH(ParseArtifactImage(BuildFakeElf(spec), "m.so"), UserError, "corrupt", kParamsSizeSymbol);
  spec = FakeModel(true, 183);
  spec.symbols[kGraphJsonSymbol] = "{\"no\": \"nul\"}";
  EXPECT_THROW_WITH(ParseArtifactImage(BuildFakeElf(spec), "m.so"), UserError, "not NUL-terminated");
  spec = FakeModel(true, 183);
  spec.symbols.erase(kContentHashSymbol);
  EXPECT_FALSE(ParseArtifactImage(BuildFakeElf(spec), "m.so").has_content_hash);
  EXPECT_THROW_WITH(ParseArtifactImage("not an elf file at all, but long enough for a header......", "m.so"),
                    UserError, "m.so", "not a shared library");
  std::string elf32 = BuildFakeElf(FakeModel(true, 183));
  elf32[4] = 1;  // ELFCLASS32
  EXPECT_THROW_WITH(ParseArtifactImage(elf32, "m.so"), UserError, "32-bit");
}

TEST(ArtifactFile, EveryTruncationAndManyCorruptionsAreUserErrors) {
  const std::string image = ReadFileBytes(TESSERA_FIXTURE_MODEL);
  for (size_t n = 0; n < image.size(); n += 97) {
    try {
      ParseArtifactImage(std::string_view(image).substr(0, n), "cut.so");
    } catch (const UserError&) {
    }
  }
  // The section headers sit at the end of the file: a cut names them.
  EXPECT_THROW_WITH(ParseArtifactImage(std::string_view(image).substr(0, image.size() - 1), "cut.so"), UserError,
                    "truncated or corrupt", "section header table");
  const std::string fake = BuildFakeElf(FakeModel(false, 183));
  std::mt19937 rng(15);
  for (int i = 0; i < 20000; ++i) {
    std::string bad = fake;
    for (int k = 0; k < 1 + i % 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      ParseArtifactImage(bad, "bad.so");
    } catch (const UserError&) {
    }
  }
}

TEST(ArtifactFile, NotARegularFileIsRefused) {
  TempDir dir;
  EXPECT_THROW_WITH(ReadArtifactFile(dir.path()), UserError, "a directory", "not a regular file");
  EXPECT_THROW_WITH(ReadArtifactFile("/dev/zero"), UserError, "character device");
  EXPECT_THROW_WITH(ReadArtifactFile(dir.File("missing.so")), UserError, "missing.so");
}

TEST(ContentHash, ChangedDataIsRefusedByTheLoader) {
  const std::string image = ReadFileBytes(TESSERA_FIXTURE_MODEL);
  TempDir dir;
  // A flipped bit in the params (the blob starts with its magic) and one in the graph JSON.
  for (const char* needle : {"TSRPARAM", "\"relu_1\""}) {
    const size_t at = image.find(needle);
    ASSERT_NE(at, std::string::npos) << needle;
    std::string bad = image;
    bad[at + 5] ^= 1;
    const std::string path = dir.File("flipped.so");
    std::filesystem::remove(path);
    WriteFile(path, bad);
    EXPECT_THROW_WITH(Module::LoadFromFile(path), UserError, "flipped.so", "is corrupt", "content hash");
    const ArtifactFile a = ReadArtifactFile(path);
    EXPECT_THROW_WITH(CheckContentHash(a.content_hash, a.graph_json, a.params_blob, path), UserError, "changed");
  }
}

TEST(ContentHash, IsStableAndSensitive) {
  // The recorded value is part of the artifact format: it must not change between versions.
  EXPECT_EQ(ContentHash64("", 0), ContentHash64(std::string_view()));
  const uint64_t h = ContentHash64(std::string_view("tessera"));
  EXPECT_EQ(h, 0x60b16e739ee254d9ull) << "the hash function changed: every artifact would be refused";
  EXPECT_EQ(ContentHash64(std::string_view()), 0x61d90153b4431c6dull);
  EXPECT_NE(h, ContentHash64(std::string_view("tesserb")));
  EXPECT_NE(h, ContentHash64(std::string_view("tessera\0", 8)));
  EXPECT_NE(ContentHash64(std::string_view("ab"), ContentHash64(std::string_view("c"))),
            ContentHash64(std::string_view("c"), ContentHash64(std::string_view("ab"))));
  // Every single-bit flip of a 100-byte input changes it.
  std::string s(100, 'x');
  const uint64_t base = ContentHash64(s);
  for (size_t i = 0; i < s.size(); ++i)
    for (int b = 0; b < 8; ++b) {
      std::string t = s;
      t[i] ^= static_cast<char>(1 << b);
      EXPECT_NE(ContentHash64(t), base) << i << ":" << b;
    }
}

}  // namespace
}  // namespace tessera::runtime
