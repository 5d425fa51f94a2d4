"""MEAI parity, issue 16 items 1, 2 and 8: the transcript of a resumed run, and what the model
receives, as MEAI's own tests expect them (FunctionInvokingChatClientApprovalsTests.cs:
same inputs, same model outputs), streaming and not. Where DESIGN §3 differs on purpose
(rule 2: an answer with no request runs nothing), the test says so."""

from __future__ import annotations

from typing import Any

import pytest
from meai_support import Funcs, invoke, shape

from agui_chat import (
    ApprovalRequiredAIFunction,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    TextContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UnknownResponseError,
    current_invocation,
)
from meai_texts import REJECTED

FUNC2 = {"i": 42}


def fcc(call_id: str, name: str, arguments: dict[str, Any] | None = None) -> FunctionCallContent:
    return FunctionCallContent(call_id, name, arguments)


def frc(call_id: str, result: str) -> FunctionResultContent:
    return FunctionResultContent(call_id, result)


def tarc(
    call_id: str, name: str, arguments: dict[str, int] | None = None
) -> ToolApprovalRequestContent:
    return ToolApprovalRequestContent(f"ficc_{call_id}", fcc(call_id, name, arguments))


def taresp(
    call_id: str,
    name: str,
    approved: bool,
    arguments: dict[str, int] | None = None,
    reason: str | None = None,
) -> ToolApprovalResponseContent:
    return ToolApprovalResponseContent(
        f"ficc_{call_id}", approved, fcc(call_id, name, arguments), reason=reason
    )


def msg(role: str, *contents: object, message_id: str | None = None) -> ChatMessage:
    return ChatMessage(role, list(contents), message_id=message_id)  # type: ignore[arg-type]


def options_for(f: Funcs, *, gate1: bool = True, gate2: bool = False) -> ChatOptions:
    return ChatOptions(
        tools=[
            ApprovalRequiredAIFunction(f.func1) if gate1 else f.func1,
            ApprovalRequiredAIFunction(f.func2) if gate2 else f.func2,
        ]
    )


HELLO = msg("user", TextContent("hello"))
WORLD = msg("assistant", TextContent("world"))
BOTH_CALLS = msg("assistant", fcc("callId1", "Func1"), fcc("callId2", "Func2", FUNC2))
BOTH_RESULTS = msg("tool", frc("callId1", "Result 1"), frc("callId2", "Result 2: 42"))


def both_requests(message_id: str | None = "resp1") -> ChatMessage:
    return msg(
        "assistant",
        tarc("callId1", "Func1"),
        tarc("callId2", "Func2", FUNC2),
        message_id=message_id,
    )


async def test_approved_approval_responses_are_executed(streaming: bool) -> None:
    f = Funcs()
    answers = msg("user", taresp("callId1", "Func1", True), taresp("callId2", "Func2", True, FUNC2))
    response, inner = await invoke(
        options_for(f),
        [HELLO, both_requests(), answers],
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, BOTH_RESULTS]],
    )
    assert shape(response.messages) == shape([BOTH_CALLS, BOTH_RESULTS, WORLD])
    # The rebuilt call message keeps the id of the message that held the requests.
    assert response.messages[0].message_id == "resp1"
    assert f.runs == ["Func1", "Func2(42)"]
    assert response.usage is not None and response.usage.input_token_count == inner.usage_total


async def test_approved_responses_are_grouped_in_one_message_when_the_message_id_is_none(
    streaming: bool,
) -> None:
    f = Funcs()
    answers = msg("user", taresp("callId1", "Func1", True), taresp("callId2", "Func2", True, FUNC2))
    response, _ = await invoke(
        options_for(f, gate2=True),
        [HELLO, both_requests(None), answers],
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, BOTH_RESULTS]],
    )
    assert shape(response.messages) == shape([BOTH_CALLS, BOTH_RESULTS, WORLD])
    assert f.runs == ["Func1", "Func2(42)"]


async def test_approved_responses_from_separate_request_messages_are_executed(
    streaming: bool,
) -> None:
    f = Funcs()
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("assistant", tarc("callId2", "Func2", FUNC2), message_id="resp2"),
        msg("user", taresp("callId1", "Func1", True)),
        msg("user", taresp("callId2", "Func2", True, FUNC2)),
    ]
    calls = [
        msg("assistant", fcc("callId1", "Func1")),
        msg("assistant", fcc("callId2", "Func2", FUNC2)),
    ]
    response, _ = await invoke(
        options_for(f),
        history,
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, *calls, BOTH_RESULTS]],
    )
    assert shape(response.messages) == shape([*calls, BOTH_RESULTS, WORLD])
    assert [m.message_id for m in response.messages[:2]] == ["resp1", "resp2"]
    assert f.runs == ["Func1", "Func2(42)"]


