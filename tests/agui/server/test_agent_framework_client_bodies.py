"""The request bodies Microsoft Agent Framework's ``AGUIChatClient`` (agent-framework-ag-ui
1.7.0) sends, as recorded on the wire (``data/agent-framework-client-requests.json``, from
shared/peer-wire): snake_case ``thread_id`` / ``run_id``, no ``tools`` / ``context`` /
``forwardedProps`` / ``state``, and a resume without the assistant tool-call message. The
server reads them under the compatibility rule ``agent-framework-snake-case`` (DESIGN §7)
and runs the approved call exactly once."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from server_support import Tools, interrupts, of_type, outcome, scripted

from agui_chat import ChatMessage, ChatOptions, FunctionCallContent, FunctionResultContent
from agui_chat.agui.server._peer_compat import AGENT_FRAMEWORK_SNAKE_CASE
from agui_server import agui_server

RECORDED = json.loads(
    (Path(__file__).parent / "data" / "agent-framework-client-requests.json").read_text()
)
FIRST: dict[str, Any] = RECORDED[0]["body"]
RESUME: dict[str, Any] = RECORDED[1]["body"]


def delete_report() -> list[FunctionCallContent]:
    return [FunctionCallContent("call_del_1", "delete_file", {"path": "reports/q3.txt"})]


def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    results = [
        c.result for m in messages for c in m.contents if isinstance(c, FunctionResultContent)
    ]
    return f"Tool said: {results[-1]}"


def resumed_with(interrupt_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The recorded resume body, answering the interrupt our server issued (the recording
    answers Agent Framework's own server's id)."""
    body = copy.deepcopy(RESUME)
    body["resume"][0]["interruptId"] = interrupt_id
    body["resume"][0]["payload"] = payload
    return body


async def test_the_recorded_bodies_are_read_as_camel_case_and_say_so_once_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = scripted("Hello.")
    with caplog.at_level(logging.DEBUG, logger="agui_chat.agui"):
        events = await agui_server(model).post(FIRST)
    assert (events[0]["threadId"], events[0]["runId"]) == ("t-maf", FIRST["run_id"])
    assert outcome(events) == {"type": "success"}
    rules = [r for r in caplog.records if AGENT_FRAMEWORK_SNAKE_CASE in r.getMessage()]
    assert len(rules) == 1 and rules[0].levelno == logging.DEBUG
    assert "thread_id, run_id" in rules[0].getMessage()
    # (the reading of the body warns nothing; "agui_chat.server" may warn that another test's
    # server, not yet garbage-collected, shares this one's key and audience)
    assert not [
        r for r in caplog.records if r.levelno >= logging.WARNING and r.name == "agui_chat.agui"
    ]


async def test_its_tool_calls_history_shape_is_read_and_other_unknown_members_still_stripped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = {
        **FIRST,
        "extra_member": 1,
        "messages": [
            *FIRST["messages"],
            {
                "id": "a1",
                "role": "assistant",
                "content": "",
                # Agent Framework passes a function call's arguments through as it holds them.
                "tool_calls": [
                    {
                        "id": "call_del_1",
                        "type": "function",
                        "function": {"name": "delete_file", "arguments": {"path": "x.txt"}},
                    }
                ],
            },
            {"id": "t1", "role": "tool", "toolCallId": "call_del_1", "content": "deleted x.txt"},
        ],
    }
    model = scripted("Done.")
    with caplog.at_level(logging.DEBUG, logger="agui_chat.agui"):
        await agui_server(model).post(body)
    received, _ = model.calls[0]
    call = received[1].contents[0]
    assert isinstance(call, FunctionCallContent)
    assert (call.call_id, call.name) == ("call_del_1", "delete_file")
    assert call.arguments == {"path": "x.txt"}
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "agui_chat.agui"
    ]
    assert warnings == ["RunAgentInput: stripped unknown property /extra_member"]


async def test_camel_case_wins_when_both_spellings_are_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = await agui_server(scripted("Hello.")).post({**FIRST, "threadId": "t-camel"})
    assert events[0]["threadId"] == "t-camel"
    assert "unknown property /thread_id" in caplog.text  # stripped as unknown, with a warning


async def test_its_approval_round_trip_runs_the_approved_call_exactly_once(tools: Tools) -> None:
    model = scripted(delete_report(), echo)
    agent = agui_server(model, tools=[tools.delete_file()])
    paused = await agent.post(FIRST)
    assert paused[0]["threadId"] == "t-maf"
    (interrupt,) = interrupts(paused)
    assert tools.count("delete_file") == 0

    resumed = await agent.post(resumed_with(interrupt["id"], {"approved": True}))
    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == "call_del_1" and result["content"] == "deleted reports/q3.txt"
    assert outcome(resumed) == {"type": "success"}
    assert tools.runs["delete_file"] == [{"path": "reports/q3.txt"}]

    # The client sends the same resume again (a retry): the kept result, nothing re-run.
    again = await agent.post(resumed_with(interrupt["id"], {"approved": True}))
    assert [e["content"] for e in of_type(again, "TOOL_CALL_RESULT")] == ["deleted reports/q3.txt"]
    assert tools.count("delete_file") == 1


async def test_its_rejection_runs_nothing(tools: Tools) -> None:
    model = scripted(delete_report(), echo)
    agent = agui_server(model, tools=[tools.delete_file()])
    (interrupt,) = interrupts(await agent.post(FIRST))
    resumed = await agent.post(resumed_with(interrupt["id"], {"approved": False}))
    assert outcome(resumed) == {"type": "success"}
    assert tools.count("delete_file") == 0
