"""A tiny OpenAI-compatible Chat Completions server (streaming only, as the AG-UI server
asks for) for the CLI tests: it calls ``delete_file`` or ``deploy`` when the user asks, and
answers a tool result with "Done: ...". Served by uvicorn on 127.0.0.1 in a thread."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from live_agent import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1727000000,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n"


def _answer(messages: list[dict[str, Any]], turn: int) -> list[str]:
    last = messages[-1]
    if last["role"] == "tool":
        return [
            _chunk({"role": "assistant", "content": f"Done: {last['content']}"}),
            _chunk({}, "stop"),
        ]
    text = str(last.get("content", "")).lower()
    name, arguments = (
        ("delete_file", {"path": "reports/q3-draft.txt"})
        if "clean" in text
        else ("deploy", {"service": "web"})
        if "deploy" in text
        else (None, None)
    )
    if name is None:
        return [_chunk({"role": "assistant", "content": "Hi."}), _chunk({}, "stop")]
    call = {
        "index": 0,
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return [_chunk({"role": "assistant", "tool_calls": [call]}), _chunk({}, "tool_calls")]


class FakeOpenAI:
    """Records each request body it answered. A ``lazy`` model never calls a tool."""

    def __init__(self, *, lazy: bool = False) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lazy = lazy

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        if self.lazy:
            chunks = [_chunk({"role": "assistant", "content": "Maybe later."}), _chunk({}, "stop")]
        else:
            chunks = _answer(body["messages"], len(self.requests))
        return Response("".join(chunks) + "data: [DONE]\n\n", media_type="text/event-stream")

    @contextmanager
    def serving(self) -> Iterator[str]:
        """Serve on a free port of 127.0.0.1; yields the base URL (``.../v1``)."""
        app = Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"])])
        with serving(app) as url:
            yield f"{url}v1"
