// .npz archives through libzip (npy_io.h documents the format and the bounds).
#include <unistd.h>
#include <zip.h>

#include <memory>

#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

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

struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

constexpr char kSuffix[] = ".npy";
constexpr size_t kSuffixLen = sizeof(kSuffix) - 1;
// Deflate's best ratio is 1032:1 (258-byte matches coded in ~2 bits), so a member claiming more
// than this for its compressed size is corrupt (or a zip bomb).
constexpr uint64_t kMaxDeflateRatio = 1032;

// Reads every member of an open archive of `archive_bytes` bytes; `origin` is the quoted path.
std::map<std::string, NDArray> ReadMembers(zip_t* zip, uint64_t archive_bytes, const std::string& origin) {
  std::map<std::string, NDArray> arrays;
  const zip_int64_t n = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    const zip_uint64_t needed = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    TESSERA_CHECK(zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) == 0 && (st.valid & needed) == needed,
                  origin, ": cannot read the entry ", i, " of the archive: ", zip_strerror(zip));
    const std::string member = st.name;
    if (!member.empty() && member.back() == '/') continue;  // a directory entry
    const std::string what = origin + " member '" + member + "'";
    TESSERA_CHECK(member.size() > kSuffixLen && member.compare(member.size() - kSuffixLen, kSuffixLen, kSuffix) == 0,
                  what, " is not a .npy file: an .npz archive holds only <name>.npy members");
    TESSERA_CHECK(st.comp_method == ZIP_CM_STORE || st.comp_method == ZIP_CM_DEFLATE, what,
                  " uses compression method ", st.comp_method,
                  "; numpy writes stored (savez) or deflated (savez_compressed) members only");
    const bool plausible = st.comp_size <= archive_bytes &&
                           (st.comp_method == ZIP_CM_STORE ? st.size == st.comp_size
                                                           : st.size / kMaxDeflateRatio <= st.comp_size);
    TESSERA_CHECK(plausible, what, " claims ", st.size, " bytes from ", st.comp_size, " compressed bytes in a ",
                  archive_bytes, "-byte archive: the archive is corrupt");
    std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(zip, static_cast<zip_uint64_t>(i), 0));
    TESSERA_CHECK(f != nullptr, "cannot read ", what, ": ", zip_strerror(zip));
    auto read = [&](void* out, size_t bytes) {
      auto* p = static_cast<char*>(out);
      while (bytes > 0) {
        const zip_int64_t got = zip_fread(f.get(), p, bytes);
        TESSERA_CHECK(got > 0, "cannot read ", what, ": ",
                      got < 0 ? zip_file_strerror(f.get()) : "it is shorter than its size says",
                      " (the archive is corrupt)");
        p += got;
        bytes -= static_cast<size_t>(got);
      }
    };
    const std::string name = member.substr(0, member.size() - kSuffixLen);
    NDArray array = ReadNpy(read, st.size, what);
    TESSERA_CHECK(arrays.emplace(name, std::move(array)).second, origin, ": the member '", member,
                  "' appears twice: the archive is corrupt");
  }
  return arrays;
}

// A member name must not be a path (npy_io.h, SaveNpz).
void CheckMemberName(const std::string& name, const std::string& path) {
  bool ok = !name.empty();
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    ok = ok && c != '/' && c != '\\' && u >= 0x20 && u != 0x7f;
  }
  TESSERA_CHECK(ok, "cannot write '", path, "': the array name '", name,
                "' is empty or holds '/', '\\' or a control character, which an .npz member name may not "
                "(map it first: tools/common/output_names.h)");
}

}  // namespace

bool NpzSupported() { return true; }

std::map<std::string, NDArray> LoadNpz(const std::string& path) {
  RegularFile file(path, ".npz file");  // not a FIFO, device or folder
  // libzip takes its own descriptor: the one checked, duplicated.
  const int fd = ::dup(file.fd());
  TESSERA_CHECK(fd >= 0, "cannot open .npz file '", path, "': out of file descriptors");
  int code = 0;
  ZipPtr zip(zip_fdopen(fd, 0, &code));
  if (!zip) ::close(fd);  // zip_fdopen closes it only on success (at zip_close / zip_discard)
  TESSERA_CHECK(zip != nullptr, "cannot open .npz file '", path, "': ", ZipErrorString(code),
                ". Check the path; the file must be a zip archive written by numpy.savez");
  return ReadMembers(zip.get(), file.size(), "'" + path + "'");
}

std::map<std::string, NDArray> ParseNpz(const void* data, size_t size, const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(data, size, 0, &error);
  TESSERA_CHECK(src != nullptr, what, ": ", zip_error_strerror(&error));
  ZipPtr zip(zip_open_from_source(src, ZIP_RDONLY, &error));
  if (!zip) {
    const std::string why = zip_error_strerror(&error);
    zip_source_free(src);
    zip_error_fini(&error);
    TESSERA_THROW(UserError, what, ": not a readable .npz archive: ", why,
                  ". The archive must be a zip archive written by numpy.savez");
  }
  zip_error_fini(&error);
  return ReadMembers(zip.get(), size, what);
}

void SaveNpz(const std::string& path, const std::map<std::string, NDArray>& arrays) {
  for (const auto& entry : arrays) CheckMemberName(entry.first, path);
  int code = 0;
  ZipPtr zip(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  TESSERA_CHECK(zip != nullptr, "cannot create .npz file '", path, "': ", ZipErrorString(code),
                ". Check that its folder exists and is writable");
  // libzip reads the buffers at zip_close, so they must outlive the loop.
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
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
