"""docs/errors.md's recipe for ``AskAgainError`` runs as printed: a server restarted with
another key since the pause refuses the approval (``APPROVAL_KEY_CHANGED``), the recipe
takes the pause out of the history with ``without_pause`` and sends it again, the agent
pauses anew, and the approved call runs once; the call of the same batch that needed no
approval ran before the restart and is not run again. ``without_pause`` on its own: what
it takes out and what it keeps."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    without_pause,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.testing import ScriptedChatClient
from agui_server import BASE_URL, agui_server

DOC = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()


def recipe() -> Any:
    """The ``send`` function the doc prints, defined from the doc's own block."""
    section = DOC.split("### Asking the person again", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    scope: dict[str, Any] = {}
    exec(block.group(1), scope)
    return scope["send"]


class Restartable:
    """An ASGI app whose server can be swapped, as a restart with a new key would."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


async def test_the_recipe_asks_again_and_the_approved_call_runs_once() -> None:
    ran: list[str] = []

    @ai_function
    def lookup(path: str) -> str:
        """Look a file up."""
        ran.append("lookup")
        return f"{path} is 3 kB"

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append("delete_file")
        return f"deleted {path}"

    def model(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
        """Calls what has not run yet (the lookup, then the deletion); then it is done."""
        contents = [c for m in messages for c in m.contents]
        done = {c.call_id for c in contents if isinstance(c, FunctionResultContent)}
        calls = [c for c in contents if isinstance(c, FunctionCallContent)]
        names = {c.name for c in calls if c.call_id in done}
        if "delete_file" in names:
            return "Done."
        return [
            FunctionCallContent(f"call_{uuid.uuid4().hex[:8]}", name, {"path": "a.txt"})
            for name in ("lookup", "delete_file")
            if name not in names
        ]

    def server(key: str) -> Any:
        made = agui_server(ScriptedChatClient(model), tools=[lookup, delete_file], signing_key=key)
        return made.app

    app = Restartable(server("the-first-key-0123456789abcdef"))
    send = recipe()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)
    async with AGUIChatClient(BASE_URL, http_client=http) as client:
        history = [ChatMessage("user", "Delete a.txt")]
        paused = await send(client, history)
        assert ran == ["lookup"]  # needed no approval: ran with the pause
        (request,) = paused.input_requests
        history.append(ChatMessage("user", [request.create_response(True)]))
        app.app = server("another-key-after-a-restart-0123")
        again = await send(client, history)  # refused (the key changed), asked again
        (new_request,) = again.input_requests
        assert isinstance(new_request, ToolApprovalRequestContent)
        assert new_request.tool_call.name == "delete_file"
        assert new_request.tool_call.call_id != request.tool_call.call_id  # a new pause
        assert request.request_id not in str([c.to_dict() for m in history for c in m.contents])
        history.append(ChatMessage("user", [new_request.create_response(True)]))
        done = await send(client, history)
    assert done.text == "Done."
    assert ran == ["lookup", "delete_file"]  # each once


def _call(call_id: str, name: str = "delete_file") -> FunctionCallContent:
    return FunctionCallContent(call_id, name, {"path": "a.txt"})


def test_without_pause_takes_out_the_pause_its_calls_and_answers_and_keeps_what_ran() -> None:
    lookup, delete = _call("c1", "lookup"), _call("c2")
    request = ToolApprovalRequestContent("approval_c2", delete)
    history = [
        ChatMessage("user", "Delete a.txt"),
        ChatMessage("assistant", [TextContent("On it."), lookup, delete, request]),
        ChatMessage("tool", [FunctionResultContent("c1", "3 kB")]),
        ChatMessage("user", [request.create_response(True)]),
    ]
    before = [m.to_dict() for m in history]
    kept = without_pause(history)
    assert [m.to_dict() for m in history] == before  # the caller's list is left as it was
    assert [(m.role, [type(c).__name__ for c in m.contents]) for m in kept] == [
        ("user", ["TextContent"]),
        ("assistant", ["TextContent", "FunctionCallContent"]),
        ("tool", ["FunctionResultContent"]),
    ]
    assert kept[1].contents[1] == lookup
    assert kept[0] is history[0] and kept[2] is history[2]  # untouched messages as they were


def test_without_pause_takes_out_every_question_the_unfinished_call_asked() -> None:
    deploy = _call("c1", "deploy")
    first = InterruptRequestContent("input_c1_a", message="Which build?", tool_call_id="c1")
    second = InterruptRequestContent("input_c1_b", message="Which region?", tool_call_id="c1")
    history = [
        ChatMessage("user", "Deploy"),
        ChatMessage("assistant", [deploy, first]),
        ChatMessage("user", [InterruptResponseContent("input_c1_a", {"build": 7})]),
        ChatMessage("assistant", [second]),
        ChatMessage("user", [InterruptResponseContent("input_c1_b", "eu")]),
    ]
    assert [m.text for m in without_pause(history)] == ["Deploy"]


def test_without_pause_leaves_a_call_that_has_its_result_and_a_history_without_a_pause() -> None:
    delete = _call("c2")
    request = ToolApprovalRequestContent("approval_c2", delete)
    ran = [
        ChatMessage("user", "Delete a.txt"),
        ChatMessage("assistant", [delete, request]),
        ChatMessage("user", [request.create_response(True)]),
        ChatMessage("tool", [FunctionResultContent("c2", "deleted a.txt")]),
    ]
    kept = without_pause(ran)
    assert [[type(c).__name__ for c in m.contents] for m in kept] == [
        ["TextContent"],
        ["FunctionCallContent"],
        ["FunctionResultContent"],
    ]
    plain = [ChatMessage("user", "hi"), ChatMessage("assistant", "hello")]
    assert without_pause(plain) == plain
