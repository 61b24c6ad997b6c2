"""Remote execution over the Tessera RPC protocol (issue 13, deliverable 5; protocol:
include/tessera/runtime/rpc/protocol.h), on loopback only: `tessera run --rpc` gives what a local
run gives (x86 server) and what the reference gives (aarch64 server under qemu); the server
answers malformed, oversized, truncated and idle connections with an error, closes them, and
serves the next correct request.

Not collected by e2e_models: its own ctest entry (e2e_rpc).
"""
import contextlib
import os
import re
import socket
import struct
import subprocess
import time

import numpy as np
import pytest

from conftest import (assert_close_to_reference, cross_runtime, graph_io, read_pb, run_cli, runtime_bin,
                      tessera_bin)

MAGIC = b"TSRP"
HELLO, HELLO_REPLY, UPLOAD, MODULE_LOADED, RUN, RUN_RESULT, ERROR, GOODBYE = range(1, 9)


# --- A server as a subprocess ---

class Server:
    """`tessera-runtime rpc server --port 0 ARGS` (cmd: the runtime's command prefix), its log in a file."""

    def __init__(self, cmd, tmp_path, *args):
        self.log_path = tmp_path / f"server-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([*cmd, "rpc", "server", "--host", "127.0.0.1", "--port", "0", *map(str, args)],
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while True:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log_path.read_text())
            if m:
                self.port = int(m.group(1))
                break
            assert self.proc.poll() is None, f"the server exited ({self.proc.returncode}):\n{self.text()}"
            assert time.monotonic() < deadline, f"the server did not start listening:\n{self.text()}"
            time.sleep(0.05)
        self.address = f"127.0.0.1:{self.port}"

    def text(self):
        self.log.flush()
        return self.log_path.read_text()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.log.close()


@contextlib.contextmanager
def server(cmd, tmp_path, *args):
    s = Server(cmd, tmp_path, *args)
    try:
        yield s
    finally:
        s.stop()


# --- A raw client speaking the protocol as the header documents it ---

def frame(msg_type, payload=b"", magic=MAGIC, length=None):
    return magic + struct.pack("<IQ", msg_type, len(payload) if length is None else length) + payload


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<I", len(b)) + b


def hello(version=1):
    return frame(HELLO, struct.pack("<I", version) + string("rpc_loopback.py"))


def connect(srv):
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    return sock


def recv_frame(sock):
    """(type, payload) of the next frame, or None when the server closed the connection."""
    def exact(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    header = exact(16)
    if header is None:
        return None
    assert header[:4] == MAGIC, header
    msg_type, length = struct.unpack("<IQ", header[4:])
    payload = exact(length)
    assert payload is not None, "the server cut its own message short"
    return msg_type, payload


def error_text(payload):
    (n,) = struct.unpack("<I", payload[:4])
    return payload[4:4 + n].decode()


def expect_error_then_close(sock, *fragments):
    """The server answers with an Error naming `fragments`, then closes the connection."""
    reply = recv_frame(sock)
    assert reply is not None and reply[0] == ERROR, f"expected an Error, got {reply}"
    text = error_text(reply[1])
    for f in fragments:
        assert f in text, f"the Error lacks {f!r}: {text}"
    assert recv_frame(sock) is None, "the server kept the connection open after a protocol error"


# --- Fixtures ---

@pytest.fixture(scope="module")
def mnist(tmp_path_factory, models_dir):
    """(x86 .so, aarch64 .so, input .npy, reference output) of mnist-8."""
    d = tmp_path_factory.mktemp("mnist")
    so_x86, so_a64 = d / "mnist-x86.so", d / "mnist-aarch64.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", so_x86)
    run_cli("compile", "--target", "aarch64", models_dir / "mnist-8" / "model.onnx", "-o", so_a64)
    x = d / "x.npy"
    ds = models_dir / "mnist-8" / "test_data_set_0"
    np.save(x, read_pb(ds / "input_0.pb"))
    return so_x86, so_a64, x, read_pb(ds / "output_0.pb")


@pytest.fixture(scope="module")
def x86_server(tmp_path_factory):
    with server([runtime_bin()], tmp_path_factory.mktemp("x86-server"), "--idle-timeout", 2) as s:
        yield s
        # No session crashed on what the tests sent (the server would have logged it and gone on).
        assert "crashed" not in s.text(), s.text()


