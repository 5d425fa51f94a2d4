"""ag-ui-langgraph 0.0.47 (the most used Python AG-UI server), the real thing from its own
virtualenv, hosting a LangGraph graph of our own (``servers/langgraph_server.py``) in its
default configuration (``CUSTOM`` ``on_interrupt``, no outcome: dialect ``langgraph``) and
in its AG-UI 1.0 configuration (``emit_interrupt_outcome=True``, which also keeps sending
``on_interrupt``: read once), and a LangChain agent with ``HumanInTheLoopMiddleware``
(dialect ``langchain-hitl``), against our client. Every test counts the tool's runs."""

from __future__ import annotations

from typing import Any

import pytest
from interop_support import PeerServer

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    InterruptRequestContent,
    RunError,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient

GRAPHS = ["/graph", "/graph-outcome"]


class Conversation:
    """Our client on one thread of a peer endpoint, collecting its warnings."""

    def __init__(self, server: PeerServer, path: str, **options: Any) -> None:
        self.warnings: list[str] = []
        self.client = AGUIChatClient(server.url(path), on_warning=self.warnings.append, **options)
        self.history: list[ChatMessage] = []

    async def say(self, *contents: Any) -> Any:
        if len(contents) == 1 and isinstance(contents[0], str):
            self.history.append(ChatMessage("user", contents[0]))
        else:
            self.history.append(ChatMessage("user", list(contents)))
        response = await self.client.get_response(self.history)
        self.history += response.messages
        return response

    def dialect_warnings(self, dialect: str) -> list[str]:
        return [w for w in self.warnings if f"dialect '{dialect}'" in w]


async def converse(server: PeerServer, path: str, prompt: str, answer: Any, **options: Any) -> Any:
    conversation = Conversation(server, path, **options)
    try:
        paused = await conversation.say(prompt)
        assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
        conversation.paused = paused  # type: ignore[attr-defined]
        conversation.final = await conversation.say(*[answer(r) for r in paused.input_requests])  # type: ignore[attr-defined]
    finally:
        await conversation.client.aclose()
    return conversation


# -- a graph of our own, both configurations ----------------------------------------------------


@pytest.mark.parametrize("path", GRAPHS)
async def test_an_approved_call_runs_once(langgraph_server: PeerServer, path: str) -> None:
    file = f"lg{path.replace('/', '-')}-approve.txt"
    talk = await converse(
        langgraph_server, path, f"delete {file}", lambda r: r.create_response(True)
    )
    (request,) = talk.paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.message == "Approve delete_file?"
    assert (request.tool_call.name, request.tool_call.arguments) == ("delete_file", {"path": file})
    assert talk.final.text == f"Tool said: deleted {file}"
    assert talk.final.finish_reason == ChatFinishReason.STOP
    assert langgraph_server.runs("delete_file", path=file) == 1
    # The default configuration is read in the dialect, warned once; the 1.0 one needs none.
    assert len(talk.dialect_warnings("langgraph")) == (1 if path == "/graph" else 0)


@pytest.mark.parametrize("path", GRAPHS)
@pytest.mark.parametrize("how", ["reject", "cancel"])
async def test_a_rejected_or_cancelled_call_never_runs(
    langgraph_server: PeerServer, path: str, how: str
) -> None:
    file = f"lg{path.replace('/', '-')}-{how}.txt"
    answer = (
        (lambda r: r.create_response(False, "keep it"))
        if how == "reject"
        else (lambda r: r.cancel())
    )
    talk = await converse(langgraph_server, path, f"delete {file}", answer)
    assert talk.final.text == (
        "Tool said: rejected: keep it" if how == "reject" else "Tool said: rejected"
    )
    assert langgraph_server.runs("delete_file", path=file) == 0


@pytest.mark.parametrize("path", GRAPHS)
async def test_a_questions_answer_reaches_the_final_text(
    langgraph_server: PeerServer, path: str
) -> None:
    city = f"Rome{path.replace('/', '-')}"
    talk = await converse(
        langgraph_server, path, "what is the weather?", lambda r: r.create_response({"city": city})
    )
    (request,) = talk.paused.input_requests
    assert isinstance(request, InterruptRequestContent)
    assert request.message == "Which city?"
    assert request.response_schema is not None and request.response_schema["required"] == ["city"]
    assert talk.final.text == f"Tool said: sunny in {city}"
    assert langgraph_server.runs("get_weather", city=city) == 1


