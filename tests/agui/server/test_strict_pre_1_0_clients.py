"""Rule ``strict-pre-1.0-client``: a run ends the way a client pinned to ``@ag-ui/core`` 0.0.x
accepts (CopilotKit 1.74 pins 0.0.59, whose outcome schema is strict and knows only ``success``
and ``interrupt``) when its request names no ``protocolVersion``: a 1.0 client must name it
unless it takes the server for an older one, so a request without it reads outcomes as 0.x
defines them. ``AGUIServer(strict_pre_1_0_clients=True)`` applies the rule to every request,
``False`` to none."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from server_support import Tools, approve, outcome, run_input, scripted, user

from agui_chat import ChatResponseUpdate, FunctionCallContent, FunctionResultContent
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server

#: The frontend tool CopilotKit's ``useHumanInTheLoop`` declares (recorded body).
CONFIRM = {
    "name": "confirm_action",
    "description": "Ask the person to confirm an action before you take it",
    "parameters": {
        "type": "object",
        "properties": {"action": {"type": "string"}},
        "required": ["action"],
    },
}
CALL = [FunctionCallContent("call_9f", "confirm_action", {"action": "restart the web service"})]


def body(
    *messages: dict[str, Any], run: str = "r1", thread: str = "t1", version: str | None = None
) -> dict[str, Any]:
    """A run input as CopilotKit sends it (no ``protocolVersion``), or naming ``version``."""
    wire = run_input(*messages, run=run, thread=thread, tools=[CONFIRM])
    del wire["protocolVersion"]
    if version is not None:
        wire["protocolVersion"] = version
    return wire


async def test_a_request_naming_no_protocol_version_gets_the_outcome_0_x_defines() -> None:
    agent = agui_server(scripted(CALL))  # nothing configured
    events = await agent.post(body(user("please confirm it")))
    assert outcome(events) == {"type": "success"}
    started = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert started == ["call_9f"]  # the call a 0.x client finds in the events


async def test_a_request_naming_protocol_version_1_0_gets_pending_tool_call_ids() -> None:
    agent = agui_server(scripted(CALL))
    events = await agent.post(body(user("please confirm it"), version="1.0"))
    assert outcome(events) == {"type": "success", "pendingToolCallIds": ["call_9f"]}


async def test_turned_off_a_request_naming_no_version_gets_pending_tool_call_ids() -> None:
    agent = agui_server(scripted(CALL), strict_pre_1_0_clients=False)
    events = await agent.post(body(user("please confirm it")))
    assert outcome(events) == {"type": "success", "pendingToolCallIds": ["call_9f"]}


async def test_turned_on_a_request_naming_1_0_gets_the_outcome_0_x_defines() -> None:
    agent = agui_server(scripted(CALL), strict_pre_1_0_clients=True)
    events = await agent.post(body(user("please confirm it"), version="1.0"))
    assert outcome(events) == {"type": "success"}


class Cancelled(ScriptedChatClient):
    """A model whose stream ends cancelled."""

    def __init__(self) -> None:
        super().__init__(lambda messages, options: "stop")

    async def get_streaming_response(
        self, messages: Any, options: Any = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        yield ChatResponseUpdate("assistant", "stop", message_id="m1")
        yield ChatResponseUpdate(finish_reason="cancelled")


@pytest.mark.parametrize(("version", "ended"), [(None, None), ("1.0", {"type": "cancelled"})])
async def test_a_cancelled_run_has_its_outcome_only_for_a_client_naming_1_0(
    version: str | None, ended: dict[str, Any] | None
) -> None:
    agent = agui_server(Cancelled())
    events = await agent.post(body(user("stop it"), version=version))
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1].get("outcome") == ended


async def test_the_rule_is_logged_once_per_thread(caplog: pytest.LogCaptureFixture) -> None:
    agent = agui_server(scripted("hi", "hi again", "hello"))
    with caplog.at_level(logging.INFO, logger="agui_chat.agui"):
        await agent.post(body(user("hello"), thread="ta"))
        await agent.post(body(user("hello"), thread="ta", run="r2"))
        await agent.post(body(user("hello"), thread="tb"))
    lines = [r.getMessage() for r in caplog.records if "strict-pre-1.0-client" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "'ta'" in lines[0] and "'tb'" in lines[1]
    assert "names no protocolVersion" in lines[0]


async def test_with_the_rule_the_outcome_is_one_a_strict_pre_1_0_schema_accepts(
    tools: Tools,
) -> None:
    agent = agui_server(scripted(CALL), tools=[tools.lookup()], strict_pre_1_0_clients=True)
    events = await agent.post(body(user("please confirm it")))
    assert outcome(events) == {"type": "success"}
    started = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [(e["toolCallId"], e["toolCallName"]) for e in started] == [
        ("call_9f", "confirm_action")
    ]


async def test_the_frontend_tools_result_reaches_the_model_on_the_follow_up() -> None:
    def check(messages: Any, options: Any) -> str:
        results = [c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]
        return "confirmed: " + str([r.result for r in results])

    model = scripted(CALL, check)
    agent = agui_server(model, strict_pre_1_0_clients=True)
    await agent.post(body(user("please confirm it")))
    follow_up = body(
        user("please confirm it"),
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "call_9f",
                    "type": "function",
                    "function": {
                        "name": "confirm_action",
                        "arguments": json.dumps({"action": "restart the web service"}),
                    },
                }
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "call_9f", "content": '{"confirmed":true}'},
        run="r2",
    )
    events = await agent.post(follow_up)
    said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert said == "confirmed: ['{\"confirmed\":true}']"
    assert outcome(events) == {"type": "success"}


@pytest.mark.parametrize("strict", [True, False], ids=["with-the-rule", "without"])
async def test_a_run_that_resumes_an_approval_and_calls_the_frontend_tool(
    tools: Tools, strict: bool
) -> None:
    # Every run is ended the rule's way, not only a first one: here the resumed run of an
    # approval, whose model then calls CopilotKit's useHumanInTheLoop tool.
    delete = [FunctionCallContent("call_1", "delete_file", {"path": "reports/q3.txt"})]
    agent = agui_server(
        scripted(delete, CALL), tools=[tools.delete_file()], strict_pre_1_0_clients=strict
    )
    _, history, (interrupt,) = await agent.pause(user("delete it, then confirm"), tools=[CONFIRM])
    events = await agent.resume(history, approve(interrupt), tools=[CONFIRM])
    assert tools.count("delete_file") == 1
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == [
        "confirm_action"
    ]
    expected = (
        {"type": "success"} if strict else {"type": "success", "pendingToolCallIds": ["call_9f"]}
    )
    assert outcome(events) == expected
