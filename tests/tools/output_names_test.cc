// Output names as file and archive member names (tools/common/output_names.h, output_files.h):
// hostile graph output names never become paths, and every output keeps its own file / member.
#include "output_names.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "output_files.h"
#include "tessera/runtime/npy_io.h"
#include "test_util.h"

namespace tessera::cli {
namespace {

using runtime::testing::TempDir;

runtime::NDArray Scalar(float v) {
  runtime::NDArray a = runtime::NDArray::Empty({1}, DataType::Float(32));
  a.data<float>()[0] = v;
  return a;
}

TEST(OutputNames, NpyFileNamesAreNeverPaths) {
  EXPECT_EQ(NpyFileName("logits"), "logits.npy");
  EXPECT_EQ(NpyFileName("../../evil"), "_._.._evil.npy");
  EXPECT_EQ(NpyFileName("/etc/passwd"), "_etc_passwd.npy");
  EXPECT_EQ(NpyFileName(".."), "_..npy");
  EXPECT_EQ(NpyFileName(std::string("a\0b", 3)), "a_b.npy");
  EXPECT_EQ(NpyFileName("out:0"), "out_0.npy");
  EXPECT_EQ(NpyFileName(""), "output.npy");
  EXPECT_EQ(NpyFileName(std::string(5000, 'x')), std::string(200, 'x') + ".npy");
}

TEST(OutputNames, NpzMembersKeepAllButPathAndControlCharacters) {
  EXPECT_EQ(NpzMemberName("out:0"), "out:0");
  EXPECT_EQ(NpzMemberName("../../evil"), ".._.._evil");
  EXPECT_EQ(NpzMemberName("/abs/path"), "_abs_path");
  EXPECT_EQ(NpzMemberName("a\\b"), "a_b");
  EXPECT_EQ(NpzMemberName(std::string("a\0b\n\x1b[2J", 8)), "a_b__[2J");
  EXPECT_EQ(NpzMemberName("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(NpzMemberName(""), "output");
}

TEST(OutputNames, UniqueKeepsUnchangedNamesAndNumbersTheOthers) {
  const std::vector<std::string> names = {"a/b", "a_b", "a:b", "a?b"};
  EXPECT_EQ(UniqueNames(names, NpyFileName, ".npy"),
            (std::vector<std::string>{"a_b_2.npy", "a_b.npy", "a_b_3.npy", "a_b_4.npy"}));
  EXPECT_EQ(UniqueNames(names, NpzMemberName, ""), (std::vector<std::string>{"a_b_2", "a_b", "a:b", "a?b"}));
  EXPECT_EQ(Printable(std::string("x\x1b[31m\n\\", 8)), "x\\x1b[31m\\x0a\\x5c");
}

TEST(OutputFiles, HostileNamesStayInsideTheFolderAndTheArchive) {
  TempDir dir;
  const std::string out = dir.File("out");
  std::vector<runtime::NamedTensor> outputs = {
      {"../../evil", Scalar(1)}, {"/tmp/abs", Scalar(2)}, {std::string("nul\0x", 5), Scalar(3)},
      {"nul_x", Scalar(4)},      {"..", Scalar(5)},       {"plain", Scalar(6)}};
  std::ostringstream notes;
  const std::vector<std::string> paths = SaveNpyDir(out, outputs, notes);
  ASSERT_EQ(paths.size(), outputs.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(std::filesystem::path(paths[i]).parent_path(), std::filesystem::path(out)) << paths[i];
    EXPECT_EQ(runtime::LoadNpy(paths[i]).data<float>()[0], outputs[i].value.data<float>()[0]) << paths[i];
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out), std::filesystem::directory_iterator()), 6);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1)
      << "a file was written outside --output-dir";
  EXPECT_NE(notes.str().find("'../../evil' is written as '_._.._evil.npy'"), std::string::npos) << notes.str();
  EXPECT_NE(notes.str().find("'nul\\x00x'"), std::string::npos) << notes.str();
  EXPECT_EQ(notes.str().find("'plain'"), std::string::npos) << notes.str();

  if (!runtime::NpzSupported()) return;
  const std::string npz = dir.File("out.npz");
  std::ostringstream npz_notes;
  EXPECT_EQ(SaveNpzOutputs(npz, outputs, npz_notes), outputs.size());
  const auto back = runtime::LoadNpz(npz);
  std::vector<std::string> members;
  for (const auto& [name, a] : back) members.push_back(name);
  EXPECT_EQ(members, (std::vector<std::string>{"..", ".._.._evil", "_tmp_abs", "nul_x", "nul_x_2", "plain"}));
  EXPECT_EQ(back.at("nul_x").data<float>()[0], 4);  // unchanged names keep theirs
  EXPECT_EQ(back.at("nul_x_2").data<float>()[0], 3);
  // The runtime refuses a member name that is a path, whoever calls it.
  EXPECT_THROW_WITH(runtime::SaveNpz(npz, {{"../x", Scalar(1)}}), UserError, "'../x'", "member name");
}

}  // namespace
}  // namespace tessera::cli