def run_mnist(srv, mnist, tmp_path, *extra, check=True):
    so_x86, _, x, _ = mnist
    out = tmp_path / f"rpc-{time.monotonic_ns()}.npz"
    args = ["run", so_x86, "--input", f"Input3={x}", "--output", out, *extra]
    if srv is not None:
        args += ["--rpc", srv.address]
    proc = run_cli(*args, check=check)
    return proc, out


def assert_serves(srv, mnist, tmp_path):
    """A correct request still works, and the server process is alive."""
    assert srv.alive(), srv.text()
    proc, out = run_mnist(srv, mnist, tmp_path)
    assert_close_to_reference(np.load(out)["Plus214_Output_0"], mnist[3], "mnist-8 over RPC")


# --- Outputs ---

def test_rpc_run_equals_local_run(x86_server, mnist, tmp_path):
    local, local_out = run_mnist(None, mnist, tmp_path, "--bench", 3)
    remote, remote_out = run_mnist(x86_server, mnist, tmp_path, "--bench", 3)
    assert np.array_equal(np.load(local_out)["Plus214_Output_0"], np.load(remote_out)["Plus214_Output_0"])
    # The same printing: the output lines and "wrote", then the median measured on the server.
    def lines(proc, out):
        return [l.replace(str(out), "OUT") for l in proc.stdout.splitlines() if not l.startswith("median ")]
    assert lines(local, local_out) == lines(remote, remote_out)
    assert re.search(r"^median [0-9.e+-]+ ms$", remote.stdout, re.M), remote.stdout
    assert f"ran on tessera-runtime" in remote.stderr and x86_server.address in remote.stderr


def test_rpc_two_inputs_two_outputs_and_output_dir(x86_server, models_dir, tmp_path):
    model = models_dir / "nanotrack-v2-head"
    so = tmp_path / "head.so"
    run_cli("compile", model / "model.onnx", "-o", so)
    inputs, outputs = graph_io(model / "model.onnx")
    ds = model / "derived_data_set_0"
    args = [a for i, n in enumerate(inputs) for a in ("--input", f"{n}={ds / f'input_{i}.pb'}")]
    run_cli("run", so, *args, "--output-dir", tmp_path / "local")
    run_cli("run", so, *args, "--output-dir", tmp_path / "remote", "--rpc", x86_server.address)
    for i, name in enumerate(outputs):
        got = np.load(tmp_path / "remote" / f"{name}.npy")
        assert np.array_equal(got, np.load(tmp_path / "local" / f"{name}.npy")), name
        assert_close_to_reference(got, read_pb(ds / f"output_{i}.pb"), f"nanotrack-v2-head {name} over RPC")


def test_rpc_on_an_aarch64_server_under_qemu(mnist, tmp_path):
    _, so_a64, x, ref = mnist
    with server(cross_runtime("aarch64"), tmp_path) as srv:
        out = tmp_path / "out.npz"
        proc = run_cli("run", so_a64, "--input", f"Input3={x}", "--output", out, "--bench", 2, "--rpc", srv.address)
        assert_close_to_reference(np.load(out)["Plus214_Output_0"], ref, "mnist-8 on aarch64 over RPC")
        assert "aarch64" in proc.stderr and re.search(r"^median [0-9.e+-]+ ms$", proc.stdout, re.M), proc.stdout
        # An x86 artifact on the aarch64 server: the loader's error travels back to the client.
        proc = run_cli("run", mnist[0], "--input", f"Input3={x}", "--rpc", srv.address, check=False)
        assert proc.returncode == 1, proc.stderr
        assert f"on the RPC server {srv.address}" in proc.stderr and "compiled for x86_64" in proc.stderr \
            and "this machine is aarch64" in proc.stderr and "mnist-x86.so" in proc.stderr, proc.stderr
        assert srv.alive(), srv.text()


# --- Errors that travel back (the session goes on) ---