async def test_rejected_approval_responses_are_failed(streaming: bool) -> None:
    f = Funcs()
    answers = msg(
        "user", taresp("callId1", "Func1", False), taresp("callId2", "Func2", False, FUNC2)
    )
    rejected = msg(
        "tool",
        frc("callId1", REJECTED),
        frc("callId2", REJECTED),
    )
    response, _ = await invoke(
        options_for(f),
        [HELLO, both_requests(), answers],
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, rejected]],
    )
    assert shape(response.messages) == shape([BOTH_CALLS, rejected, WORLD])
    assert f.runs == []


async def test_mixed_approved_and_rejected_responses_are_executed_and_failed(
    streaming: bool,
) -> None:
    """MEAI sends the rejections' and the results' tool messages apart, and its streaming
    transcript merges them; ours keeps them apart in both modes (the transcripts of the two
    modes are equal after coalescing, issue 16 item 10)."""
    f = Funcs()
    answers = msg(
        "user", taresp("callId1", "Func1", False), taresp("callId2", "Func2", True, FUNC2)
    )
    rejected = msg("tool", frc("callId1", REJECTED))
    result = msg("tool", frc("callId2", "Result 2: 42"))
    response, _ = await invoke(
        options_for(f),
        [HELLO, both_requests(), answers],
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, rejected, result]],
    )
    assert shape(response.messages) == shape([BOTH_CALLS, rejected, result, WORLD])
    assert f.runs == ["Func2(42)"]


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        ("User denied permission for this operation", "User denied permission for this operation"),
        ("keep it", "keep it"),
        ("Not now!", "Not now!"),
        ("/etc/passwd", "/etc/passwd"),
        (None, ""),
        ("", ""),
        ("   ", ""),
    ],
)
async def test_rejection_texts_reach_the_model(
    streaming: bool, reason: str | None, text: str
) -> None:
    f = Funcs()
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("user", taresp("callId1", "Func1", False, reason=reason)),
    ]
    expected = (REJECTED + " " + text).strip()
    rejected = msg("tool", frc("callId1", expected))
    response, _ = await invoke(
        options_for(f),
        history,
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, msg("assistant", fcc("callId1", "Func1")), rejected]],
    )
    assert shape(response.messages) == shape(
        [msg("assistant", fcc("callId1", "Func1")), rejected, WORLD]
    )


async def test_mixed_custom_and_default_reasons_and_an_approval(streaming: bool) -> None:
    f = Funcs()
    history = [
        HELLO,
        msg(
            "assistant",
            tarc("callId1", "Func1"),
            tarc("callId2", "Func2", FUNC2),
            tarc("callId3", "Func1"),
            message_id="resp1",
        ),
        msg(
            "user",
            taresp("callId1", "Func1", False, reason="Custom rejection for Func1"),
            taresp("callId2", "Func2", False, FUNC2),
            taresp("callId3", "Func1", True),
        ),
    ]
    calls = msg(
        "assistant",
        fcc("callId1", "Func1"),
        fcc("callId2", "Func2", FUNC2),
        fcc("callId3", "Func1"),
    )
    rejected = msg(
        "tool",
        frc("callId1", "Tool call invocation rejected. Custom rejection for Func1"),
        frc("callId2", REJECTED),
    )
    result = msg("tool", frc("callId3", "Result 1"))
    response, _ = await invoke(
        options_for(f),
        history,
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, calls, rejected, result]],
    )
    assert shape(response.messages) == shape([calls, rejected, result, WORLD])
    assert f.runs == ["Func1"]


async def test_approved_inputs_are_executed_and_a_new_gated_call_becomes_a_request(
    streaming: bool,
) -> None:
    f = Funcs()
    answers = msg("user", taresp("callId1", "Func1", True), taresp("callId2", "Func2", True, FUNC2))
    response, _ = await invoke(
        options_for(f, gate1=False, gate2=True),
        [HELLO, both_requests(), answers],
        [[msg("assistant", fcc("callId2", "Func2", {"i": 3}))]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, BOTH_RESULTS]],
    )
    new_request = ToolApprovalRequestContent("approval_callId2", fcc("callId2", "Func2", {"i": 3}))
    assert shape(response.messages) == shape(
        [BOTH_CALLS, BOTH_RESULTS, msg("assistant", new_request)]
    )
    assert f.runs == ["Func1", "Func2(42)"]


