"""``agui-chat serve --mcp TARGET`` (as ``python -m agui_chat``, a child process on
127.0.0.1): the MCP server's destructive tool waits for approval over AG-UI and runs once
approved; a server that cannot start stops ``serve`` with an error naming it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_servers import read_log
from mcp_support import SERVER

from agui_chat import ChatMessage, ToolApprovalRequestContent
from agui_chat.agui import AGUIChatClient

HERE = Path(__file__).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _serve(port: int, target: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.pop("AGUI_CHAT_SIGNING_KEY", None)
    serve = [sys.executable, "-m", "agui_chat", "serve", "--port", str(port)]
    return subprocess.Popen(
        [*serve, "--app", "serve_app:model", "--mcp", target],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    children: list[subprocess.Popen[str]] = []
    yield children
    for child in children:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=10)


async def _until_listening(url: str, child: subprocess.Popen[str]) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            assert child.poll() is None, f"serve exited: {child.communicate()[0]}"
            try:
                await http.get(url, timeout=1)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise AssertionError("agui-chat serve --mcp did not answer within 60 s")


async def test_serve_hosts_the_mcp_servers_tools_and_gates_the_destructive_one(
    log: Path, stop: list[subprocess.Popen[str]]
) -> None:
    port = _free_port()
    child = _serve(port, f"{sys.executable} {SERVER} {log}")
    stop.append(child)
    url = f"http://127.0.0.1:{port}/"
    await _until_listening(url, child)
    async with AGUIChatClient(url, timeout=30, max_retries=0) as client:
        history = [ChatMessage("user", "delete note a")]
        paused = await client.get_response(history)
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == "delete_note"
        assert "notes-server" in (request.message or "")
        assert read_log(log) == []
        history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
        done = await client.get_response(history)
    assert done.text == "The tool said: deleted a"
    assert read_log(log) == [("delete_note", {"title": "a"})]


def test_serve_stops_with_an_error_naming_a_server_that_cannot_start(
    stop: list[subprocess.Popen[str]],
) -> None:
    child = _serve(_free_port(), "no-such-mcp-server --flag")
    stop.append(child)
    output, _ = child.communicate(timeout=60)
    assert child.returncode != 0
    assert "no-such-mcp-server" in output
