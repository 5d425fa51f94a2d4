"""The README's "Inside a FastAPI or Starlette app" runs as printed: ``app.mount("/agent",
AGUIServer(...))`` served by uvicorn on 127.0.0.1, and an ``AGUIChatClient`` given the mount's
URL without its trailing slash gets its answer (Starlette's ``307`` to ``/agent/`` followed
once, then used), as does one given the URL with the slash."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agui_chat import ChatMessage, FunctionCallContent, FunctionResultContent, approval_required
from agui_chat.agui import AGUIChatClient
from agui_chat.testing import ScriptedChatClient
from live_uvicorn import Started, start_uvicorn, stop_all

pytest.importorskip("fastapi", reason="needs FastAPI: pip install fastapi (the dev set has it)")

README = Path(__file__).resolve().parents[1] / "README.md"


@approval_required
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def reply(messages: Any, options: Any) -> Any:
    if any(isinstance(c, FunctionResultContent) for c in messages[-1].contents):
        return "Done."
    return [FunctionCallContent(f"call_{len(messages)}", "delete_file", {"path": "a.txt"})]


@pytest.fixture
async def base_url(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    section = README.read_text().split("## Inside a FastAPI or Starlette app", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    scope: dict[str, Any] = {"model": ScriptedChatClient(reply), "delete_file": delete_file}
    exec(block.group(1), scope)
    started: Started = []
    try:
        yield await start_uvicorn(scope["app"], started)
    finally:
        await stop_all(started)


@pytest.mark.parametrize("path", ["/agent", "/agent/"])
async def test_a_client_of_the_mount_gets_the_agent_with_or_without_the_slash(
    base_url: str, path: str
) -> None:
    async with AGUIChatClient(base_url + path) as client:
        history = [ChatMessage("user", "Delete a.txt")]
        paused = await client.get_response(history)
        assert client.endpoint == f"{base_url}/agent/"  # the redirect's URL, from now on
        (request,) = paused.input_requests
        assert request.tool_call.name == "delete_file"
        history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
        done = await client.get_response(history)
    assert done.text == "Done."
