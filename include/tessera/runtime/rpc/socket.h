// TCP sockets for the RPC protocol (rpc/protocol.h), over POSIX sockets, and the message framing
// on them (SendMessage / ReceiveMessage).
//
// Errors: UserError for a bad address, a refused or failed connection, a port in use;
// ProtocolError (protocol.h) when the peer closes the connection inside a message, a receive
// times out, or a frame breaks the protocol. Writes never raise SIGPIPE (MSG_NOSIGNAL): a closed
// peer is a UserError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "tessera/runtime/rpc/protocol.h"

namespace tessera::runtime::rpc {

/// "HOST:PORT" (HOST a name or an IPv4 address; "[v6]:PORT" for IPv6) -> {host, port}.
/// UserError naming `spec` for a missing or malformed port (1..65535) or an empty host.
std::pair<std::string, int> ParseAddress(const std::string& spec);

/// A connected TCP socket (move-only; closed on destruction).
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd, std::string peer = "") : fd_(fd), peer_(std::move(peer)) {}
  ~Socket() { Close(); }
  Socket(Socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)), peer_(std::move(o.peer_)) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  /// Connects to host:port (every address getaddrinfo gives, in order). UserError naming the
  /// address and saying to start a server there when none accepts.
  static Socket Connect(const std::string& host, int port);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  /// "127.0.0.1:51234": the other end, for messages.
  const std::string& peer() const { return peer_; }
  void Close();
  /// Ends the connection so that what was sent still arrives: shuts down the sending side, then
  /// reads and discards what the peer still sends (at most 64 MiB, until the receive timeout),
  /// so that closing does not reset the connection under unread data. Then closes.
  void CloseGracefully();

  /// Send / receive timeouts in seconds (0: none).
  void SetTimeouts(int seconds);
  /// Sends all n bytes. UserError when the connection fails or the peer has closed it.
  void SendAll(const void* data, size_t n);
  /// Receives exactly n bytes. Returns false when the peer closed the connection before the
  /// first byte and `eof_ok`; ProtocolError when it closed after (a truncated message, `what`
  /// names it), or the receive timed out; UserError on other socket errors.
  bool ReceiveExact(void* data, size_t n, const std::string& what, bool eof_ok = false);

 private:
  int fd_ = -1;
  std::string peer_;
};

/// A listening TCP socket.
class Listener {
 public:
  /// Binds host:port (port 0: a free port, see port()) with SO_REUSEADDR and listens. UserError
  /// naming the address when it cannot (a port in use, an address not on this machine).
  Listener(const std::string& host, int port);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// The port bound (the one the kernel chose for port 0).
  int port() const { return port_; }
  /// Waits for the next connection (retrying on EINTR). UserError on a failing accept.
  Socket Accept();
  /// Closes the listening socket (e.g. in a forked session, which must not hold it).
  void Close();

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// A received message: its type and its payload (not yet decoded).
struct Message {
  MessageType type;
  std::string payload;
};

/// Sends one frame (header + payload).
void SendMessage(Socket& socket, MessageType type, const std::string& payload);
/// Receives one frame as a server (`at_server`: only client types) or a client, checking its
/// header against `limits` (DecodeHeader). std::nullopt when the peer closed the connection
/// cleanly between messages; ProtocolError for anything malformed or truncated. The payload is
/// read in chunks, so memory grows only with the bytes that actually arrive.
std::optional<Message> ReceiveMessage(Socket& socket, bool at_server, const Limits& limits);

}  // namespace tessera::runtime::rpc
