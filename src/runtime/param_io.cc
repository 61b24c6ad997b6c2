#include "tessera/runtime/param_io.h"

#include <cstring>

#include "tessera/support/error.h"

namespace tessera::runtime {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "param_io writes host integers as little-endian");

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void PadTo64(std::string& out) { out.append((64 - out.size() % 64) % 64, '\0'); }

// A bounds-checked little-endian reader over the blob.
class Reader {
 public:
  Reader(const char* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T Get(const char* what) {
    T v;
    std::memcpy(&v, Take(sizeof(T), what), sizeof(T));
    return v;
  }
  const char* Take(size_t n, const char* what) {
    TESSERA_CHECK(n <= size_ - pos_, "corrupt params blob: truncated at byte ", pos_, " while reading ",
                  what, " (needs ", n, " bytes, ", size_ - pos_,
                  " left): rebuild the model or re-save the params");
    const char* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  void SkipPadding() { Take((64 - pos_ % 64) % 64, "payload padding"); }
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

std::string SaveParams(const std::map<std::string, NDArray>& params) {
  std::string out(kParamsMagic, sizeof(kParamsMagic));
  Put<uint32_t>(out, kParamsVersion);
  Put<uint32_t>(out, 0);
  Put<uint64_t>(out, params.size());
  for (const auto& [name, array] : params) {
    TESSERA_CHECK(!name.empty(), "SaveParams: a parameter has an empty name");
    TESSERA_CHECK(array.defined(), "SaveParams: parameter '", name, "' is a null NDArray");
    std::string dtype = array.dtype().str();
    Put<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out += name;
    Put<uint32_t>(out, static_cast<uint32_t>(dtype.size()));
    out += dtype;
    Put<uint32_t>(out, static_cast<uint32_t>(array.ndim()));
    for (int64_t d : array.shape()) Put<int64_t>(out, d);
    Put<uint64_t>(out, array.NBytes());
    PadTo64(out);
    out.append(static_cast<const char*>(array.raw_data()), array.NBytes());
  }
  return out;
}

std::map<std::string, NDArray> LoadParams(const void* data, size_t size) {
  TESSERA_CHECK(data != nullptr || size == 0, "LoadParams: null data");
  Reader r(static_cast<const char*>(data), size);
  TESSERA_CHECK(size >= sizeof(kParamsMagic) &&
                    std::memcmp(data, kParamsMagic, sizeof(kParamsMagic)) == 0,
                "corrupt params blob: it does not start with the magic \"TSRPARAM\": this is not a "
                "Tessera params blob");
  r.Take(sizeof(kParamsMagic), "magic");
  uint32_t version = r.Get<uint32_t>("version");
  TESSERA_CHECK(version == kParamsVersion, "params blob version ", version,
                " is not supported: this runtime reads version ", kParamsVersion,
                "; rebuild the model with a matching Tessera");
  r.Get<uint32_t>("reserved");
  uint64_t count = r.Get<uint64_t>("tensor count");
  // Every entry takes at least 16 bytes of header, which bounds a corrupt count.
  TESSERA_CHECK(count <= r.left() / 16, "corrupt params blob: tensor count ", count,
                " is larger than the blob can hold");

  std::map<std::string, NDArray> params;
  for (uint64_t i = 0; i < count; ++i) {
    size_t entry_at = r.pos();
    uint32_t name_len = r.Get<uint32_t>("name length");
    std::string name(r.Take(name_len, "name"), name_len);
    TESSERA_CHECK(!name.empty(), "corrupt params blob: tensor ", i, " at byte ", entry_at,
                  " has an empty name");
    uint32_t dtype_len = r.Get<uint32_t>("dtype length");
    TESSERA_CHECK(dtype_len <= 32, "corrupt params blob: tensor '", name, "' has a dtype string of ",
                  dtype_len, " bytes");
    std::string dtype_str(r.Take(dtype_len, "dtype"), dtype_len);
    DataType dtype;
    try {
      dtype = DataType::Parse(dtype_str);
    } catch (const UserError& e) {
      TESSERA_THROW(UserError, "corrupt params blob: tensor '", name, "': ", e.what());
    }
    TESSERA_CHECK(!dtype.is_void() && !dtype.is_handle(), "corrupt params blob: tensor '", name,
                  "' has dtype ", dtype_str);
    uint32_t ndim = r.Get<uint32_t>("ndim");
    TESSERA_CHECK(ndim <= 64, "corrupt params blob: tensor '", name, "' has ndim ", ndim);
    std::vector<int64_t> shape(ndim);
    for (auto& d : shape) {
      d = r.Get<int64_t>("shape");
      TESSERA_CHECK(d >= 0, "corrupt params blob: tensor '", name, "' has a negative extent");
    }
    uint64_t nbytes = r.Get<uint64_t>("nbytes");
    r.SkipPadding();
    TESSERA_CHECK(nbytes <= r.left(), "corrupt params blob: truncated payload of tensor '", name,
                  "' (", nbytes, " bytes, ", r.left(), " left)");
    // The shape's size must match nbytes (which the blob holds) before anything is allocated:
    // a corrupt shape must not ask for terabytes.
    uint64_t shape_bytes = static_cast<uint64_t>(dtype.bytes());
    bool overflow = false;
    for (int64_t d : shape) overflow = overflow || __builtin_mul_overflow(shape_bytes, static_cast<uint64_t>(d), &shape_bytes);
    TESSERA_CHECK(!overflow && shape_bytes == nbytes, "corrupt params blob: tensor '", name, "' (", dtype.str(), " ",
                  ShapeToString(shape), ") should have ",
                  overflow ? std::string("more bytes than 2^64") : std::to_string(shape_bytes),
                  " bytes, the blob says ", nbytes);
    NDArray array = NDArray::Empty(shape, dtype);
    array.CopyFromBytes(r.Take(nbytes, "payload"), nbytes);
    TESSERA_CHECK(params.emplace(name, std::move(array)).second,
                  "corrupt params blob: tensor name '", name, "' appears twice");
  }
  TESSERA_CHECK(r.left() == 0, "corrupt params blob: ", r.left(), " unexpected bytes after the last tensor");
  return params;
}

}  // namespace tessera::runtime
