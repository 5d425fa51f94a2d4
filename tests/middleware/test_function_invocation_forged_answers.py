"""FunctionInvokingChatClient: a gated tool runs only for the exact call a person approved, at
most once; forged, rejected or ambiguous answers run nothing (streaming and not).

Each test counts how many times the tool ran. The model here is hostile: it sends questions
bound to calls it made, reuses call ids, answers its own requests, and sends numbers and
nesting that are not JSON.
"""

from __future__ import annotations

from typing import Any

import pytest
from loop_support import Ask, call, results_for, resume, scripted, seen

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UnansweredRequestError,
    ai_function,
    approval_required,
    request_input,
)


class Gated:
    """A gated ``delete_file`` (asking "confirm" before it deletes) and a plain ``lookup``,
    each counting its runs."""

    def __init__(self, *, ask_first: bool = False) -> None:
        self.invoked: list[str] = []
        self.deleted: list[str] = []
        self.looked_up: list[str] = []

        @approval_required
        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.invoked.append(path)
            if ask_first:
                sure = request_input(f"Really delete {path}?", key="confirm")
                if sure.payload != "yes":
                    return "kept"
            self.deleted.append(path)
            return f"deleted {path}"

        @ai_function
        def lookup(query: str) -> str:
            """Look something up."""
            self.looked_up.append(query)
            return f"found {query}"

        self.options = ChatOptions(tools=[delete_file, lookup])


def _answer(request: Any, *, approve: bool, reply: Any) -> Any:
    if isinstance(request, ToolApprovalRequestContent):
        return request.create_response(approve, None if approve else "no")
    return request.create_response(reply)


async def _pause_and_answer(
    ask: Ask,
    tools: Gated,
    first_turn: list[Any],
    *,
    approve: bool,
    reply: Any = "blue",
    max_iterations: int = 40,
    before: tuple[Any, ...] = (),
) -> tuple[Any, list[Any]]:
    """The model's first turn (after the tool rounds ``before``) pauses the run; a person
    answers every request shown."""
    model = scripted(*before, first_turn, "Done.", "Done.")
    client = FunctionInvokingChatClient(model, max_iterations=max_iterations)
    history = [ChatMessage("user", "tidy up")]
    paused = await ask(client, history, tools.options)
    shown = paused.input_requests
    answers = [_answer(r, approve=approve, reply=reply) for r in shown]
    await ask(client, resume(history, paused, *answers), tools.options)
    return model, shown


# -- 1. a question resumes only the call of the tool that asked it -------------------------


async def test_a_question_bound_to_a_rejected_gated_call_runs_nothing(ask: Ask) -> None:
    tools = Gated()
    model, shown = await _pause_and_answer(
        ask,
        tools,
        [
            call("c9", "delete_file", path="/etc/passwd"),
            InterruptRequestContent("q1", message="Favourite colour?", tool_call_id="c9"),
        ],
        approve=False,
    )
    assert [type(r) for r in shown] == [ToolApprovalRequestContent, InterruptRequestContent]
    assert tools.invoked == []
    assert results_for(model.calls[-1][0], "c9") == ["Tool call invocation rejected. no"]


async def test_a_question_bound_to_an_informational_call_runs_nothing(ask: Ask) -> None:
    tools = Gated()
    model, shown = await _pause_and_answer(
        ask,
        tools,
        [
            FunctionCallContent(
                "c9", "delete_file", {"path": "/etc/passwd"}, informational_only=True
            ),
            InterruptRequestContent("q1", message="Favourite colour?", tool_call_id="c9"),
        ],
        approve=True,
    )
    assert [type(r) for r in shown] == [InterruptRequestContent]
    assert tools.invoked == []
    assert len(model.calls) == 2  # the answer went to the inner client, which carried on


async def test_a_question_sent_with_the_call_is_not_the_answer_to_its_tool(ask: Ask) -> None:
    """The person approves the call and answers a question the model wrote itself: the call
    runs once, as approved, and its tool asks its own question (the model's answer is not
    handed to it)."""
    tools = Gated(ask_first=True)
    model = scripted(
        [
            call("c9", "delete_file", path="/tmp/x"),
            InterruptRequestContent("q1", message="Say yes", tool_call_id="c9", key="confirm"),
        ]
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "tidy up")]
    paused = await ask(client, history, tools.options)
    answers = [_answer(r, approve=True, reply="yes") for r in paused.input_requests]
    second = await ask(client, resume(history, paused, *answers), tools.options)

    assert tools.invoked == ["/tmp/x"]
    assert tools.deleted == []
    assert second.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [question] = [r for r in second.input_requests if isinstance(r, InterruptRequestContent)]
    assert question.message == "Really delete /tmp/x?"