def test_model_errors_travel_back_to_the_client(x86_server, mnist, tmp_path):
    so_x86, so_a64, x, _ = mnist
    # An aarch64 artifact on the x86 server: the loader's check, in the client's terms.
    proc = run_cli("run", so_a64, "--input", f"Input3={x}", "--rpc", x86_server.address, check=False)
    assert proc.returncode == 1 and "compiled for aarch64" in proc.stderr and "mnist-aarch64.so" in proc.stderr, \
        proc.stderr
    # A wrong input name / a missing input: RunModel's errors.
    proc = run_cli("run", so_x86, "--input", f"nope={x}", "--rpc", x86_server.address, check=False)
    assert proc.returncode == 1 and "nope" in proc.stderr and "Input3" in proc.stderr, proc.stderr
    proc = run_cli("run", so_x86, "--rpc", x86_server.address, check=False)
    assert proc.returncode == 1 and "was not given" in proc.stderr, proc.stderr
    # Not a shared library at all.
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(b"not a library")
    proc = run_cli("run", bogus, "--input", f"Input3={x}", "--rpc", x86_server.address, check=False)
    assert proc.returncode == 1 and "bogus.so" in proc.stderr, proc.stderr
    assert_serves(x86_server, mnist, tmp_path)


def test_run_before_upload_is_an_error_and_the_session_goes_on(x86_server, mnist, tmp_path):
    with connect(x86_server) as sock:
        sock.sendall(hello())
        t, payload = recv_frame(sock)
        assert t == HELLO_REPLY
        version, = struct.unpack("<I", payload[:4])
        assert version == 1
        sock.sendall(frame(RUN, struct.pack("<III", 0, 0, 0)))
        t, payload = recv_frame(sock)
        assert t == ERROR and "no model library was uploaded" in error_text(payload)
        # Same connection: upload the library and run it.
        lib = mnist[0].read_bytes()
        sock.sendall(frame(UPLOAD, string("mnist.so") + struct.pack("<Q", len(lib)) + lib))
        t, payload = recv_frame(sock)
        assert t == MODULE_LOADED and struct.unpack("<II", payload) == (1, 1)
        x = np.load(mnist[2])
        tensor = (string("Input3") + string("float32") + struct.pack("<I", x.ndim) +
                  struct.pack(f"<{x.ndim}q", *x.shape) + struct.pack("<Q", x.nbytes) + x.tobytes())
        sock.sendall(frame(RUN, struct.pack("<III", 1, 0, 1) + tensor))
        t, payload = recv_frame(sock)
        assert t == RUN_RESULT
        median, n = struct.unpack("<dI", payload[:12])
        assert median < 0 and n == 1
        sock.sendall(frame(GOODBYE))
        assert recv_frame(sock) is None


# --- Protocol violations: an Error, the connection closed, the server serving on ---

def test_bad_magic(x86_server, mnist, tmp_path):
    with connect(x86_server) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        expect_error_then_close(sock, "bad magic 'GET '")
    assert "bad magic" in x86_server.text()
    assert_serves(x86_server, mnist, tmp_path)


def test_wrong_version(x86_server, mnist, tmp_path):
    with connect(x86_server) as sock:
        sock.sendall(hello(version=2))
        expect_error_then_close(sock, "version 2", "version 1")
    assert_serves(x86_server, mnist, tmp_path)


@pytest.mark.parametrize("msg_type,length", [(UPLOAD, 1 << 40), (RUN, 1 << 62), (HELLO, 1 << 20), (GOODBYE, 1)])
def test_oversized_length(x86_server, mnist, tmp_path, msg_type, length):
    with connect(x86_server) as sock:
        if msg_type != HELLO:
            sock.sendall(hello())
            assert recv_frame(sock)[0] == HELLO_REPLY
        sock.sendall(frame(msg_type, length=length))
        expect_error_then_close(sock, "over the limit")
    assert_serves(x86_server, mnist, tmp_path)


def test_truncated_messages(x86_server, mnist, tmp_path):
    # A header cut short, then a payload cut short (the client stops writing).
    for data in (MAGIC + b"\x01\x00", hello()[:-3]):
        with connect(x86_server) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            expect_error_then_close(sock, "truncated")
    assert_serves(x86_server, mnist, tmp_path)


