// The RPC server's session logic and the client (rpc/server.h, rpc/client.h), in process: a
// session served on a thread (no fork), the fixture model (y = relu(x + bias)) uploaded and run,
// and the session's answers to model errors and protocol violations.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/rpc/client.h"
#include "tessera/runtime/rpc/server.h"
#include "test_util.h"

namespace tessera::runtime::rpc {
namespace {

using testing::TempDir;

NDArray Floats(std::vector<int64_t> shape, std::vector<float> values) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  a.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return a;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// One session served on a thread over a socket pair; the test holds the client end.
class SessionOverSocketPair : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    client_ = Socket(fds[0], "test-client");
    options_.limits.max_module_bytes = 1 << 20;
    options_.limits.max_run_bytes = 1 << 20;
    server_ = std::thread([this, fd = fds[1]] { ServeSession(Socket(fd, "test-peer"), options_, dir_.path(), log_); });
  }
  void TearDown() override {
    client_.Close();
    server_.join();
  }
  void Send(MessageType type, const std::string& payload) { SendMessage(client_, type, payload); }
  Message Receive() {
    std::optional<Message> m = ReceiveMessage(client_, /*at_server=*/false, Limits{});
    EXPECT_TRUE(m.has_value()) << "the session closed; its log:\n" << log_.str();
    return m ? std::move(*m) : Message{MessageType::kError, ""};
  }
  std::string ExpectError() {
    Message m = Receive();
    EXPECT_EQ(m.type, MessageType::kError);
    return m.type == MessageType::kError ? DecodeErrorReply(m.payload).message : "";
  }
  bool Closed() { return !ReceiveMessage(client_, false, Limits{}).has_value(); }
  void Handshake() {
    Send(MessageType::kHello, Encode(Hello{kProtocolVersion, "test"}));
    Message m = Receive();
    ASSERT_EQ(m.type, MessageType::kHelloReply);
    HelloReply r = DecodeHelloReply(m.payload);
    EXPECT_EQ(r.arch, HostArch());
    EXPECT_EQ(r.limits.max_module_bytes, 1u << 20);
  }

  TempDir dir_;
  ServerOptions options_;
  std::ostringstream log_;  // written by the session thread; read after join or while it waits
  Socket client_;
  std::thread server_;
};

TEST_F(SessionOverSocketPair, UploadRunAndGoodbye) {
  Handshake();
  Send(MessageType::kUploadModule, Encode(UploadModule{"fixture.so", ReadFile(TESSERA_FIXTURE_MODEL)}));
  Message loaded = Receive();
  ASSERT_EQ(loaded.type, MessageType::kModuleLoaded);
  EXPECT_EQ(DecodeModuleLoaded(loaded.payload).num_inputs, 1u);
  EXPECT_EQ(DecodeModuleLoaded(loaded.payload).num_outputs, 4u);
  for (int i = 0; i < 2; ++i) {  // two runs in one session
    Send(MessageType::kRun, Encode(RunRequest{1, i == 1 ? 3u : 0u, {{"x", Floats({2, 4}, {1, 1, 1, 1, -10, -10, -10, 10})}}}));
    Message m = Receive();
    ASSERT_EQ(m.type, MessageType::kRunResult);
    RunReply r = DecodeRunReply(m.payload);
    ASSERT_EQ(r.outputs.size(), 4u);
    EXPECT_EQ(r.outputs[0].name, "y");
    const float* y = r.outputs[0].value.data<float>();
    EXPECT_EQ(std::vector<float>(y, y + 8), (std::vector<float>{0, 0.5f, 1, 1.5f, 0, 0, 0, 12.5f}));
    EXPECT_EQ(r.median_ms >= 0, i == 1);
  }
  Send(MessageType::kGoodbye, "");
  EXPECT_TRUE(Closed());
}

TEST_F(SessionOverSocketPair, ModelErrorsAreAnsweredAndTheSessionGoesOn) {
  Handshake();
  Send(MessageType::kRun, Encode(RunRequest{}));
  EXPECT_NE(ExpectError().find("no model library was uploaded"), std::string::npos);
  Send(MessageType::kUploadModule, Encode(UploadModule{"not-a-model.so", ReadFile(TESSERA_FIXTURE_NOT_A_MODEL)}));
  std::string e = ExpectError();
  EXPECT_NE(e.find("'not-a-model.so'"), std::string::npos) << e;  // the client's name, not the server's path
  EXPECT_EQ(e.find(dir_.path()), std::string::npos) << e;
  Send(MessageType::kUploadModule, Encode(UploadModule{"../../etc/evil", "garbage"}));
  EXPECT_FALSE(ExpectError().empty());
  Send(MessageType::kUploadModule, Encode(UploadModule{"fixture.so", ReadFile(TESSERA_FIXTURE_MODEL)}));
  EXPECT_EQ(Receive().type, MessageType::kModuleLoaded);
  Send(MessageType::kRun, Encode(RunRequest{0, 0, {{"nope", Floats({1}, {0})}}}));
  e = ExpectError();
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  Send(MessageType::kRun, Encode(RunRequest{0, 0, {{"x", Floats({1}, {0})}}}));
  EXPECT_NE(ExpectError().find("shape"), std::string::npos);
  Send(MessageType::kRun, Encode(RunRequest{0, 0, {}}));
  EXPECT_NE(ExpectError().find("was not given"), std::string::npos);
  Send(MessageType::kRun, Encode(RunRequest{0, 0, {{"x", Floats({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0})}}}));
  EXPECT_EQ(Receive().type, MessageType::kRunResult);
}

