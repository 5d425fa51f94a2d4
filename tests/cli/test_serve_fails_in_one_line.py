"""``agui-chat serve`` (and ``demo``): a port a stopped server left in TIME-WAIT is free to
use again; a missing ``[server]`` extra and an ``--app`` that is not servable are one line
saying what to do, never a traceback."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_help_and_errors import Outcome, agui_chat  # noqa: F401  (a fixture)
from test_serve_command import serving


def _port_in_time_wait() -> int:
    """A port whose listener is gone but whose last connection is in TIME-WAIT (the server
    side closed first, as a stopped server does)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port: int = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server closes first: its side goes to TIME-WAIT
    client.recv(1)
    client.close()
    listener.close()
    return port


def test_a_port_left_in_time_wait_is_served_on(tmp_path: Path) -> None:
    port = _port_in_time_wait()
    with socket.socket() as plain, pytest.raises(OSError) as caught:
        plain.bind(("127.0.0.1", port))  # what the pre-bind check did before SO_REUSEADDR
    assert caught.value.errno == errno.EADDRINUSE
    with serving(tmp_path, port=port) as (url, _):
        assert url == f"http://127.0.0.1:{port}"


def test_a_port_really_in_use_is_still_one_line(
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = agui_chat("serve", "--port", str(port))
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"agui-chat: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["demo", "--yes"]])
def test_without_the_server_extra_it_is_one_line_naming_the_install(command: list[str]) -> None:
    """Run with starlette and uvicorn made unimportable, as on a base install."""
    code = (
        "import sys\n"
        "sys.modules['starlette'] = sys.modules['uvicorn'] = None\n"
        "from agui_chat.cli import main\n"
        f"sys.exit(main({command!r}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 1, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("agui-chat: error: this command needs the server extra (")
    assert line.endswith("): pip install 'agui-chat[server]'")


@pytest.mark.parametrize(
    ("spec", "kind"), [("os:sep", "str"), ("json:dumps", "function"), ("json:decoder", "module")]
)
def test_an_app_that_is_neither_a_chat_client_nor_asgi_is_one_line(
    spec: str,
    kind: str,
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    out = agui_chat("serve", "--app", spec, "--port", "0")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert out.stderr.strip() == (
        f"agui-chat: error: --app {spec} is a {kind}, neither a ChatClient nor an ASGI app "
        "(nor a factory returning one)"
    )
