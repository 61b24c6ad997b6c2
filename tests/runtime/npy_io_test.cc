#include "tessera/runtime/npy_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "test_util.h"

namespace tessera::runtime {
namespace {

using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFile;

bool HaveNumpy() {
  static const bool have = std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return have;
}

// Runs a python3 script (numpy imported as np); true when it exits with 0.
bool RunPython(const TempDir& dir, const std::string& script) {
  std::string file = dir.File("script.py");
  WriteFile(file, "import numpy as np, sys\n" + script);
  return std::system(("python3 " + file).c_str()) == 0;
}

// The arrays the numpy comparisons use: element k of every array is k (mod the type).
struct Sample {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::string numpy;  // the same array in numpy
};

std::vector<Sample> Samples() {
  return {
      {"f32", DataType::Float(32), {2, 3}, "np.arange(6, dtype='<f4').reshape(2, 3)"},
      {"f64", DataType::Float(64), {4}, "np.arange(4, dtype='<f8')"},
      {"f16", DataType::Float(16), {3, 1}, "np.arange(3, dtype='<f2').reshape(3, 1)"},
      {"i8", DataType::Int(8), {1, 2, 2, 2}, "np.arange(8, dtype='i1').reshape(1, 2, 2, 2)"},
      {"i16", DataType::Int(16), {5}, "np.arange(5, dtype='<i2')"},
      {"i32", DataType::Int(32), {}, "np.array(0, dtype='<i4')"},
      {"i64", DataType::Int(64), {0, 3}, "np.zeros((0, 3), dtype='<i8')"},
      {"u8", DataType::UInt(8), {7}, "np.arange(7, dtype='u1')"},
      {"u16", DataType::UInt(16), {2, 2}, "np.arange(4, dtype='<u2').reshape(2, 2)"},
      {"u32", DataType::UInt(32), {3}, "np.arange(3, dtype='<u4')"},
      {"u64", DataType::UInt(64), {2}, "np.arange(2, dtype='<u8')"},
      {"b", DataType::Bool(), {2, 3}, "(np.arange(6) % 2 == 1).reshape(2, 3)"},
  };
}

uint16_t HalfOf(int k) {  // exact for the small integers used here
  if (k == 0) return 0;
  int e = 0;
  while ((1 << (e + 1)) <= k) ++e;
  return static_cast<uint16_t>(((e + 15) << 10) | (((k << 10) >> e) & 0x3ff));
}

NDArray Make(const Sample& s) {
  NDArray a = NDArray::Empty(s.shape, s.dtype);
  int64_t n = a.NumElements();
  auto* p = static_cast<unsigned char*>(a.raw_data());
  for (int64_t k = 0; k < n; ++k) {
    if (s.dtype == DataType::Float(32)) reinterpret_cast<float*>(p)[k] = static_cast<float>(k);
    else if (s.dtype == DataType::Float(64)) reinterpret_cast<double*>(p)[k] = static_cast<double>(k);
    else if (s.dtype == DataType::Float(16)) reinterpret_cast<uint16_t*>(p)[k] = HalfOf(static_cast<int>(k));
    else if (s.dtype.is_bool()) reinterpret_cast<bool*>(p)[k] = k % 2 == 1;
    else {
      uint64_t v = static_cast<uint64_t>(k);
      std::memcpy(p + k * s.dtype.bytes(), &v, s.dtype.bytes());  // little-endian
    }
  }
  return a;
}

bool SameArray(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.NBytes()) == 0;
}

TEST(Npy, HeaderMatchesNumpyFormat) {
  NDArray a = NDArray::Empty({2, 3}, DataType::Float(32));
  std::string bytes = SerializeNpy(a);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8), 118);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes[126], ' ');
  EXPECT_NE(SerializeNpy(NDArray::Empty({5}, DataType::Bool())).find("'|b1'"), std::string::npos);
  EXPECT_NE(SerializeNpy(NDArray::Empty({5}, DataType::Int(8))).find("(5,)"), std::string::npos);
  EXPECT_NE(SerializeNpy(NDArray::Empty({}, DataType::Int(8))).find("'shape': ()"), std::string::npos);
}

TEST(Npy, RoundTripEveryDtype) {
  TempDir dir;
  for (const Sample& s : Samples()) {
    NDArray a = Make(s);
    std::string path = dir.File(s.name + ".npy");
    SaveNpy(path, a);
    NDArray b = LoadNpy(path);
    EXPECT_TRUE(SameArray(a, b)) << s.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % 64, 0u);
  }
}