// A VM program with symbolic shapes (fixtures/fixture_dynamic_model.c, x: float32 ["n", 4]) runs
// on the server at any n; a wrong static dim is answered with the input's symbolic shape.
TEST_F(SessionOverSocketPair, SymbolicInputShapes) {
  Handshake();
  Send(MessageType::kUploadModule, Encode(UploadModule{"dynamic.so", ReadFile(TESSERA_FIXTURE_DYNAMIC_MODEL)}));
  EXPECT_EQ(Receive().type, MessageType::kModuleLoaded);
  for (int64_t n : {1, 2}) {
    std::vector<float> x(4 * n, -1.0f);
    x[0] = 3;
    Send(MessageType::kRun, Encode(RunRequest{0, 0, {{"x", Floats({n, 4}, x)}}}));
    Message m = Receive();
    ASSERT_EQ(m.type, MessageType::kRunResult);
    RunReply reply = DecodeRunReply(m.payload);
    ASSERT_EQ(reply.outputs[0].value.shape(), (std::vector<int64_t>{n, 4}));
    EXPECT_EQ(reply.outputs[0].value.data<float>()[0], 6.0f);
    EXPECT_EQ(reply.outputs[0].value.data<float>()[4 * n - 1], 0.0f);
  }
  Send(MessageType::kRun, Encode(RunRequest{0, 0, {{"x", Floats({1, 3}, {0, 0, 0})}}}));
  std::string e = ExpectError();
  EXPECT_NE(e.find("expects shape [n, 4], got [1, 3]"), std::string::npos) << e;
}

TEST_F(SessionOverSocketPair, WrongVersionIsAnsweredAndClosed) {
  Send(MessageType::kHello, Encode(Hello{2, "future"}));
  std::string e = ExpectError();
  EXPECT_NE(e.find("version 2"), std::string::npos) << e;
  EXPECT_TRUE(Closed());
}

TEST_F(SessionOverSocketPair, FirstMessageMustBeHello) {
  Send(MessageType::kRun, Encode(RunRequest{}));
  EXPECT_NE(ExpectError().find("the first message must be Hello"), std::string::npos);
  EXPECT_TRUE(Closed());
}

TEST_F(SessionOverSocketPair, OversizedUploadIsAnsweredAndClosed) {
  Handshake();
  std::string header = EncodeHeader(MessageType::kUploadModule, uint64_t{1} << 40);
  client_.SendAll(header.data(), header.size());
  EXPECT_NE(ExpectError().find("over the limit"), std::string::npos);
  EXPECT_TRUE(Closed());
}

TEST_F(SessionOverSocketPair, TruncatedMessageIsAnsweredAndClosed) {
  Handshake();
  std::string frame = EncodeHeader(MessageType::kRun, 100) + std::string(10, '\0');
  client_.SendAll(frame.data(), frame.size());
  shutdown(client_.fd(), SHUT_WR);
  EXPECT_NE(ExpectError().find("truncated"), std::string::npos);
  EXPECT_TRUE(Closed());
}

TEST_F(SessionOverSocketPair, MalformedPayloadIsAnsweredAndClosed) {
  Handshake();
  Send(MessageType::kRun, std::string("\0\0\0\0\0\0\0\0\1\0\0\0", 12));  // one tensor, no bytes of it
  EXPECT_NE(ExpectError().find("malformed Run message"), std::string::npos);
  EXPECT_TRUE(Closed());
}

TEST(RpcClient, RunsTheFixtureModelThroughAServedSession) {
  Listener listener("127.0.0.1", 0);
  TempDir dir;
  ServerOptions options;
  std::ostringstream log;
  std::thread server([&] { ServeSession(listener.Accept(), options, dir.path(), log); });
  {
    Client client("127.0.0.1:" + std::to_string(listener.port()));
    EXPECT_EQ(client.server().arch, HostArch());
    ModuleLoaded loaded = client.Upload(TESSERA_FIXTURE_MODEL);
    EXPECT_EQ(loaded.num_outputs, 4u);
    RunModelResult r = client.Run({{"x", Floats({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0})}}, {1, 2});
    ASSERT_EQ(r.outputs.size(), 4u);
    EXPECT_EQ(r.outputs[2].name, "bias");
    EXPECT_GE(r.median_ms, 0);
    EXPECT_THROW_WITH(client.Run({}), UserError, "on the RPC server 127.0.0.1:", "was not given");
    EXPECT_THROW_WITH(client.Upload(dir.File("missing.so")), UserError, "does not exist");
  }  // Goodbye
  server.join();
  EXPECT_NE(log.str().find("session with"), std::string::npos) << log.str();
}

TEST(RpcClient, RefusedConnectionSaysHowToStartAServer) {
  int port;
  {
    Listener l("127.0.0.1", 0);
    port = l.port();
  }  // closed: nothing listens there now
  EXPECT_THROW_WITH(Client("127.0.0.1:" + std::to_string(port)), UserError, "cannot connect",
                    "tessera-runtime rpc server");
}

}  // namespace
}  // namespace tessera::runtime::rpc