@pytest.mark.parametrize("path", GRAPHS)
async def test_several_pending_interrupts_are_answered_at_once_by_langgraph_id(
    langgraph_server: PeerServer, path: str
) -> None:
    a, b = (f"lg{path.replace('/', '-')}-many-{x}.txt" for x in "ab")
    talk = await converse(
        langgraph_server,
        path,
        f"delete {a} and {b}",
        lambda r: r.create_response(r.tool_call.arguments["path"] == a),
    )
    assert len(talk.paused.input_requests) == 2
    assert talk.final.text == f"Tool said: deleted {a}; rejected"
    assert langgraph_server.runs("delete_file", path=a) == 1
    assert langgraph_server.runs("delete_file", path=b) == 0


async def test_in_plain_agui_the_default_pause_is_not_seen(langgraph_server: PeerServer) -> None:
    conversation = Conversation(langgraph_server, "/graph", dialect="agui")
    try:
        response = await conversation.say("delete lg-agui-only.txt")
    finally:
        await conversation.client.aclose()
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []
    assert langgraph_server.runs("delete_file", path="lg-agui-only.txt") == 0


# -- LangChain's HumanInTheLoopMiddleware --------------------------------------------------------


@pytest.mark.parametrize("path", ["/hitl", "/hitl-batched"])
async def test_langchain_approve_runs_once(langgraph_server: PeerServer, path: str) -> None:
    file = f"lc{path.replace('/', '-')}-approve.txt"
    talk = await converse(
        langgraph_server, path, f"delete {file}", lambda r: r.create_response(True)
    )
    (request,) = talk.paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert (request.tool_call.call_id, request.tool_call.name) == ("call_del_1", "delete_file")
    assert request.tool_call.arguments == {"path": file}
    assert talk.final.text == f"Tool said: deleted {file}"
    assert langgraph_server.runs("delete_file", path=file) == 1
    assert len(talk.dialect_warnings("langchain-hitl")) == 1


@pytest.mark.parametrize("path", ["/hitl", "/hitl-batched"])
@pytest.mark.parametrize("how", ["reject", "cancel"])
async def test_langchain_reject_and_cancel_never_run(
    langgraph_server: PeerServer, path: str, how: str
) -> None:
    file = f"lc{path.replace('/', '-')}-{how}.txt"
    answer = (
        (lambda r: r.create_response(False, "keep it"))
        if how == "reject"
        else (lambda r: r.cancel())
    )
    talk = await converse(langgraph_server, path, f"delete {file}", answer)
    reason = "keep it" if how == "reject" else "cancelled"
    assert talk.final.text == (
        f"Tool said: User rejected the tool call for `delete_file` with reason: {reason}"
    )
    assert langgraph_server.runs("delete_file", path=file) == 0


async def test_langchain_edit_runs_the_edited_call(langgraph_server: PeerServer) -> None:
    talk = await converse(
        langgraph_server,
        "/hitl",
        "delete lc-edit.txt",
        lambda r: r.create_response(True, edited_arguments={"path": "lc-edited.txt"}),
    )
    assert talk.final.text.endswith("deleted lc-edited.txt")
    assert langgraph_server.runs("delete_file", path="lc-edit.txt") == 0
    assert langgraph_server.runs("delete_file", path="lc-edited.txt") == 1


async def test_a_refused_answer_is_the_peers_run_error_and_nothing_is_retried(
    langgraph_server: PeerServer,
) -> None:
    # Plain AG-UI 1.0 answers ({"approved": true}) are not LangChain decisions: the peer
    # refuses them, and that refusal is what the caller sees; nothing runs, nothing retries.
    conversation = Conversation(langgraph_server, "/hitl", dialect=("langgraph",))
    try:
        paused = await conversation.say("delete lc-refused.txt")
        (request,) = paused.input_requests
        with pytest.raises(RunError):
            await conversation.say(request.create_response(True))
    finally:
        await conversation.client.aclose()
    assert langgraph_server.runs("delete_file", path="lc-refused.txt") == 0