def test_malformed_payloads(x86_server, mnist, tmp_path):
    lib = mnist[0].read_bytes()
    bad = [
        frame(HELLO, struct.pack("<I", 1) + struct.pack("<I", 1000) + b"abc"),       # string past the payload
        frame(HELLO, struct.pack("<I", 1) + string("x") + b"extra"),                # bytes left over
        frame(HELLO, struct.pack("<I", 1) + string("bad\nname")),                   # control character
        frame(9, b""),                                                              # unknown type
        frame(RUN_RESULT, b""),                                                     # a server's message
        frame(UPLOAD, string("m.so") + struct.pack("<Q", 0)),                      # before Hello
    ]
    after_hello = [
        frame(UPLOAD, string("m.so") + struct.pack("<Q", len(lib) + 5) + lib),      # size field disagrees
        frame(RUN, struct.pack("<III", 0, 0, 1) + string("Input3") + string("complex64") + struct.pack("<I", 0)),
        frame(RUN, struct.pack("<III", 0, 0, 1) + string("Input3") + string("float32") + struct.pack("<I", 2) +
              struct.pack("<qq", 1 << 40, 1 << 40) + struct.pack("<Q", 16)),        # extents != byte count
        frame(RUN, struct.pack("<III", 0, 0, 1) + string("Input3") + string("float32") + struct.pack("<I", 1) +
              struct.pack("<q", -4) + struct.pack("<Q", 16)),                       # negative extent
        frame(RUN, struct.pack("<III", 0, 0, 100000)),                              # too many tensors
        hello(),                                                                    # a second Hello
    ]
    for data in bad + after_hello:
        with connect(x86_server) as sock:
            if data in after_hello:
                sock.sendall(hello())
                assert recv_frame(sock)[0] == HELLO_REPLY
            sock.sendall(data)
            reply = recv_frame(sock)
            assert reply is not None and reply[0] == ERROR, (data[:40], reply)
            assert recv_frame(sock) is None
    assert x86_server.text().count("protocol error") >= len(bad + after_hello)
    assert_serves(x86_server, mnist, tmp_path)


def test_random_garbage_never_kills_the_server(x86_server, mnist, tmp_path):
    rng = np.random.default_rng(13)
    for i in range(60):
        with connect(x86_server) as sock:
            if i % 2:
                sock.sendall(hello())
                recv_frame(sock)
            body = rng.integers(0, 256, size=int(rng.integers(0, 200)), dtype=np.uint8).tobytes()
            msg_type = int(rng.integers(0, 10))
            sock.sendall(frame(msg_type, body) if i % 3 else body)
            sock.shutdown(socket.SHUT_WR)
            while recv_frame(sock) is not None:
                pass
    assert_serves(x86_server, mnist, tmp_path)


def test_idle_client_is_disconnected(x86_server, mnist, tmp_path):
    # The fixture's server closes sessions idle for 2 s; a silent client must not block it.
    with connect(x86_server) as sock:
        sock.sendall(hello())
        assert recv_frame(sock)[0] == HELLO_REPLY
        start = time.monotonic()
        expect_error_then_close(sock, "timed out")
        assert time.monotonic() - start < 20
    assert_serves(x86_server, mnist, tmp_path)


def test_module_over_the_servers_limit(mnist, tmp_path):
    with server([runtime_bin()], tmp_path, "--max-module-mb", "0.01") as srv:
        # The client knows the limit from the handshake and refuses before sending.
        proc, _ = run_mnist(srv, mnist, tmp_path, check=False)
        assert proc.returncode == 1 and "over the RPC server's limit" in proc.stderr and "--max-module-mb" in proc.stderr
        # A raw client that sends it anyway is cut off.
        with connect(srv) as sock:
            sock.sendall(hello())
            assert recv_frame(sock)[0] == HELLO_REPLY
            lib = mnist[0].read_bytes()
            sock.sendall(frame(UPLOAD, string("m.so") + struct.pack("<Q", len(lib)) + lib))
            expect_error_then_close(sock, "over the limit", "--max-module-mb")
        assert srv.alive()


def test_client_errors(tmp_path, mnist):
    so_x86, _, x, _ = mnist
    for address, fragment in (("127.0.0.1", "expected HOST:PORT"), ("127.0.0.1:99999", "from 1 to 65535"),
                              ("127.0.0.1:1", "cannot connect")):
        proc = run_cli("run", so_x86, "--input", f"Input3={x}", "--rpc", address, check=False)
        assert proc.returncode == 1 and fragment in proc.stderr, proc.stderr
