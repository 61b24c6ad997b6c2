#include "tessera/runtime/npy_io.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

namespace tessera::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kHeaderAlign = 64;
// numpy.load refuses headers over 10000 bytes by default (max_header_size); a version 2.0 / 3.0
// header may announce up to 4 GiB, so the length is bounded before it is read.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

// numpy descr type char and size -> DataType.
DataType DescrToDataType(const std::string& descr, const std::string& what) {
  TESSERA_CHECK(descr.size() >= 3, what, ": unrecognized .npy dtype descr '", descr, "'");
  char order = descr[0];
  std::string type = descr.substr(1);
  TESSERA_CHECK(order != '>', what, ": the array is big-endian ('", descr,
                "'); convert it with a.astype(a.dtype.newbyteorder('<')) and save it again");
  TESSERA_CHECK(order == '<' || order == '|' || order == '=', what, ": unrecognized .npy dtype descr '",
                descr, "'");
  if (type == "f2") return DataType::Float(16);
  if (type == "f4") return DataType::Float(32);
  if (type == "f8") return DataType::Float(64);
  if (type == "i1") return DataType::Int(8);
  if (type == "i2") return DataType::Int(16);
  if (type == "i4") return DataType::Int(32);
  if (type == "i8") return DataType::Int(64);
  if (type == "u1") return DataType::UInt(8);
  if (type == "u2") return DataType::UInt(16);
  if (type == "u4") return DataType::UInt(32);
  if (type == "u8") return DataType::UInt(64);
  if (type == "b1") return DataType::Bool();
  TESSERA_THROW(UnsupportedError, what, ": .npy dtype '", descr,
                "' is not supported: use float16/32/64, int8..int64, uint8..uint64 or bool");
}

std::string DataTypeToDescr(DataType t) {
  TESSERA_CHECK(t.is_scalar(), "cannot save a ", t.str(), " array as .npy: vector dtypes have no numpy descr");
  if (t.is_bool()) return "|b1";
  // bfloat16, float8 / float4 and 4- / 2-bit integers have no numpy dtype: their bytes are saved
  // as opaque void elements, which is how numpy saves ml_dtypes arrays (same layout: one
  // element per byte below 8 bits); np.load(...).view(ml_dtypes.<type>) recovers them.
  if (t.is_storage_only() && !(t.is_float() && t.bits() == 16)) return t.bits() == 16 ? "<V2" : "|V1";
  const char* kind = t.is_float() ? "f" : t.is_int() ? "i" : t.is_uint() ? "u" : nullptr;
  TESSERA_CHECK(kind && (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) &&
                    !(t.is_float() && t.bits() == 8),
                "cannot save a ", t.str(), " array as .npy: numpy has no such dtype");
  return std::string(t.bits() == 8 ? "|" : "<") + kind + std::to_string(t.bits() / 8);
}