TEST(Npy, VersionTwoHeaderAndFortranVectors) {
  // Handcrafted v2.0 header with a 1-d array marked fortran_order (same layout as C).
  std::string dict = "{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }";
  std::string header = dict + std::string(64 - (12 + dict.size() + 1) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  uint32_t len = static_cast<uint32_t>(header.size());
  bytes.append(reinterpret_cast<const char*>(&len), 4);
  bytes += header;
  int32_t data[3] = {7, -8, 9};
  bytes.append(reinterpret_cast<const char*>(data), sizeof(data));
  NDArray a = ParseNpy(bytes.data(), bytes.size(), "v2");
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(a.data<int32_t>()[1], -8);
}

std::string NpyWithHeader(const std::string& dict, const std::string& payload) {
  std::string header = dict + std::string(64 - (10 + dict.size() + 1) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + payload;
}

TEST(Npy, BadFilesAreClearErrors) {
  auto parse = [](const std::string& b) { return ParseNpy(b.data(), b.size(), "t.npy"); };
  std::string payload(24, '\0');
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", payload)),
                    UserError, "Fortran", "ascontiguousarray");
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", payload)),
                    UserError, "big-endian");
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", payload)),
                    UnsupportedError, "<c8");
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", payload)),
                    UserError, "truncated .npy payload");
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '<f4', 'shape': (2, 3), }", payload)), UserError,
                    "fortran_order");
  EXPECT_THROW_WITH(parse(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", payload)),
                    UserError, "invalid .npy header");
  EXPECT_THROW_WITH(parse("PK\x03\x04 not npy at all"), UserError, "not a .npy file");
  std::string good = SerializeNpy(NDArray::Empty({4}, DataType::Float(32)));
  for (size_t n = 0; n < good.size(); ++n) EXPECT_THROW(parse(good.substr(0, n)), UserError) << n;
  TempDir dir;
  EXPECT_THROW_WITH(LoadNpy(dir.File("missing.npy")), UserError, "missing.npy");
  EXPECT_THROW_WITH(SaveNpy(dir.File("no/such/dir/x.npy"), NDArray::Empty({1}, DataType::Int(8))), UserError,
                    "cannot write");
  EXPECT_THROW(SerializeNpy(NDArray::Empty({1}, DataType::Float(32, 4))), UserError);
  // Types numpy has no dtype for are saved as void elements of their width (as numpy saves ml_dtypes).
  EXPECT_NE(SerializeNpy(NDArray::Empty({1}, DataType::BFloat16())).find("'descr': '<V2'"), std::string::npos);
  EXPECT_NE(SerializeNpy(NDArray::Empty({1}, DataType::Int(4))).find("'descr': '|V1'"), std::string::npos);
}

TEST(Npy, FilesAreReadOnlyAsFarAsTheirHeaderSays) {
  TempDir dir;
  // A FIFO, a device, a folder: refused before the first read (a FIFO would block, /dev/zero never end).
  const std::string fifo = dir.File("fifo.npy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW_WITH(LoadNpy(fifo), UserError, "fifo.npy", "FIFO", "not a regular file");
  EXPECT_THROW_WITH(LoadNpy("/dev/zero"), UserError, "character device");
  EXPECT_THROW_WITH(LoadNpy(dir.path()), UserError, "a directory");
  // 2^40 float32 announced, 24 bytes present: refused without allocating 4 TiB.
  const std::string huge = dir.File("huge.npy");
  WriteFile(huge, NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
                                std::string(24, '\0')));
  EXPECT_THROW_WITH(LoadNpy(huge), UserError, "truncated .npy payload", "4398046511104 bytes");
  // A version 2.0 header announcing 4 GiB of header text.
  const std::string long_header = dir.File("long_header.npy");
  WriteFile(long_header, std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}");
  EXPECT_THROW_WITH(LoadNpy(long_header), UserError, "announces 4294967295 bytes");
  // Bytes after the payload are not read (and not an error, as for numpy).
  const std::string trailing = dir.File("trailing.npy");
  WriteFile(trailing, SerializeNpy(NDArray::Empty({2}, DataType::Int(8))) + "extra");
  EXPECT_EQ(LoadNpy(trailing).NumElements(), 2);
}

