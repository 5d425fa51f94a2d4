"""Rule ``strict-pre-1.0-client``: ``AGUIServer(strict_pre_1_0_clients=True)`` ends a run the
way a client pinned to ``@ag-ui/core`` 0.0.x accepts (CopilotKit 1.74 pins 0.0.59, whose
outcome schema is strict and knows only ``success`` and ``interrupt``). Explicit, never
guessed from the request: the same body gets the 1.0 outcome without it."""

from __future__ import annotations

import json
from typing import Any

from server_support import Tools, outcome, run_input, scripted, user

from agui_chat import FunctionCallContent, FunctionResultContent
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


def body(*messages: dict[str, Any], run: str = "r1") -> dict[str, Any]:
    wire = run_input(*messages, run=run, tools=[CONFIRM])
    del wire["protocolVersion"]  # CopilotKit sends none: the rule must not depend on it
    return wire


async def test_without_the_rule_a_frontend_call_is_listed_in_pending_tool_call_ids() -> None:
    agent = agui_server(scripted(CALL))
    events = await agent.post(body(user("please confirm it")))
    assert outcome(events) == {"type": "success", "pendingToolCallIds": ["call_9f"]}


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