// A tiny parser for the header dict: {'key': value, ...} where a value is a quoted
// string, True / False, or a tuple of integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  void Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Expect('{');
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key = QuotedString();
      Expect(':');
      SkipSpace();
      if (key == "descr") {
        *descr = QuotedString();
        have_descr = true;
      } else if (key == "fortran_order") {
        *fortran = Bool();
        have_fortran = true;
      } else if (key == "shape") {
        *shape = Tuple();
        have_shape = true;
      } else {
        Fail("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      SkipSpace();
      if (Peek() != '}') Fail("expected ',' or '}'");
    }
    if (!have_descr || !have_fortran || !have_shape)
      Fail("the header must have the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    TESSERA_THROW(UserError, what_, ": invalid .npy header (", why, " at character ", pos_, " of \"",
                  s_, "\"): the file is corrupt or not written by numpy");
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string QuotedString() {
    SkipSpace();
    char q = Peek();
    if (q != '\'' && q != '"') Fail("expected a quoted string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) Fail("unterminated string");
    std::string v = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return v;
  }
  bool Bool() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    Fail("expected True or False");
  }
  std::vector<int64_t> Tuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      size_t start = pos_;
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (v > (int64_t{1} << 52)) Fail("extent too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs
      if (pos_ == start) Fail("expected a non-negative integer");
      dims.push_back(v);
      SkipSpace();
      if (Peek() == ',') ++pos_;
      else if (Peek() != ')') Fail("expected ',' or ')'");
    }
    ++pos_;
    return dims;
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

// The parsed preamble of a .npy file: everything before the elements.
struct NpyHeader {
  DataType dtype;
  std::vector<int64_t> shape;
  size_t data_start = 0;  // offset of the first element
  size_t nbytes = 0;      // the elements' bytes, product(shape) * dtype bytes
};

// The length of the preamble (magic, version, header length, header) from the first
// min(size, 12) bytes: data_start. Checks the magic and the version.
size_t PreambleBytes(const unsigned char* p, size_t size, const std::string& what) {
  TESSERA_CHECK(size >= kMagicLen + 4 && std::memcmp(p, kMagic, kMagicLen) == 0, what,
                ": not a .npy file (it does not start with \"\\x93NUMPY\")");
  const int major = p[6];
  if (major == 1) return 10 + (p[8] | (p[9] << 8));
  if (major == 2 || major == 3) {
    TESSERA_CHECK(size >= 12, what, ": truncated .npy header");
    const size_t header_len = static_cast<size_t>(p[8]) | (static_cast<size_t>(p[9]) << 8) |
                              (static_cast<size_t>(p[10]) << 16) | (static_cast<size_t>(p[11]) << 24);
    TESSERA_CHECK(header_len <= kMaxHeaderBytes, what, ": the .npy header announces ", header_len,
                  " bytes; numpy writes a few hundred (at most ", kMaxHeaderBytes,
                  " are read): the file is corrupt or not written by numpy");
    return 12 + header_len;
  }
  TESSERA_THROW(UserError, what, ": .npy format version ", major, ".", int(p[7]),
                " is not supported (versions 1.0, 2.0 and 3.0 are)");
}

// Parses the preamble; `size` bytes at p hold at least PreambleBytes of them.
NpyHeader ParseHeader(const unsigned char* p, size_t size, const std::string& what) {
  NpyHeader h;
  h.data_start = PreambleBytes(p, size, what);
  const size_t header_start = p[6] == 1 ? 10 : 12;
  TESSERA_CHECK(h.data_start <= size, what, ": truncated .npy header (", h.data_start - header_start,
                " bytes announced, ", size - header_start, " present)");
  std::string header(reinterpret_cast<const char*>(p + header_start), h.data_start - header_start);
  std::string descr;
  bool fortran = false;
  HeaderParser(header, what).Parse(&descr, &fortran, &h.shape);
  h.dtype = DescrToDataType(descr, what);
  TESSERA_CHECK(!fortran || h.shape.size() <= 1, what,
                ": the array is in Fortran (column-major) order; save a C-ordered copy: "
                "np.save(path, np.ascontiguousarray(a))");
  size_t elements = 1;
  bool overflow = false;
  for (int64_t d : h.shape) overflow = overflow || __builtin_mul_overflow(elements, static_cast<size_t>(d), &elements);
  overflow = overflow || __builtin_mul_overflow(elements, static_cast<size_t>(h.dtype.bytes()), &h.nbytes);
  TESSERA_CHECK(!overflow, what, ": the .npy shape ", ShapeToString(h.shape), " of ", h.dtype.str(),
                " is too large (its byte size overflows): the file is corrupt");
  return h;
}

// The payload must be there before anything is allocated for it.
void CheckPayload(const NpyHeader& h, uint64_t file_size, const std::string& what) {
  TESSERA_CHECK(file_size - h.data_start >= h.nbytes, what, ": truncated .npy payload: ", h.dtype.str(), " ",
                ShapeToString(h.shape), " needs ", h.nbytes, " bytes, the file has ", file_size - h.data_start);
}

}  // namespace

NDArray ReadNpy(const std::function<void(void* out, size_t n)>& read, uint64_t size, const std::string& what) {
  // The first bytes say how long the preamble is; then the preamble; then exactly the payload,
  // allocated only once `size` is known to hold it.
  unsigned char start[12] = {};
  const size_t start_bytes = static_cast<size_t>(std::min<uint64_t>(size, sizeof(start)));
  read(start, start_bytes);
  const size_t preamble = PreambleBytes(start, start_bytes, what);
  TESSERA_CHECK(preamble <= size, what, ": truncated .npy header (", preamble, " bytes announced, ", size,
                " present)");
  const size_t have = std::min(start_bytes, preamble);
  std::string bytes(preamble, '\0');
  std::memcpy(bytes.data(), start, have);
  if (preamble > have) read(bytes.data() + have, preamble - have);
  const NpyHeader h = ParseHeader(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), what);
  CheckPayload(h, size, what);
  NDArray array = NDArray::Empty(h.shape, h.dtype);
  auto* dst = static_cast<unsigned char*>(array.raw_data());
  const size_t early = std::min(start_bytes - have, h.nbytes);  // payload bytes among the first ones
  std::memcpy(dst, start + have, early);
  if (h.nbytes > early) read(dst + early, h.nbytes - early);
  return array;
}

NDArray ParseNpy(const void* data, size_t size, const std::string& what) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t pos = 0;
  return ReadNpy([&](void* out, size_t n) {
    std::memcpy(out, p + pos, n);  // ReadNpy never reads past `size`
    pos += n;
  }, size, what);
}

NDArray LoadNpy(const std::string& path) {
  RegularFile file(path, ".npy file");
  uint64_t pos = 0;
  return ReadNpy([&](void* out, size_t n) {
    file.ReadAt(pos, out, n);
    pos += n;
  }, file.size(), "'" + path + "'");
}

std::string SerializeNpy(const NDArray& array) {
  TESSERA_CHECK(array.defined(), "SerializeNpy: null NDArray");
  std::string dict = "{'descr': '" + DataTypeToDescr(array.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < array.ndim(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(array.shape()[i]);
  }
  if (array.ndim() == 1) dict += ",";
  dict += "), }";
  // Pad with spaces so that magic + version + length + dict + '\n' is a multiple of 64.
  size_t prefix = kMagicLen + 2 + 2;
  int major = 1;
  if (prefix + dict.size() + 1 > 65535) {
    prefix = kMagicLen + 2 + 4;
    major = 2;
  }
  size_t total = (prefix + dict.size() + 1 + kHeaderAlign - 1) / kHeaderAlign * kHeaderAlign;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  size_t len = dict.size();
  for (size_t b = 0; b < (major == 1 ? 2u : 4u); ++b) out += static_cast<char>((len >> (8 * b)) & 0xff);
  out += dict;
  out.append(static_cast<const char*>(array.raw_data()), array.NBytes());
  return out;
}

void SaveNpy(const std::string& path, const NDArray& array) {
  std::string bytes = SerializeNpy(array);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  TESSERA_CHECK(f.good(), "cannot write .npy file '", path, "': check that its folder exists and is writable");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  TESSERA_CHECK(!f.fail(), "error while writing .npy file '", path, "' (disk full?)");
}

}  // namespace tessera::runtime
