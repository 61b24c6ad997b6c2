#include "jsonl_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

namespace tessera::tune::detail {
namespace {

[[noreturn]] void ThrowIo(const char* what, const char* kind, const std::string& path, int err) {
  TESSERA_THROW(UserError, "cannot ", what, " ", kind, " '", path, "': ", std::strerror(err),
                "; check that its folder exists and is writable and that the disk is not full");
}

// Closes a descriptor when it goes out of scope (the flock goes with it).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The size of the file without a torn last line: the offset just after its last '\n' (0 when
// there is none). Reads backwards from the end in chunks.
off_t WholeLinesSize(int fd, off_t size) {
  char buf[65536];
  off_t end = size;
  while (end > 0) {
    const off_t begin = end > static_cast<off_t>(sizeof(buf)) ? end - static_cast<off_t>(sizeof(buf)) : 0;
    const size_t n = static_cast<size_t>(end - begin);
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, buf + got, n - got, begin + static_cast<off_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return -1;
      got += static_cast<size_t>(r);
    }
    for (size_t i = n; i > 0; --i) {
      if (buf[i - 1] == '\n') return begin + static_cast<off_t>(i);
    }
    end = begin;
  }
  return 0;
}

}  // namespace

std::vector<JsonLine> ReadJsonLines(const std::string& path, const char* kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
  const std::string bytes = ReadRegularFile(path, kind);
  std::vector<JsonLine> lines;
  size_t start = 0, number = 1;
  while (start < bytes.size()) {
    const size_t nl = bytes.find('\n', start);
    if (nl == std::string::npos) break;  // a torn last line: left out
    if (nl > start) lines.push_back({number, bytes.substr(start, nl - start)});
    start = nl + 1;
    ++number;
  }
  return lines;
}

void AppendJsonLines(const std::string& path, const char* kind, const std::string& lines) {
  if (lines.empty()) return;
  Fd file;
  bool created = false;
  file.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (file.fd < 0 && errno == ENOENT) {
    file.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    created = file.fd >= 0;
  }
  if (file.fd < 0) ThrowIo("open", kind, path, errno);
  while (::flock(file.fd, LOCK_EX) != 0) {
    if (errno != EINTR) ThrowIo("lock", kind, path, errno);
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) ThrowIo("stat", kind, path, errno);
  off_t size = st.st_size;
  // A torn last line (a writer killed mid-write) is cut off, so this append starts a new line.
  const off_t whole = size > 0 ? WholeLinesSize(file.fd, size) : 0;
  if (whole < 0) ThrowIo("read", kind, path, errno);
  if (whole != size) {
    if (::ftruncate(file.fd, whole) != 0) ThrowIo("truncate", kind, path, errno);
    size = whole;
  }
  const char* p = lines.data();
  size_t left = lines.size();
  while (left > 0) {
    const ssize_t w = ::write(file.fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = w < 0 ? errno : ENOSPC;
      (void)!::ftruncate(file.fd, size);  // leave no partial line behind
      ThrowIo("write", kind, path, err);
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fsync(file.fd) != 0) {
    const int err = errno;
    (void)!::ftruncate(file.fd, size);
    ThrowIo("fsync", kind, path, err);
  }
  if (created) {
    // The new file's name must survive a crash too: fsync its folder.
    Fd dir;
    dir.fd = ::open(ParentDir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir.fd < 0 || ::fsync(dir.fd) != 0) ThrowIo("fsync the folder of", kind, path, errno);
  }
}

}  // namespace tessera::tune::detail
