// TCP sockets and message framing (rpc/socket.h).
#include "tessera/runtime/rpc/socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tessera::runtime::rpc {
namespace {

std::string Describe(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (addr->sa_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "?";
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

void Resolve(const std::string& host, int port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &out.list);
  TESSERA_CHECK(rc == 0 && out.list != nullptr, "cannot resolve the address '", host, "': ", gai_strerror(rc),
                "; give a host name or an IP address such as 127.0.0.1");
}

}  // namespace

std::pair<std::string, int> ParseAddress(const std::string& spec) {
  std::string host, port_str;
  if (!spec.empty() && spec.front() == '[') {
    auto close = spec.find(']');
    TESSERA_CHECK(close != std::string::npos && close + 1 < spec.size() && spec[close + 1] == ':', "address '", spec,
                  "': expected [IPv6]:PORT, e.g. [::1]:9190");
    host = spec.substr(1, close - 1);
    port_str = spec.substr(close + 2);
  } else {
    auto colon = spec.rfind(':');
    TESSERA_CHECK(colon != std::string::npos, "address '", spec, "': expected HOST:PORT, e.g. 127.0.0.1:9190");
    host = spec.substr(0, colon);
    port_str = spec.substr(colon + 1);
  }
  TESSERA_CHECK(!host.empty(), "address '", spec, "': the host is empty; expected HOST:PORT, e.g. 127.0.0.1:9190");
  int port = 0;
  bool ok = !port_str.empty() && port_str.size() <= 5 &&
            std::all_of(port_str.begin(), port_str.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (ok) port = std::stoi(port_str);
  TESSERA_CHECK(ok && port >= 1 && port <= 65535, "address '", spec, "': the port '", port_str,
                "' is not a number from 1 to 65535");
  return {host, port};
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = std::exchange(o.fd_, -1);
    peer_ = std::move(o.peer_);
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::CloseGracefully() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);
  char buf[16384];
  size_t drained = 0;
  while (drained < (size_t{64} << 20)) {
    ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // the peer closed too, an error, or the receive timeout
    drained += static_cast<size_t>(r);
  }
  Close();
}

Socket Socket::Connect(const std::string& host, int port) {
  AddrInfo ai;
  Resolve(host, port, false, ai);
  std::string why = "no address";
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int rc;
    do rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return Socket(fd, Describe(a->ai_addr));
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  TESSERA_THROW(UserError, "cannot connect to the RPC server at ", host, ":", port, ": ", why,
                ". Start one there: tessera-runtime rpc server --host ", host, " --port ", port);
}

void Socket::SetTimeouts(int seconds) {
  timeval tv{};
  tv.tv_sec = seconds;
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void Socket::SendAll(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t sent = ::send(fd_, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      const bool timeout = sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      TESSERA_THROW(UserError, "sending to ", peer_, " failed: ",
                    timeout ? std::string("timed out (the peer stopped reading)") : std::string(std::strerror(errno)));
    }
    p += sent;
    n -= static_cast<size_t>(sent);
  }
}

bool Socket::ReceiveExact(void* data, size_t n, const std::string& what, bool eof_ok) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd_, p + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (got == 0 && eof_ok) return false;
      TESSERA_THROW(ProtocolError, "truncated ", what, ": the connection from ", peer_, " closed after ", got, " of ", n,
                    " bytes");
    }
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        TESSERA_THROW(ProtocolError, "timed out waiting for ", what, " from ", peer_, " (", got, " of ", n,
                      " bytes received)");
      }
      TESSERA_THROW(UserError, "receiving ", what, " from ", peer_, " failed: ", std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

Listener::Listener(const std::string& host, int port) {
  TESSERA_CHECK(port >= 0 && port <= 65535, "--port ", port, ": give a port from 1 to 65535 (0: any free port)");
  AddrInfo ai;
  Resolve(host, port, true, ai);
  std::string why = "no address";
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                          : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      fd_ = fd;
      return;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  TESSERA_THROW(UserError, "cannot listen on ", host, ":", port, ": ", why,
                "; pick another --port (0: any free one) or an address of this machine (--host 127.0.0.1)");
}

Listener::~Listener() { Close(); }

void Listener::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Socket Listener::Accept() {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return Socket(fd, Describe(reinterpret_cast<sockaddr*>(&addr)));
    }
    // A connection that went away before it was accepted is not the listener's failure.
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
    TESSERA_THROW(UserError, "accepting a connection failed: ", std::strerror(errno));
  }
}

void SendMessage(Socket& socket, MessageType type, const std::string& payload) {
  std::string frame = EncodeHeader(type, payload.size());
  if (payload.size() < (64 << 10)) {  // one send for small messages
    frame += payload;
    socket.SendAll(frame.data(), frame.size());
    return;
  }
  socket.SendAll(frame.data(), frame.size());
  socket.SendAll(payload.data(), payload.size());
}

std::optional<Message> ReceiveMessage(Socket& socket, bool at_server, const Limits& limits) {
  char header[kHeaderBytes];
  if (!socket.ReceiveExact(header, sizeof header, "message header", /*eof_ok=*/true)) return std::nullopt;
  FrameHeader h = DecodeHeader(std::string_view(header, sizeof header), at_server, limits);
  Message m{h.type, {}};
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  const std::string what = MessageTypeName(static_cast<uint32_t>(h.type)) + " message";
  while (m.payload.size() < h.payload_bytes) {
    const size_t have = m.payload.size();
    const size_t take = static_cast<size_t>(std::min<uint64_t>(kChunk, h.payload_bytes - have));
    m.payload.resize(have + take);
    // Reports the bytes of the whole payload, not the chunk, when it is cut short.
    try {
      socket.ReceiveExact(m.payload.data() + have, take, what);
    } catch (const ProtocolError&) {
      TESSERA_THROW(ProtocolError, "truncated ", what, " from ", socket.peer(), ": the payload of ", h.payload_bytes,
                    " bytes ended early (the connection closed or timed out after ", have, "+ bytes)");
    }
  }
  return m;
}

}  // namespace tessera::runtime::rpc
