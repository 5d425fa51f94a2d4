"""Structured output through AG-UI (issue 18): the AG-UI client forwards the schema in
``forwardedProps.response_format`` (docs/structured.md), the server hands it to its model,
and the client validates the reply into ``.value`` (repairing it when asked)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from pydantic import BaseModel

from agui_chat import ChatMessage, ChatOptions, ChatResponseFormat
from agui_chat.agui import AGUIChatClient
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server


class Answer(BaseModel):
    city: str
    confidence: float


async def test_the_schema_travels_in_forwarded_props_and_the_reply_validates() -> None:
    replies = ["not json at all", '{"city": "Paris", "confidence": 0.9}']
    model = ScriptedChatClient(lambda messages, options: replies.pop(0))
    bodies: list[dict[str, Any]] = []
    server = agui_server(model).app

    async def record(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server),
        base_url="http://localhost",
        event_hooks={"request": [record]},
    )
    async with http, AGUIChatClient("http://localhost/", http_client=http, max_retries=0) as client:
        response = await client.get_response(
            [ChatMessage("user", "Where?")], ChatOptions(), response_format=Answer, retries=1
        )
    assert response.value == Answer(city="Paris", confidence=0.9)
    forwarded = bodies[0]["forwardedProps"]["response_format"]
    assert forwarded["type"] == "json_schema"
    assert forwarded["json_schema"]["name"] == "Answer"
    assert forwarded["json_schema"]["strict"] is True
    assert forwarded["json_schema"]["schema"]["required"] == ["city", "confidence"]
    # The server's model received the same schema as its ChatOptions.response_format.
    fmt = model.calls[0][1].response_format if model.calls[0][1] else None
    assert isinstance(fmt, ChatResponseFormat) and fmt.schema == forwarded["json_schema"]["schema"]
    # The repair went as a second run carrying the errors.
    assert len(bodies) == 2
    assert "not JSON" in bodies[1]["messages"][-1]["content"]
