// Errors and diagnostics shared by every layer.
//
// Every user-facing failure in Tessera is a tessera::Error (or a subclass) whose
// message says what is wrong, where (file, ONNX node name, op, opset, pass) and
// what to do. Internal invariant violations use TESSERA_ICHECK, which throws an
// InternalError naming the source location: it is a bug in Tessera, never a crash.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera {

/// Base class of every error Tessera raises on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

/// The user gave bad input: a missing or corrupt file, an unsupported op, a wrong shape.
class UserError : public Error {
 public:
  using Error::Error;
};

/// A model uses an operator, attribute or dtype Tessera does not support (yet).
class UnsupportedError : public UserError {
 public:
  using UserError::UserError;
};

/// An invariant inside Tessera broke: a bug in Tessera, reported with its source location.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
/// Streams every argument into one string: Concat("x = ", 3) == "x = 3".
template <typename... Args>
std::string Concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

}  // namespace tessera

/// Throws tessera::InternalError with file:line when `cond` is false.
#define TESSERA_ICHECK(cond, ...)                                                       \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      throw ::tessera::InternalError(::tessera::detail::Concat(                         \
          "internal error at ", __FILE__, ":", __LINE__, ": check failed: " #cond ". ", \
          ##__VA_ARGS__));                                                              \
    }                                                                                   \
  } while (0)

/// Throws the given error type (a tessera::Error subclass) built from the streamed arguments.
#define TESSERA_THROW(ErrorType, ...) throw ErrorType(::tessera::detail::Concat(__VA_ARGS__))

/// Throws tessera::UserError when `cond` is false.
#define TESSERA_CHECK(cond, ...)                                           \
  do {                                                                     \
    if (!(cond)) throw ::tessera::UserError(::tessera::detail::Concat(__VA_ARGS__)); \
  } while (0)