async def test_already_executed_approvals_are_ignored(streaming: bool) -> None:
    f = Funcs()
    history = [
        HELLO,
        both_requests(),
        msg("user", taresp("callId1", "Func1", True), taresp("callId2", "Func2", True, FUNC2)),
        BOTH_CALLS,
        BOTH_RESULTS,
        msg("assistant", tarc("callId3", "Func1"), message_id="resp2"),
        msg("user", taresp("callId3", "Func1", True)),
    ]
    call3 = msg("assistant", fcc("callId3", "Func1"))
    result3 = msg("tool", frc("callId3", "Result 1"))
    world = msg("assistant", TextContent("World"))
    response, _ = await invoke(
        options_for(f, gate1=False, gate2=True),
        history,
        [[world]],
        streaming=streaming,
        expected_inputs=[[HELLO, BOTH_CALLS, BOTH_RESULTS, call3, result3]],
    )
    assert shape(response.messages) == shape([call3, result3, world])
    assert response.messages[0].message_id == "resp2"
    assert f.runs == ["Func1"]


async def test_a_rejection_marks_the_request_and_the_answer_call_informational(
    streaming: bool,
) -> None:
    """Item 2 (MEAI #7468): both call objects are marked, in place, on the caller's history."""
    f = Funcs()
    request_call, answer_call = fcc("callId1", "Func1"), fcc("callId1", "Func1")
    history = [
        HELLO,
        msg("assistant", ToolApprovalRequestContent("ficc_callId1", request_call)),
        msg("user", ToolApprovalResponseContent("ficc_callId1", False, answer_call)),
    ]
    client_history = list(history)
    from meai_support import MEAITestClient

    from agui_chat import FunctionInvokingChatClient

    client = FunctionInvokingChatClient(MEAITestClient([[WORLD]]))
    if streaming:
        [u async for u in client.get_streaming_response(client_history, options_for(f))]
    else:
        await client.get_response(client_history, options_for(f))
    assert request_call.informational_only and answer_call.informational_only


async def test_an_approved_call_is_marked_informational_and_a_replay_skips_it_by_flag(
    streaming: bool,
) -> None:
    """Item 2: once an approved call has its result, its request and answer say so; a loop
    that sees the answered request again (a stacked loop, a replay without the result) does
    not ask for an answer again and runs nothing."""
    f = Funcs()
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("user", taresp("callId1", "Func1", True)),
    ]
    from meai_support import MEAITestClient

    from agui_chat import FunctionInvokingChatClient

    client = FunctionInvokingChatClient(MEAITestClient([[WORLD], [WORLD]]))
    if streaming:
        [u async for u in client.get_streaming_response(history, options_for(f))]
    else:
        response = await client.get_response(history, options_for(f))
        assert response.messages[0].contents[0].informational_only  # type: ignore[attr-defined]
    request = history[1].contents[0]
    answer = history[2].contents[0]
    assert isinstance(request, ToolApprovalRequestContent)
    assert isinstance(answer, ToolApprovalResponseContent)
    assert request.tool_call.informational_only and answer.tool_call.informational_only  # type: ignore[attr-defined]
    # Replayed without the result: skipped by the flag, not run again.
    await client.get_response(history, options_for(f))
    assert f.runs == ["Func1"]


async def test_an_approved_call_that_sets_terminate_stops_before_the_model_is_called(
    streaming: bool,
) -> None:
    runs: list[str] = []

    def func1() -> str:
        """Func1."""
        runs.append("Func1")
        context = current_invocation()
        assert context is not None
        context.terminate = True
        return "Result 1"

    from agui_chat import ai_function

    options = ChatOptions(tools=[ApprovalRequiredAIFunction(ai_function(name="Func1")(func1))])
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("user", taresp("callId1", "Func1", True)),
    ]
    response, inner = await invoke(options, history, [], streaming=streaming)
    assert inner.received == []  # the inner client was never called
    assert shape(response.messages) == shape(
        [msg("assistant", fcc("callId1", "Func1")), msg("tool", frc("callId1", "Result 1"))]
    )
    assert runs == ["Func1"]