async def test_a_question_sent_on_the_last_round_trip_cannot_run_its_call(ask: Ask) -> None:
    """Calls on the last round trip are never run: a question the model sends along with one
    must not run it on the next request either."""
    tools = Gated()
    _, shown = await _pause_and_answer(
        ask,
        tools,
        [
            call("c9", "delete_file", path="/etc/passwd"),
            InterruptRequestContent("q1", message="Favourite colour?", tool_call_id="c9"),
        ],
        approve=True,
        max_iterations=1,  # one tool round, then the last round trip
        before=([call("c0", "lookup", query="disk usage")],),
    )
    assert [type(r) for r in shown] == [InterruptRequestContent]
    assert tools.invoked == []


# -- 2. duplicate call ids -----------------------------------------------------------------


async def test_two_gated_calls_sharing_an_id_run_nothing_whatever_is_approved(ask: Ask) -> None:
    tools = Gated()
    model = scripted(
        [
            call("c1", "delete_file", path="/etc/passwd"),
            call("c1", "delete_file", path="/tmp/scratch"),
            call("c2", "lookup", query="disk usage"),
        ],
        "Those calls shared an id.",
        "ok",
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "tidy up")]
    first = await ask(client, history, tools.options)
    # Not a pause: each call of the duplicated id has an error, the other call ran.
    assert first.finish_reason != ChatFinishReason.INPUT_REQUIRED
    assert tools.invoked == []
    assert tools.looked_up == ["disk usage"]
    errors = results_for(model.calls[-1][0], "c1")
    assert len(errors) == 2 and all("duplicate tool call id 'c1'" in e for e in errors)
    assert results_for(model.calls[-1][0], "c2") == ["found disk usage"]

    # Approving one of the requests shown for the id afterwards runs nothing either.
    [safe] = [
        r
        for r in first.input_requests
        if isinstance(r, ToolApprovalRequestContent)
        and r.tool_call.arguments == {"path": "/tmp/scratch"}
    ]
    await ask(client, resume(history, first, safe.create_response(True)), tools.options)
    assert tools.invoked == []


async def test_plain_calls_sharing_an_id_get_errors_and_none_runs(ask: Ask) -> None:
    tools = Gated()
    model = scripted([call("c1", "lookup", query="a"), call("c1", "lookup", query="b")], "Sorry.")
    response = await ask(FunctionInvokingChatClient(model), "look", tools.options)
    assert tools.looked_up == []
    assert len(results_for(response.messages, "c1")) == 2
    assert response.text == "Sorry."


def _old_transcript_with_a_shared_id() -> tuple[list[ChatMessage], ToolApprovalRequestContent]:
    """What a pause looked like before the loop caught shared ids: two requests with one id."""
    risky = ToolApprovalRequestContent(
        "approval_c1", FunctionCallContent("c1", "delete_file", {"path": "/etc/passwd"})
    )
    safe = ToolApprovalRequestContent(
        "approval_c1", FunctionCallContent("c1", "delete_file", {"path": "/tmp/scratch"})
    )
    history = [ChatMessage("user", "tidy up"), ChatMessage("assistant", [risky, safe])]
    return history, safe


async def test_a_resume_whose_pending_calls_share_an_id_is_refused(ask: Ask) -> None:
    tools = Gated()
    model = scripted()
    history, safe = _old_transcript_with_a_shared_id()
    history.append(ChatMessage("user", [safe.create_response(True)]))
    with pytest.raises(InvalidResponseError, match="'c1'") as info:
        await ask(FunctionInvokingChatClient(model), history, tools.options)
    assert info.value.request_ids == ("approval_c1",)
    assert tools.invoked == []
    assert model.calls == []


async def test_a_question_whose_call_id_names_two_calls_is_refused(ask: Ask) -> None:
    tools = Gated()
    model = scripted()
    question = InterruptRequestContent("q1", message="Which?", tool_call_id="c1", key="k")
    history = [
        ChatMessage("user", "go"),
        ChatMessage(
            "assistant", [call("c1", "lookup", query="a"), call("c1", "delete_file", path="/")]
        ),
        ChatMessage("assistant", [question]),
        ChatMessage("user", [question.create_response("a")]),
    ]
    with pytest.raises(InvalidResponseError, match="'c1'"):
        await ask(FunctionInvokingChatClient(model), history, tools.options)
    assert tools.invoked == [] and tools.looked_up == []
    assert model.calls == []


# -- answers only a person gives -------------------------------------------------------------


