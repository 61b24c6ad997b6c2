// .npz archives through libzip (npy_io.h documents the format).
#include <zip.h>

#include <memory>

#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"

namespace tessera::runtime {
namespace {

std::string ZipErrorString(int code) {
  zip_error_t err;
  zip_error_init_with_code(&err, code);
  std::string s = zip_error_strerror(&err);
  zip_error_fini(&err);
  return s;
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // without writing; success paths zip_close
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

constexpr char kSuffix[] = ".npy";

}  // namespace

bool NpzSupported() { return true; }

std::map<std::string, NDArray> LoadNpz(const std::string& path) {
  int code = 0;
  ZipPtr zip(zip_open(path.c_str(), ZIP_RDONLY, &code));
  TESSERA_CHECK(zip != nullptr, "cannot open .npz file '", path, "': ", ZipErrorString(code),
                ". Check the path; the file must be a zip archive written by numpy.savez");
  std::map<std::string, NDArray> arrays;
  zip_int64_t n = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    TESSERA_CHECK(zip_stat_index(zip.get(), i, 0, &st) == 0 && (st.valid & ZIP_STAT_NAME) &&
                      (st.valid & ZIP_STAT_SIZE),
                  "'", path, "': cannot read the entry ", i, " of the archive: ", zip_strerror(zip.get()));
    std::string member = st.name;
    if (!member.empty() && member.back() == '/') continue;  // a directory entry
    std::string what = "'" + path + "' member '" + member + "'";
    TESSERA_CHECK(member.size() > sizeof(kSuffix) - 1 &&
                      member.compare(member.size() - (sizeof(kSuffix) - 1), std::string::npos, kSuffix) == 0,
                  what, " is not a .npy file: an .npz archive holds only <name>.npy members");
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(zip.get(), i, 0);
    TESSERA_CHECK(f != nullptr, "cannot read ", what, ": ", zip_strerror(zip.get()));
    zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    std::string err = got < 0 ? zip_file_strerror(f) : "";
    zip_fclose(f);
    TESSERA_CHECK(got >= 0 && static_cast<zip_uint64_t>(got) == st.size, "cannot read ", what, ": ",
                  err.empty() ? "short read" : err, " (the archive is corrupt)");
    std::string name = member.substr(0, member.size() - (sizeof(kSuffix) - 1));
    arrays[name] = ParseNpy(bytes.data(), bytes.size(), what);
  }
  return arrays;
}

void SaveNpz(const std::string& path, const std::map<std::string, NDArray>& arrays) {
  int code = 0;
  ZipPtr zip(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  TESSERA_CHECK(zip != nullptr, "cannot create .npz file '", path, "': ", ZipErrorString(code),
                ". Check that its folder exists and is writable");
  // libzip reads the buffers at zip_close, so they must outlive the loop.
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    TESSERA_CHECK(!name.empty(), "SaveNpz: an array has an empty name");
    buffers.push_back(SerializeNpy(array));
    const std::string& bytes = buffers.back();
    zip_source_t* src = zip_source_buffer(zip.get(), bytes.data(), bytes.size(), 0);
    TESSERA_CHECK(src != nullptr, "'", path, "': ", zip_strerror(zip.get()));
    zip_int64_t index = zip_file_add(zip.get(), (name + kSuffix).c_str(), src, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(src);
      TESSERA_THROW(UserError, "cannot add '", name, ".npy' to '", path, "': ", zip_strerror(zip.get()));
    }
    zip_set_file_compression(zip.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  zip_t* z = zip.release();
  if (zip_close(z) != 0) {
    std::string why = zip_strerror(z);
    zip_discard(z);
    TESSERA_THROW(UserError, "cannot write .npz file '", path, "': ", why);
  }
}

}  // namespace tessera::runtime
