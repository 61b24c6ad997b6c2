// Reading a user's file (a model, an input tensor, a library) with its size known first
// (issue 15): only regular files are read, so a FIFO, a character device (/dev/zero,
// /dev/urandom) or a directory is refused before the first byte instead of blocking or reading
// forever, and a file larger than what the caller can use is refused without reading it.
//
// The file is opened first (O_NONBLOCK, so opening a FIFO does not wait for a writer) and the
// checks are made on the open descriptor (fstat), so a path swapped between a check and the
// read cannot slip through. Reads are bounded by the size fstat reported: a file that grows
// while it is read is read to that size; one that shrinks is a UserError ("changed while it
// was read").
//
// Errors: UserError naming `kind` ("ONNX model", ".npy input", ...) and the path, saying what
// is wrong and what to give instead: a missing or unreadable file, not a regular file (FIFO,
// device, directory, socket), larger than `max_bytes`, a read error.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "tessera/support/error.h"

namespace tessera {

/// The largest serialized protobuf message (an ONNX model, a TensorProto) that protobuf parses:
/// 2 GiB - 1. Larger files are refused before they are read.
inline constexpr uint64_t kMaxProtobufBytes = 0x7fffffff;

/// What a stat mode is, in words, for an error message ("a FIFO (named pipe)", ...).
inline const char* FileKindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

/// An open, checked regular file (see the header comment): a descriptor and its size in bytes.
/// Closes the descriptor when destroyed.
class RegularFile {
 public:
  /// Opens `path` for reading and checks it is a regular file of at most `max_bytes` bytes.
  RegularFile(const std::string& path, const char* kind, uint64_t max_bytes = UINT64_MAX)
      : path_(path), kind_(kind) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      const int err = errno;
      TESSERA_THROW(UserError, "cannot open ", kind, " '", path, "': ", std::strerror(err),
                    err == ENOENT ? "; check the path" : "; check that it exists and is readable");
    }
    struct stat st {};
    const bool stat_ok = ::fstat(fd_, &st) == 0;
    if (!stat_ok || !S_ISREG(st.st_mode)) {
      const char* what = stat_ok ? FileKindName(st.st_mode) : "not a regular file";
      ::close(fd_);
      TESSERA_THROW(UserError, kind, " '", path, "' is ", what,
                    ", not a regular file: give the path of a file (pipes, devices and folders are not read)");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > max_bytes) {
      ::close(fd_);
      TESSERA_THROW(UserError, kind, " '", path, "' is ", size_, " bytes, more than the ", max_bytes,
                    " bytes this reader accepts: check that it is the right file");
    }
  }
  ~RegularFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  /// The size in bytes when it was opened.
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  /// The open descriptor (owned by this object; dup it to hand it over).
  int fd() const { return fd_; }

  /// Reads exactly `n` bytes at `offset` into `out`. UserError when [offset, offset + n) is not
  /// inside size() or the file has become shorter.
  void ReadAt(uint64_t offset, void* out, size_t n) const {
    TESSERA_CHECK(offset <= size_ && n <= size_ - offset, kind_, " '", path_, "': reading bytes ", offset, " to ",
                  offset + n, " of a ", size_, "-byte file");
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        const int err = errno;
        TESSERA_THROW(UserError, "error while reading ", kind_, " '", path_, "': ",
                      got == 0 ? "the file changed while it was read (it is shorter now)" : std::strerror(err));
      }
      p += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }

  /// The whole file (size() bytes).
  std::string ReadAll() const {
    std::string bytes(static_cast<size_t>(size_), '\0');
    ReadAt(0, bytes.data(), bytes.size());
    return bytes;
  }

 private:
  std::string path_;
  const char* kind_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Reads the regular file `path` of at most `max_bytes` bytes whole (see RegularFile).
inline std::string ReadRegularFile(const std::string& path, const char* kind, uint64_t max_bytes = UINT64_MAX) {
  return RegularFile(path, kind, max_bytes).ReadAll();
}

}  // namespace tessera