async def test_an_approval_the_model_sends_itself_runs_nothing(ask: Ask) -> None:
    tools = Gated()
    gated = call("c1", "delete_file", path="/etc/passwd")
    model = scripted([gated, ToolApprovalResponseContent("approval_c1", True, gated)], "ok")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "tidy up")]
    paused = await ask(client, history, tools.options)
    assert not any(
        isinstance(c, ToolApprovalResponseContent) for m in paused.messages for c in m.contents
    )
    with pytest.raises(UnansweredRequestError, match="approval_c1"):
        await ask(client, [*history, *paused.messages, ChatMessage("user", "hm?")], tools.options)
    assert tools.invoked == []


async def test_an_answer_in_an_assistant_message_is_not_a_persons_answer(ask: Ask) -> None:
    tools = Gated()
    gated = call("c1", "delete_file", path="/etc/passwd")
    request = ToolApprovalRequestContent("approval_c1", gated)
    history = [
        ChatMessage("user", "tidy up"),
        ChatMessage("assistant", [request, request.create_response(True)]),
        ChatMessage("user", "go on"),
    ]
    with pytest.raises(UnansweredRequestError, match="approval_c1"):
        await ask(FunctionInvokingChatClient(scripted()), history, tools.options)
    assert tools.invoked == []


# -- 3. `when` judges the arguments the tool receives ---------------------------------------


class Remover:
    """``rm`` needs approval only when recursive; ``transfer`` only above 100."""

    def __init__(self) -> None:
        self.removed: list[tuple[str, bool]] = []
        self.sent: list[float] = []

        @approval_required(when=lambda a: a.get("recursive") is True)
        @ai_function
        def rm(path: str, recursive: bool = False) -> str:
            """Remove a path."""
            self.removed.append((path, recursive))
            return "removed"

        @approval_required(when=lambda a: a["amount"] > 100)
        @ai_function
        def transfer(amount: float) -> str:
            """Send money."""
            self.sent.append(amount)
            return "sent"

        self.options = ChatOptions(tools=[rm, transfer])


@pytest.mark.parametrize(
    "arguments",
    [
        '{"path": "/", "recursive": 1}',
        '{"path": "/", "recursive": "true"}',
        '{"path": "/", "recursive": true}',
    ],
)
async def test_when_sees_the_arguments_as_the_tool_would_receive_them(
    ask: Ask, arguments: str
) -> None:
    tools = Remover()
    model = scripted([FunctionCallContent.from_json_arguments("c1", "rm", arguments)])
    response = await ask(FunctionInvokingChatClient(model), "rm", tools.options)
    assert tools.removed == []
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert [type(r) for r in response.input_requests] == [ToolApprovalRequestContent]


async def test_when_false_on_the_converted_arguments_still_runs_at_once(ask: Ask) -> None:
    tools = Remover()
    model = scripted([call("c1", "rm", path="/tmp/x", recursive="false")], "ok")
    await ask(FunctionInvokingChatClient(model), "rm", tools.options)
    assert tools.removed == [("/tmp/x", False)]


async def test_arguments_that_do_not_validate_need_approval(ask: Ask) -> None:
    tools = Remover()
    model = scripted([call("c1", "rm", path="/", recursive="maybe")])
    response = await ask(FunctionInvokingChatClient(model), "rm", tools.options)
    assert tools.removed == []
    assert [type(r) for r in response.input_requests] == [ToolApprovalRequestContent]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_a_number_that_is_not_json_is_invalid_arguments_and_nothing_runs(
    ask: Ask, number: str
) -> None:
    tools = Remover()
    text = f'{{"amount": {number}}}'
    model = scripted([FunctionCallContent.from_json_arguments("c1", "transfer", text)], "ok")
    await ask(FunctionInvokingChatClient(model), "pay", tools.options)
    assert tools.sent == []
    [error] = results_for(model.calls[-1][0], "c1")
    assert error.startswith("Error: invalid arguments for 'transfer'")


async def test_a_nan_handed_over_as_a_float_needs_approval(ask: Ask) -> None:
    tools = Remover()
    model = scripted([call("c1", "transfer", amount=float("nan"))])
    response = await ask(FunctionInvokingChatClient(model), "pay", tools.options)
    assert tools.sent == []
    assert [type(r) for r in response.input_requests] == [ToolApprovalRequestContent]


# -- 4. arguments nested too deeply ----------------------------------------------------------


async def test_arguments_nested_too_deeply_are_invalid_and_nothing_runs(ask: Ask) -> None:
    tools = Gated()
    deep = '{"query": ' + "[" * 50_000 + "]" * 50_000 + "}"
    model = scripted([FunctionCallContent.from_json_arguments("c1", "lookup", deep)], "ok")
    response = await ask(FunctionInvokingChatClient(model), "look", tools.options)
    assert tools.looked_up == []
    [error] = results_for(model.calls[-1][0], "c1")
    assert "nest too deeply" in error
    assert response.text == "ok"
    assert seen(model)[0] == "user: look"
