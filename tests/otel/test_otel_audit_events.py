"""Each decision the audit trail records is also an OpenTelemetry event on the tool loop's span,
``agui_chat.audit.<decision>``: which call, whether an identified person decided, the grant it
made or used; who decided only with ``capture_content=True``."""

from __future__ import annotations

from typing import Any

import pytest
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    Principal,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient
from fake_clock import on_the_server

RUNS: list[str] = []


@approval_required(allow_remember=True)
@ai_function
def write_file(path: str) -> str:
    """Write a file."""
    RUNS.append(path)
    return f"wrote {path}"


def _client(otel: Recorded, store: InMemoryApprovalStore, **kw: Any) -> Any:
    replies: list[Any] = [
        ChatMessage("assistant", [FunctionCallContent("c1", "write_file", {"path": "a"})]),
        "done",
        ChatMessage("assistant", [FunctionCallContent("c2", "write_file", {"path": "a"})]),
        "done",
    ]
    model = ScriptedChatClient(lambda messages, options: replies.pop(0))
    return (
        ChatClientBuilder(model)
        .use_function_invocation(approval_store=store)
        .use_opentelemetry(**otel.providers, **kw)
        .build()
    )


@pytest.mark.parametrize("capture", [False, True])
async def test_an_event_per_recorded_decision_names_who_only_with_capture_content(
    otel: Recorded, capture: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryApprovalStore(clock=on_the_server(monkeypatch))
    client = _client(otel, store, capture_content=capture)
    options = ChatOptions(tools=[write_file], conversation_id="t1")
    history = [ChatMessage("user", "write a")]
    paused = await client.get_response(history, options)
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    answer = request.create_response(
        True, approver=Principal("alice-7f3"), remember="thread", remember_for=60
    )
    before = len(RUNS)
    await client.get_response([*history, *paused.messages, ChatMessage("user", [answer])], options)
    await client.get_response([ChatMessage("user", "again")], options)  # covered by the grant
    assert RUNS[before:] == ["a", "a"]
    events = [e for s in otel.spans() for e in s.events]
    audited = [e for e in events if e.name.startswith("agui_chat.audit.")]
    assert [e.name for e in audited] == ["agui_chat.audit.approved", "agui_chat.audit.remembered"]
    [grant] = await store.grants()
    approved, remembered = (dict(e.attributes or {}) for e in audited)
    assert approved["gen_ai.tool.call.id"] == "c1"
    assert approved["agui_chat.approver.identified"] is True
    assert (
        approved["agui_chat.grant.id"] == grant.id and approved["agui_chat.grant.scope"] == "thread"
    )
    assert remembered["agui_chat.grant.id"] == grant.id
    dumped = "\n".join(s.to_json() for s in otel.spans())
    assert ("alice-7f3" in dumped) is capture
