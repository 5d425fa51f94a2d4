"""An MCP server's ``url`` with a password in its userinfo (or a key in its query): the
password reaches the server as the Basic ``Authorization`` httpx would have made of it, and
the toolset shows neither anywhere (``repr``, ``target``, errors, log lines at every level,
the SDK's and httpx's included), against a closed port and against a live server."""

from __future__ import annotations

import base64
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import build
from mcp_support import serving

from agui_chat import ToolError
from agui_chat.mcp import MCPToolset

SECRET = "Zq-SECRET-7731"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    logged = [record.getMessage() for record in caplog.records]
    logged += [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    return "\n".join(logged)


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in ("mcp", "httpx", "httpcore", "agui_chat"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


async def test_a_password_in_the_url_is_never_shown_against_a_closed_port(
    all_logs: pytest.LogCaptureFixture,
) -> None:
    port = closed_port()
    toolset = MCPToolset(url=f"http://user:{SECRET}@127.0.0.1:{port}/mcp?token={SECRET}")
    with pytest.raises(ToolError) as failed:
        async with toolset:
            pass
    shown = "\n".join([repr(toolset), toolset.target, str(failed.value)])
    assert f"127.0.0.1:{port}/mcp?token=***" in str(failed.value)
    assert SECRET not in shown + everything_logged(all_logs)


async def test_a_password_in_the_url_reaches_the_server_and_is_never_shown(
    tmp_path: Path, all_logs: pytest.LogCaptureFixture
) -> None:
    authorizations: list[str] = []
    app = build(tmp_path / "effects.log").streamable_http_app()

    async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            authorizations.append(headers.get(b"authorization", b"").decode())
        await app(scope, receive, send)

    async with serving(recording) as base:
        url = base.replace("http://", f"http://user:{SECRET}@") + "/mcp"
        async with MCPToolset(url=url, approval="never") as toolset:
            assert toolset.tools  # connected and listed through the credentials
            shown = "\n".join([repr(toolset), toolset.target])
    basic = base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert authorizations and set(authorizations) == {f"Basic {basic}"}
    assert base.removeprefix("http://") in shown
    assert SECRET not in shown + everything_logged(all_logs)


def test_a_url_refused_at_construction_is_named_without_its_password() -> None:
    with pytest.raises(ValueError) as refused:
        MCPToolset(url=f"ftp://user:{SECRET}@127.0.0.1/mcp")
    assert "ftp://user:***@127.0.0.1/mcp" in str(refused.value)
    assert SECRET not in str(refused.value)
