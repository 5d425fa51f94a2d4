"""``agui-chat chat`` against endpoints that cannot be reached: one line each, and the line
tells the cause apart (issue 25) — a name that does not resolve, a port nothing listens on,
TLS spoken to a plain HTTP server, plain HTTP spoken to a TLS server, an untrusted
certificate — against real sockets on 127.0.0.1, never the internet.

The unresolvable name is ``no!such-host.invalid``: glibc refuses a host name with a ``!``
before asking any resolver (``res_hnok``), and ``.invalid`` never resolves anywhere (RFC
6761), so the lookup fails on this machine without a packet sent.
"""

from __future__ import annotations

import http.server
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_chat_command import chat
from test_errors_a_person_can_act_on import error_lines


def _one_error(url: str) -> str:
    out = chat(url, "hello\n")
    assert "Traceback" not in out.stdout + out.stderr
    lines = error_lines(out.stdout)
    assert len(lines) == 1, out.stdout
    assert out.returncode == 1
    return lines[0]


@contextmanager
def plain_http_server() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def tls_server(tmp_path: Path) -> Iterator[int]:
    """A server on 127.0.0.1 that speaks TLS (a self-signed certificate) and nothing else."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command: apt-get install openssl")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass
            finally:
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_a_name_that_does_not_resolve_says_dns() -> None:
    line = _one_error("http://no!such-host.invalid:9/")
    assert line == (
        "error: cannot connect to no!such-host.invalid:9: the host name does not resolve (DNS); "
        "check the host name in the URL"
    )


def test_a_port_nothing_listens_on_says_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert _one_error(f"http://127.0.0.1:{port}/") == (
        f"error: cannot connect to 127.0.0.1:{port}: connection refused: nothing listens on "
        "that port. Is the server running? (start one with: agui-chat serve)"
    )


def test_https_to_a_plain_http_server_says_tls() -> None:
    with plain_http_server() as port:
        line = _one_error(f"https://127.0.0.1:{port}/")
    assert line == (
        f"error: cannot connect to 127.0.0.1:{port}: the TLS handshake failed: does it speak "
        "TLS (is it http://, not https://)?"
    )


def test_plain_http_to_a_tls_server_says_it_may_speak_tls(tmp_path: Path) -> None:
    with tls_server(tmp_path) as port:
        line = _one_error(f"http://127.0.0.1:{port}/")
    assert line == (
        f"error: cannot connect to 127.0.0.1:{port}: it reset the connection unanswered (a TLS "
        "server does to plain HTTP); try https://"
    )


def test_an_untrusted_certificate_says_so(tmp_path: Path) -> None:
    with tls_server(tmp_path) as port:
        line = _one_error(f"https://127.0.0.1:{port}/")
    assert line == (
        f"error: cannot connect to 127.0.0.1:{port}: its TLS certificate is not trusted; check "
        "the URL's host and the certificate's issuer"
    )


def test_an_http_error_status_is_its_own_line() -> None:
    """HTTP answered, with an error status: not a connection failure, the status is named."""
    with plain_http_server() as port:
        line = _one_error(f"http://127.0.0.1:{port}/")
    assert line == (
        f"error: http://127.0.0.1:{port}/ answered 501 with an HTML page: is this an AG-UI "
        "endpoint?"
    )
