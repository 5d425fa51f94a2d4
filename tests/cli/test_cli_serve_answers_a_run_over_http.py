"""Issue 5 item 6: ``agui-chat serve`` (here ``python -m agui_chat serve``) really serves an
AG-UI endpoint with uvicorn on 127.0.0.1: a client gets a whole run, and the stream passes
ag-ui-validate. The server runs in a child process that is stopped when the test ends."""

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
from ag_ui_validate import ValidatorOptions
from ag_ui_validate.transport import TransportOptions, validate_endpoint

from agui_chat import ChatFinishReason
from agui_chat.agui import AGUIChatClient

#: Seconds the child may take to start answering (it imports the package and uvicorn).
STARTUP = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["AGUI_CHAT_SIGNING_KEY"] = "cli-serve-test-key-0123456789"
    child = subprocess.Popen(
        [sys.executable, "-m", "agui_chat", "serve", "--port", str(port)],
        cwd=tmp_path,  # a key and no --store: its SQLite file goes there, not into the clone
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        yield f"http://127.0.0.1:{port}/", child
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


async def wait_until_listening(url: str, child: subprocess.Popen[str]) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(int(STARTUP / 0.1)):
            assert child.poll() is None, "agui-chat serve exited"
            try:
                await http.get(url, timeout=1)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise AssertionError(f"agui-chat serve did not answer within {STARTUP}s")


async def test_serve_answers_a_run_on_loopback_with_a_valid_stream(
    served: tuple[str, subprocess.Popen[str]],
) -> None:
    url, child = served
    await wait_until_listening(url, child)

    async with AGUIChatClient(url, timeout=30, max_retries=0) as client:
        response = await client.get_response("hello")
    result = await validate_endpoint(
        url,
        TransportOptions(
            validator=ValidatorOptions(),
            input={
                "threadId": "t1",
                "runId": "r1",
                "messages": [{"id": "u1", "role": "user", "content": "hello"}],
            },
            timeout_ms=30_000,
        ),
    )

    assert response.finish_reason == ChatFinishReason.STOP
    assert "offline demo model" in response.text
    assert result.status == 200
    problems = [d for d in result.report.diagnostics if d.severity in ("error", "warning")]
    assert problems == [], problems
    child.terminate()
    output, _ = child.communicate(timeout=10)
    assert f"Uvicorn running on {url.rstrip('/')}" in output  # uvicorn's own word on the bind
