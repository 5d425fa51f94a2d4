"""An interrupt answered through a form built from its JSON schema.

The server's ``book_room`` tool asks the person for details with ``request_input`` and a
``response_schema``. The pause reaches the client as an ``InterruptRequestContent``; this
sample builds a small terminal form from the schema (one prompt per property, typed, with
defaults), validates the answer locally (``create_response`` checks the schema before
anything is sent) and resumes. ``--yes`` (or a non-interactive stdin) fills the form from
the schema's defaults. The server is in-process, so the sample runs offline.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from typing import Any

import httpx

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    InvalidResponseError,
    ai_function,
    request_input,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient

ROOM_FORM = {
    "type": "object",
    "properties": {
        "room": {"type": "string", "enum": ["Ada", "Grace", "Linus"], "default": "Ada"},
        "people": {"type": "integer", "minimum": 1, "maximum": 12, "default": 4},
        "projector": {"type": "boolean", "default": False},
    },
    "required": ["room", "people"],
}


@ai_function
def book_room(day: str) -> str:
    """Book a meeting room; asks the person which one.

    Args:
        day: The day to book.
    """
    answer = request_input(f"Which room on {day}?", response_schema=ROOM_FORM)
    if answer.cancelled:
        return "no room booked"
    details = answer.payload
    extra = " with a projector" if details.get("projector") else ""
    return f"booked {details['room']} for {details['people']} on {day}{extra}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> object:
    last = messages[-1]
    if last.role == "tool":
        result = next(c for c in last.contents if isinstance(c, FunctionResultContent))
        return f"Done: {result.result}."
    return [FunctionCallContent("call_book", "book_room", {"day": "Friday"})]


def fill_form(request: InterruptRequestContent, auto: bool) -> dict[str, Any]:
    """One prompt per schema property; empty input takes the default."""
    schema = request.response_schema or {}
    answer: dict[str, Any] = {}
    print(f"\n{request.message}")
    for name, prop in schema.get("properties", {}).items():
        choices = f" {prop['enum']}" if "enum" in prop else ""
        prompt = f"  {name} ({prop.get('type')}{choices}) [{prop.get('default')}]: "
        text = "" if auto else input(prompt).strip()
        if auto:
            print(prompt + "(default)")
        if not text:
            if "default" in prop:
                answer[name] = prop["default"]
            continue
        answer[name] = text if prop.get("type") == "string" else json.loads(text.lower())
    return answer


async def main() -> None:
    auto = "--yes" in sys.argv or not sys.stdin.isatty()
    # One process: a key made here is enough (a deployment sets AGUI_CHAT_SIGNING_KEY).
    server = AGUIServer(
        ScriptedChatClient(model),
        tools=[book_room],
        signing_key=secrets.token_bytes(32),
        approval_store=InMemoryApprovalStore(),
    )
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://localhost")
    history = [ChatMessage("user", "Book me a room for Friday.")]
    async with http, AGUIChatClient("http://localhost/", http_client=http) as client:
        response = await client.get_response(history)
        while response.input_requests:
            history += response.messages
            answers = []
            for request in response.input_requests:
                assert isinstance(request, InterruptRequestContent)
                while True:
                    try:
                        answers.append(request.create_response(fill_form(request, auto)))
                        break
                    except InvalidResponseError as exc:  # the schema said no: ask again
                        print(f"  {exc}")
            history.append(ChatMessage("user", answers))
            response = await client.get_response(history)
    print(response.text)


if __name__ == "__main__":
    asyncio.run(main())