async def test_results_stay_next_to_their_calls_ahead_of_trailing_messages(
    streaming: bool,
) -> None:
    f = Funcs()
    trailing = msg("user", TextContent("By the way, please keep the answer concise."))
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("user", taresp("callId1", "Func1", True)),
        trailing,
    ]
    call1 = msg("assistant", fcc("callId1", "Func1"))
    result1 = msg("tool", frc("callId1", "Result 1"))
    response, _ = await invoke(
        options_for(f),
        history,
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, call1, result1, trailing]],
    )
    assert shape(response.messages) == shape([call1, result1, WORLD])


async def test_results_go_before_what_is_left_of_the_answer_message(streaming: bool) -> None:
    f = Funcs()
    history = [
        HELLO,
        msg("assistant", tarc("callId1", "Func1"), message_id="resp1"),
        msg("user", taresp("callId1", "Func1", True), TextContent("please proceed")),
    ]
    call1 = msg("assistant", fcc("callId1", "Func1"))
    result1 = msg("tool", frc("callId1", "Result 1"))
    response, _ = await invoke(
        options_for(f),
        history,
        [[WORLD]],
        streaming=streaming,
        expected_inputs=[[HELLO, call1, result1, msg("user", TextContent("please proceed"))]],
    )
    assert shape(response.messages) == shape([call1, result1, WORLD])


async def test_with_a_service_thread_the_rebuilt_calls_are_not_sent_to_the_service(
    streaming: bool,
) -> None:
    """MEAI: with a conversation id the service holds the calls, so only the results go."""
    f = Funcs()
    options = options_for(f)
    options.conversation_id = "test-conversation"
    history = [
        msg("assistant", tarc("callId1", "Func1"), tarc("callId2", "Func2", FUNC2)),
        msg("user", taresp("callId1", "Func1", True), taresp("callId2", "Func2", True, FUNC2)),
    ]
    response, _ = await invoke(
        options, history, [[WORLD]], streaming=streaming, expected_inputs=[[BOTH_RESULTS]]
    )
    assert shape(response.messages) == shape([BOTH_CALLS, BOTH_RESULTS, WORLD])


async def test_rule2_an_approval_with_no_request_runs_nothing(streaming: bool) -> None:
    """Different on purpose (DESIGN §3 rule 2, §4): MEAI runs an answer's own tool call when
    no request is in the history; a caller could then run any call it writes."""
    f = Funcs()
    history = [HELLO, msg("user", taresp("callId1", "Func1", True))]
    with pytest.raises(UnknownResponseError):
        await invoke(options_for(f), history, [[WORLD]], streaming=streaming)
    assert f.runs == []


async def test_an_edited_call_that_asks_a_question_is_shown_once_with_its_edit(
    streaming: bool,
) -> None:
    """Ours beyond MEAI (an approved call that asks a question): the rebuilt call the first
    resume returned and the request it came from are one call to the model, with the edit."""
    from loop_support import make_ask, scripted

    from agui_chat import approval_required, request_input

    runs: list[str] = []

    @approval_required
    def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        answer = request_input("Sure?")
        return f"deployed {env} ({answer.payload})"

    model = scripted([fcc("d1", "deploy", {"env": "prod"})], "Done.")
    client = FunctionInvokingChatClient(model)
    ask = make_ask(streaming)
    options = ChatOptions(tools=[deploy])
    history = [HELLO]
    paused = await ask(client, list(history), options)
    [request] = paused.input_requests
    history += [
        *paused.messages,
        msg("user", request.create_response(True, edited_arguments={"env": "staging"})),
    ]  # type: ignore[attr-defined]
    asked = await ask(client, list(history), options)
    assert shape(asked.messages[:1]) == shape(
        [msg("assistant", fcc("d1", "deploy", {"env": "staging"}))]
    )  # type: ignore[dict-item]
    [question] = asked.input_requests
    history += [*asked.messages, msg("user", question.create_response("yes"))]  # type: ignore[attr-defined]
    final = await ask(client, list(history), options)
    assert runs == ["staging", "staging"] and final.text == "Done."
    seen = model.calls[-1][0]
    calls = [c for m in seen for c in m.contents if isinstance(c, FunctionCallContent)]
    assert [(c.call_id, c.arguments) for c in calls] == [("d1", {"env": "staging"})]
    assert shape(seen[-1:]) == shape([msg("tool", frc("d1", "deployed staging (yes)"))])
