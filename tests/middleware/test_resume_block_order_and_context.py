"""The resumed block: an approved call runs with the invocation context of round trip 0 and
the history as the model will see it; rejections' and results' messages sit together before
anything the caller sent after the answers."""

from __future__ import annotations

from typing import Any

from loop_support import Ask, call, describe, scripted, seen

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionInvocationContext,
    FunctionInvokingChatClient,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from meai_texts import REJECTED


class Files:
    def __init__(self) -> None:
        self.deleted: list[str] = []

        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        self.options = ChatOptions(tools=[approval_required(delete_file)])


def _request(call_id: str, path: str) -> ToolApprovalRequestContent:
    return ToolApprovalRequestContent(
        f"approval_{call_id}", call(call_id, "delete_file", path=path)
    )


async def test_a_resumed_call_sees_round_trip_zero_and_the_history_before_its_result(
    ask: Ask,
) -> None:
    files = Files()
    contexts: list[tuple[int, list[str], int, int]] = []

    def invoker(context: FunctionInvocationContext) -> Any:
        contexts.append(
            (
                context.iteration,
                describe(context.messages),
                context.function_call_index,
                context.function_count,
            )
        )
        return context.function.invoke(context.arguments)

    r1 = _request("c1", "a")
    history = [
        ChatMessage("user", "clean up"),
        ChatMessage("assistant", [r1]),
        ChatMessage("user", [r1.create_response(True)]),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model, function_invoker=invoker), history, files.options)

    assert files.deleted == ["a"]
    assert contexts == [
        (0, ["user: clean up", 'assistant: call c1 delete_file {"path": "a"}'], 0, 1)
    ]


async def test_rejections_and_results_come_together_before_the_callers_later_text(
    ask: Ask,
) -> None:
    files = Files()
    r1, r2 = _request("c1", "a"), _request("c2", "b")
    history = [
        ChatMessage("user", "clean up"),
        ChatMessage("assistant", [r1, r2]),
        ChatMessage(
            "user",
            [r1.create_response(False), r2.create_response(True), TextContent("and then stop")],
        ),
    ]
    model = scripted("done")
    response = await ask(FunctionInvokingChatClient(model), history, files.options)

    assert files.deleted == ["b"]
    assert seen(model) == [
        "user: clean up",
        'assistant: call c1 delete_file {"path": "a"} | call c2 delete_file {"path": "b"}',
        f"tool: result c1 {REJECTED}",
        "tool: result c2 deleted b",
        "user: and then stop",
    ]
    assert describe(response.messages)[:3] == [
        'assistant: call c1 delete_file {"path": "a"} | call c2 delete_file {"path": "b"}',
        f"tool: result c1 {REJECTED}",
        "tool: result c2 deleted b",
    ]
