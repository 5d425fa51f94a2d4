"""A MESSAGES_SNAPSHOT is reconciled by id with the messages the request sent."""

from __future__ import annotations

import json
from typing import Any

import httpx

from agui_chat import ChatMessage, ChatOptions, ChatResponse
from agui_chat.agui import AGUIChatClient


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _client(events: list[dict[str, Any]]) -> AGUIChatClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=_sse(events)
        )

    return AGUIChatClient(
        "http://agent/", http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )


SNAPSHOT_RUN = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
    {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"id": "u1", "role": "user", "content": "hello (as the server keeps it)"},
            {"id": "a9", "role": "assistant", "content": "from the server's memory"},
        ],
    },
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
]


async def test_the_snapshot_update_carries_the_thread_reconciled_by_id() -> None:
    history = [
        ChatMessage("user", "hello", message_id="u1"),
        ChatMessage("user", "a message the server no longer has", message_id="u2"),
    ]
    async with _client(SNAPSHOT_RUN) as client:
        updates = [
            u
            async for u in client.get_streaming_response(history, ChatOptions(conversation_id="t1"))
        ]
    snapshot = next(
        u for u in updates if (u.raw_representation or {}).get("type") == "MESSAGES_SNAPSHOT"
    )
    thread = (snapshot.additional_properties or {})["agui_messages"]
    # Same id replaced in place, unseen appended, held-but-absent dropped.
    assert [(m["id"], m["content"]) for m in thread] == [
        ("u1", "hello (as the server keeps it)"),
        ("a9", "from the server's memory"),
    ]


async def test_the_response_carries_the_reconciled_thread_too() -> None:
    async with _client(SNAPSHOT_RUN) as client:
        response: ChatResponse = await client.get_response(
            [ChatMessage("user", "hello", message_id="u1")], ChatOptions(conversation_id="t1")
        )
    thread = (response.additional_properties or {})["agui_messages"]
    assert [m["id"] for m in thread] == ["u1", "a9"]