TEST(Npz, HostileArchivesAreRefusedBeforeAllocating) {
  if (!NpzSupported()) GTEST_SKIP() << "built without libzip";
  TempDir dir;
  const std::string path = dir.File("a.npz");
  SaveNpz(path, {{"x", NDArray::Empty({4}, DataType::Float(32))}});
  std::string bytes = ReadFileBytes(path);
  EXPECT_EQ(ParseNpz(bytes.data(), bytes.size(), "mem").size(), 1u);
  // The member's uncompressed size in the central directory (offset 24 of its entry) set to 2^31 - 1:
  // a stored member must be as large as its compressed size.
  const size_t central = bytes.rfind("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  std::string bad = bytes;
  const char size[4] = {'\xff', '\xff', '\xff', '\x7f'};
  std::memcpy(bad.data() + central + 24, size, 4);
  EXPECT_THROW_WITH(ParseNpz(bad.data(), bad.size(), "mem"), UserError, "mem", "member 'x.npy'", "corrupt");
  for (size_t n = 0; n < bytes.size(); n += 7) {
    try {
      ParseNpz(bytes.data(), n, "cut");
    } catch (const UserError&) {
    }
  }
  const std::string fifo = dir.File("fifo.npz");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW_WITH(LoadNpz(fifo), UserError, "FIFO");
}

TEST(Npz, RoundTrip) {
  TempDir dir;
  std::map<std::string, NDArray> arrays;
  for (const Sample& s : Samples()) arrays[s.name] = Make(s);
  std::string path = dir.File("all.npz");
  SaveNpz(path, arrays);
  EXPECT_EQ(ReadFileBytes(path).substr(0, 4), "PK\x03\x04");
  auto back = LoadNpz(path);
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [name, a] : arrays) {
    ASSERT_EQ(back.count(name), 1u) << name;
    EXPECT_TRUE(SameArray(a, back.at(name))) << name;
  }
  // Saving again replaces the file.
  SaveNpz(path, {{"only", arrays.at("f32")}});
  EXPECT_EQ(LoadNpz(path).size(), 1u);
}

TEST(Npz, BadArchivesAreClearErrors) {
  TempDir dir;
  EXPECT_THROW_WITH(LoadNpz(dir.File("missing.npz")), UserError, "missing.npz");
  std::string garbage = dir.File("garbage.npz");
  WriteFile(garbage, std::string(1000, 'z'));
  EXPECT_THROW_WITH(LoadNpz(garbage), UserError, "garbage.npz");
  EXPECT_THROW_WITH(SaveNpz(dir.File("no/dir/x.npz"), {{"a", NDArray::Empty({1}, DataType::Int(8))}}),
                    UserError, "x.npz");
}

TEST(NumpyInterop, NumpyFilesMatchOurBytes) {
  if (!HaveNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
  TempDir dir;
  std::string script = "d = sys.argv[0].rsplit('/', 1)[0]\n";
  for (const Sample& s : Samples())
    script += "np.save(d + '/" + s.name + ".npy', " + s.numpy + ")\n";
  script += "np.savez(d + '/plain.npz', " ;
  for (const Sample& s : Samples()) script += s.name + "=" + s.numpy + ", ";
  script += ")\nnp.savez_compressed(d + '/compressed.npz', ";
  for (const Sample& s : Samples()) script += s.name + "=" + s.numpy + ", ";
  script += ")\n";
  ASSERT_TRUE(RunPython(dir, script));
  for (const Sample& s : Samples()) {
    std::string path = dir.File(s.name + ".npy");
    NDArray ours = Make(s);
    EXPECT_EQ(SerializeNpy(ours), ReadFileBytes(path)) << s.name << ": bytes differ from numpy.save";
    EXPECT_TRUE(SameArray(LoadNpy(path), ours)) << s.name;
  }
  for (const char* npz : {"plain.npz", "compressed.npz"}) {
    auto arrays = LoadNpz(dir.File(npz));
    ASSERT_EQ(arrays.size(), Samples().size()) << npz;
    for (const Sample& s : Samples()) EXPECT_TRUE(SameArray(arrays.at(s.name), Make(s))) << npz << " " << s.name;
  }
}

TEST(NumpyInterop, NumpyReadsOurFiles) {
  if (!HaveNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
  TempDir dir;
  std::map<std::string, NDArray> arrays;
  std::string script = "d = sys.argv[0].rsplit('/', 1)[0]\nz = np.load(d + '/ours.npz')\n";
  for (const Sample& s : Samples()) {
    arrays[s.name] = Make(s);
    SaveNpy(dir.File(s.name + ".npy"), arrays[s.name]);
    std::string expect = s.numpy;
    script += "for a in (np.load(d + '/" + s.name + ".npy'), z['" + s.name + "']):\n";
    script += "    e = " + expect + "\n";
    script += "    assert a.dtype == e.dtype and a.shape == e.shape and (a == e).all(), '" + s.name + "'\n";
  }
  script += "assert sorted(z.files) == sorted([" ;
  for (const Sample& s : Samples()) script += "'" + s.name + "', ";
  script += "])\n";
  SaveNpz(dir.File("ours.npz"), arrays);
  EXPECT_TRUE(RunPython(dir, script));
}

}  // namespace
}  // namespace tessera::runtime
