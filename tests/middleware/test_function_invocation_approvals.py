"""FunctionInvokingChatClient: tool approvals (DESIGN §3 rules 1-5 and 7), streaming and not."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loop_support import Ask, call, describe, results_for, resume, scripted, seen

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    DelegatingAIFunction,
    DuplicateResponseError,
    ExpiredRequestError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UnansweredRequestError,
    UnknownResponseError,
    ai_function,
    approval_required,
)
from meai_texts import REJECTED

PAST = datetime.now(timezone.utc) - timedelta(minutes=5)


class Tools:
    """A gated ``delete_file`` and a plain ``list_files``, counting their runs."""

    def __init__(self, *, when: Any = None, allow_edits: bool = True) -> None:
        self.deleted: list[str] = []
        self.listed: list[str] = []

        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        @ai_function
        def list_files(folder: str) -> str:
            """List a folder."""
            self.listed.append(folder)
            return f"{folder}: a.txt b.txt"

        self.delete_file = approval_required(when=when, allow_edits=allow_edits)(delete_file)
        self.list_files = list_files
        self.options = ChatOptions(tools=[self.delete_file, self.list_files])


def _requests(response: ChatResponse) -> list[ToolApprovalRequestContent]:
    out = []
    for r in response.input_requests:
        assert isinstance(r, ToolApprovalRequestContent)
        out.append(r)
    return out


async def _pause(
    ask: Ask, tools: Tools, *replies: Any, prompt: str = "clean up"
) -> tuple[Any, FunctionInvokingChatClient, list[ChatMessage], ChatResponse]:
    """Run until the first pause; return the model, client, history and paused response."""
    model = scripted(*replies)
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", prompt)]
    response = await ask(client, history, tools.options)
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    return model, client, history, response


# -- the pause ---------------------------------------------------------------------------


async def test_a_call_needing_approval_is_not_run_but_surfaced(ask: Ask) -> None:
    tools = Tools()
    model, _, _, response = await _pause(ask, tools, [call("c1", "delete_file", path="/tmp/a")])

    assert tools.deleted == []
    assert len(model.calls) == 1
    [request] = _requests(response)
    assert request.tool_call.call_id == "c1"
    assert request.tool_call.arguments == {"path": "/tmp/a"}
    assert request.requires_confirmation
    assert results_for(response.messages, "c1") == []


async def test_a_pause_has_its_own_finish_reason(ask: Ask) -> None:
    tools = Tools()
    _, _, _, response = await _pause(ask, tools, [call("c1", "delete_file", path="/tmp/a")])
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert response.finish_reason != ChatFinishReason.STOP


async def test_rule1_in_a_mixed_batch_only_the_gated_call_waits(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask,
        tools,
        [call("c1", "list_files", folder="/tmp"), call("c2", "delete_file", path="/tmp/a")],
        "Deleted it.",
    )
    assert tools.listed == ["/tmp"]
    assert tools.deleted == []
    assert results_for(paused.messages, "c1") == ["/tmp: a.txt b.txt"]
    assert [r.tool_call.call_id for r in _requests(paused)] == ["c2"]

    [request] = _requests(paused)
    final = await ask(client, resume(history, paused, request.create_response(True)), tools.options)

    assert tools.listed == ["/tmp"]
    assert tools.deleted == ["/tmp/a"]
    assert final.text == "Deleted it."
    # MEAI's shape: the approved call is rebuilt after the batch's answered calls.
    assert seen(model) == [
        "user: clean up",
        'assistant: call c1 list_files {"folder": "/tmp"}',
        "tool: result c1 /tmp: a.txt b.txt",
        'assistant: call c2 delete_file {"path": "/tmp/a"}',
        "tool: result c2 deleted /tmp/a",
    ]


async def test_approval_when_decides_per_call(ask: Ask) -> None:
    tools = Tools(when=lambda args: not args["path"].startswith("/tmp/"))
    _, _, _, paused = await _pause(
        ask,
        tools,
        [
            call("c1", "delete_file", path="/tmp/scratch"),
            call("c2", "delete_file", path="/etc/hosts"),
        ],
    )
    assert tools.deleted == ["/tmp/scratch"]
    assert [r.tool_call.call_id for r in _requests(paused)] == ["c2"]


async def test_a_when_predicate_saying_no_runs_the_call_without_a_pause(ask: Ask) -> None:
    tools = Tools(when=lambda args: False)
    model = scripted([call("c1", "delete_file", path="/tmp/a")], "ok")
    response = await ask(FunctionInvokingChatClient(model), "go", tools.options)
    assert tools.deleted == ["/tmp/a"]
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []


# -- approving -----------------------------------------------------------------------------


async def test_an_approved_call_runs_once_and_the_model_gets_its_result(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "Done."
    )
    [request] = _requests(paused)
    final = await ask(client, resume(history, paused, request.create_response(True)), tools.options)

    assert tools.deleted == ["/tmp/a"]
    assert len(model.calls) == 2
    assert seen(model) == [
        "user: clean up",
        'assistant: call c1 delete_file {"path": "/tmp/a"}',
        "tool: result c1 deleted /tmp/a",
    ]
    assert describe(final.messages) == [
        'assistant: call c1 delete_file {"path": "/tmp/a"}',
        "tool: result c1 deleted /tmp/a",
        "assistant: Done.",
    ]
    assert final.finish_reason == ChatFinishReason.STOP


async def test_rule3_replaying_an_answered_history_never_runs_the_call_again(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "Done.", "Still done."
    )
    [request] = _requests(paused)
    answered = resume(history, paused, request.create_response(True))
    final = await ask(client, answered, tools.options)
    assert tools.deleted == ["/tmp/a"]

    replay = [*answered, *final.messages, ChatMessage("user", "thanks")]
    again = await ask(client, replay, tools.options)

    assert tools.deleted == ["/tmp/a"]
    assert again.text == "Still done."
    assert seen(model).count("tool: result c1 deleted /tmp/a") == 1
    assert seen(model)[-1] == "user: thanks"


async def test_rule3_a_history_with_the_result_already_in_it_runs_nothing(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "ok"
    )
    [request] = _requests(paused)
    replay = [
        *resume(history, paused, request.create_response(True)),
        ChatMessage("tool", [FunctionResultContent("c1", "deleted elsewhere")]),
    ]
    await ask(client, replay, tools.options)
    assert tools.deleted == []
    assert "tool: result c1 deleted elsewhere" in seen(model)


async def test_approved_edited_arguments_are_what_runs_and_what_the_model_sees(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "ok"
    )
    [request] = _requests(paused)
    answer = request.create_response(True, edited_arguments={"path": "/tmp/b"})
    await ask(client, resume(history, paused, answer), tools.options)

    assert tools.deleted == ["/tmp/b"]
    assert seen(model)[1:] == [
        'assistant: call c1 delete_file {"path": "/tmp/b"}',
        "tool: result c1 deleted /tmp/b",
    ]


async def test_invalid_edited_arguments_are_refused_before_anything_runs(ask: Ask) -> None:
    # The consent engine checks an edit against the tool's parameters in process as over
    # AG-UI: the person's answer is refused (they can answer again), the model is not asked.
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "I could not delete it."
    )
    [request] = _requests(paused)
    answer = request.create_response(True, edited_arguments={"file": "/tmp/b"})
    with pytest.raises(InvalidResponseError) as refused:
        await ask(client, resume(history, paused, answer), tools.options)

    assert tools.deleted == []
    assert len(model.calls) == 1
    assert refused.value.request_ids == (request.request_id,)
    assert "argument 'path'" in str(refused.value)
    assert "argument 'file'" in str(refused.value)


async def test_edits_are_refused_for_a_tool_that_does_not_allow_them(ask: Ask) -> None:
    tools = Tools(allow_edits=False)
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")]
    )
    [request] = _requests(paused)
    assert request.allow_edits is False
    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        request.create_response(True, edited_arguments={"path": "/etc"})

    forged = ToolApprovalResponseContent(
        request.request_id, True, request.tool_call, edited_arguments={"path": "/etc"}
    )
    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        await ask(client, resume(history, paused, forged), tools.options)
    assert tools.deleted == []
    assert len(model.calls) == 1


# -- rejecting (rule 7) ----------------------------------------------------------------------


async def test_rule7_a_rejection_reason_reaches_the_model(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "Understood."
    )
    [request] = _requests(paused)
    final = await ask(
        client, resume(history, paused, request.create_response(False, "keep it")), tools.options
    )
    assert tools.deleted == []
    assert results_for(model.calls[-1][0], "c1") == ["Tool call invocation rejected. keep it"]
    assert final.text == "Understood."


async def test_a_rejection_without_reason_uses_the_bare_text(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "ok"
    )
    [request] = _requests(paused)
    await ask(client, resume(history, paused, request.create_response(False)), tools.options)
    assert results_for(model.calls[-1][0], "c1") == [REJECTED]


# -- re-pairing (rule 2) and answering in one go (rule 4) ---------------------------------


def _two_deletes() -> list[FunctionCallContent]:
    return [call("c1", "delete_file", path="/tmp/a"), call("c2", "delete_file", path="/tmp/b")]


async def test_answers_are_paired_with_requests_by_id_whatever_their_order(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(ask, tools, _two_deletes(), "ok")
    first, second = _requests(paused)
    answers = [second.create_response(True), first.create_response(False, "not a")]
    await ask(client, resume(history, paused, *answers), tools.options)

    assert tools.deleted == ["/tmp/b"]
    assert results_for(model.calls[-1][0], "c1") == ["Tool call invocation rejected. not a"]
    assert results_for(model.calls[-1][0], "c2") == ["deleted /tmp/b"]


async def test_the_recorded_call_runs_not_the_one_an_answer_carries(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "ok"
    )
    [request] = _requests(paused)
    tampered = ToolApprovalResponseContent(
        request.request_id, True, call("c1", "delete_file", path="/etc/passwd")
    )
    await ask(client, resume(history, paused, tampered), tools.options)
    assert tools.deleted == ["/tmp/a"]
    assert 'assistant: call c1 delete_file {"path": "/tmp/a"}' in seen(model)


async def test_rule2_a_request_without_answer_is_an_error_naming_it(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")]
    )
    [request] = _requests(paused)
    unanswered = [*history, *paused.messages, ChatMessage("user", "what now?")]
    with pytest.raises(UnansweredRequestError, match=request.request_id) as info:
        await ask(client, unanswered, tools.options)
    assert info.value.request_ids == (request.request_id,)
    assert tools.deleted == []
    assert len(model.calls) == 1


async def test_rule4_a_partial_answer_is_refused_naming_the_missing_request(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(ask, tools, _two_deletes())
    first, second = _requests(paused)
    with pytest.raises(UnansweredRequestError) as info:
        await ask(client, resume(history, paused, first.create_response(True)), tools.options)
    assert info.value.request_ids == (second.request_id,)
    assert second.request_id in str(info.value)
    assert first.request_id not in str(info.value)
    assert tools.deleted == []
    assert len(model.calls) == 1


async def test_rule2_an_answer_without_a_request_runs_nothing(ask: Ask) -> None:
    tools = Tools()
    model = scripted("unreachable")
    stray = ToolApprovalResponseContent("approval_zz", True, call("zz", "delete_file", path="/"))
    history = [ChatMessage("user", "hi"), ChatMessage("user", [stray])]
    with pytest.raises(UnknownResponseError, match="approval_zz") as info:
        await ask(FunctionInvokingChatClient(model), history, tools.options)
    assert info.value.request_ids == ("approval_zz",)
    assert tools.deleted == []
    assert model.calls == []


async def test_rule2_a_second_answer_to_one_request_runs_nothing(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")]
    )
    [request] = _requests(paused)
    twice = resume(history, paused, request.create_response(True), request.create_response(True))
    with pytest.raises(DuplicateResponseError, match=request.request_id):
        await ask(client, twice, tools.options)
    assert tools.deleted == []
    assert len(model.calls) == 1


async def test_a_second_answer_in_a_later_message_is_refused_too(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")]
    )
    [request] = _requests(paused)
    twice = [
        *resume(history, paused, request.create_response(False, "no")),
        ChatMessage("user", [request.create_response(True)]),
    ]
    with pytest.raises(DuplicateResponseError):
        await ask(client, twice, tools.options)
    assert tools.deleted == []
    assert len(model.calls) == 1


# -- expiry (rule 5) -----------------------------------------------------------------------


async def test_rule5_an_expired_request_cannot_be_approved(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")]
    )
    [request] = _requests(paused)
    request.expires_at = PAST
    with pytest.raises(ExpiredRequestError):
        request.create_response(True)
    forged = ToolApprovalResponseContent(request.request_id, True, request.tool_call)
    with pytest.raises(ExpiredRequestError, match=request.request_id):
        await ask(client, resume(history, paused, forged), tools.options)
    assert tools.deleted == []
    assert len(model.calls) == 1


async def test_rule5_an_expired_request_can_be_rejected(ask: Ask) -> None:
    tools = Tools()
    model, client, history, paused = await _pause(
        ask, tools, [call("c1", "delete_file", path="/tmp/a")], "ok"
    )
    [request] = _requests(paused)
    request.expires_at = PAST
    await ask(
        client, resume(history, paused, request.create_response(False, "late")), tools.options
    )
    assert tools.deleted == []
    assert results_for(model.calls[-1][0], "c1") == ["Tool call invocation rejected. late"]


# -- persistence -----------------------------------------------------------------------------


async def test_a_paused_conversation_stored_as_json_resumes_correctly(ask: Ask) -> None:
    tools = Tools()
    model, _, history, paused = await _pause(
        ask,
        tools,
        [
            call("l1", "list_files", folder="/tmp"),
            call("d1", "delete_file", path="/tmp/a"),
            call("d2", "delete_file", path="/tmp/b"),
        ],
        "Done.",
    )
    stored = json.dumps([m.to_dict() for m in [*history, *paused.messages]])

    loaded = [ChatMessage.from_dict(d) for d in json.loads(stored)]
    first, second = [
        c for m in loaded for c in m.contents if isinstance(c, ToolApprovalRequestContent)
    ]
    loaded.append(
        ChatMessage("user", [first.create_response(True), second.create_response(False, "keep b")])
    )
    final = await ask(FunctionInvokingChatClient(model), loaded, tools.options)

    assert tools.listed == ["/tmp"]
    assert tools.deleted == ["/tmp/a"]
    assert final.text == "Done."
    assert seen(model) == [
        "user: clean up",
        'assistant: call l1 list_files {"folder": "/tmp"}',
        "tool: result l1 /tmp: a.txt b.txt",
        'assistant: call d1 delete_file {"path": "/tmp/a"}'
        ' | call d2 delete_file {"path": "/tmp/b"}',
        "tool: result d2 Tool call invocation rejected. keep b",
        "tool: result d1 deleted /tmp/a",
    ]


# -- where the approval marker sits ------------------------------------------------------------


async def test_a_gated_tool_wrapped_again_still_needs_approval(ask: Ask) -> None:
    tools = Tools()

    class Audited(DelegatingAIFunction):
        """A wrapper that adds nothing; the approval marker is inside it."""

    model = scripted([call("c1", "delete_file", path="/tmp/a")])
    options = ChatOptions(tools=[Audited(tools.delete_file)])
    response = await ask(FunctionInvokingChatClient(model), "go", options)
    assert tools.deleted == []
    assert [r.tool_call.call_id for r in _requests(response)] == ["c1"]


async def test_a_gated_additional_tool_needs_approval_too(ask: Ask) -> None:
    tools = Tools()
    model = scripted([call("c1", "delete_file", path="/tmp/a")], "ok")
    client = FunctionInvokingChatClient(model, additional_tools=[tools.delete_file])
    history = [ChatMessage("user", "go")]
    paused = await ask(client, history, ChatOptions())
    [request] = _requests(paused)
    assert tools.deleted == []
    await ask(client, resume(history, paused, request.create_response(True)), ChatOptions())
    assert tools.deleted == ["/tmp/a"]
