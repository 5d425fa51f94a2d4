"""A refused resume says, in full, which requests are wrong and what to do: the caller (or the
person behind a UI) reads the message to fix the answer. One request and several, since the
wording follows the count; and the refusal carries the request ids. Nothing runs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loop_support import Ask, call, scripted

from agui_chat import (
    ChatMessage,
    ChatOptions,
    DuplicateResponseError,
    ExpiredRequestError,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    UnansweredRequestError,
    UnknownResponseError,
    ai_function,
    approval_required,
)

PAST = datetime.now(timezone.utc) - timedelta(minutes=5)


class Files:
    def __init__(self) -> None:
        self.deleted: list[str] = []

        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return "deleted"

        self.options = ChatOptions(tools=[approval_required(allow_edits=False)(delete_file)])


def _request(call_id: str, **kwargs: Any) -> ToolApprovalRequestContent:
    return ToolApprovalRequestContent(
        f"approval_{call_id}", call(call_id, "delete_file", path=call_id), **kwargs
    )


async def _refused(
    ask: Ask, files: Files, history: list[ChatMessage], error: type[Exception], text: str
) -> Any:
    model = scripted("unreachable")
    with pytest.raises(error, match=f"^{re.escape(text)}$") as caught:
        await ask(FunctionInvokingChatClient(model), history, files.options)
    assert files.deleted == []
    assert model.calls == []
    return caught.value


def _asked(*requests: Any) -> list[ChatMessage]:
    return [ChatMessage("user", "clean up"), ChatMessage("assistant", list(requests))]


async def test_one_unanswered_request_is_named_with_what_to_do(ask: Ask) -> None:
    files = Files()
    error = await _refused(
        ask,
        files,
        [*_asked(_request("c1")), ChatMessage("user", "hm?")],
        UnansweredRequestError,
        "request 'approval_c1' has no answer; a paused run must be answered in one go "
        "(approve or reject every approval request, answer or cancel every question)",
    )
    assert error.request_ids == ("approval_c1",)


async def test_two_unanswered_requests_are_named_together(ask: Ask) -> None:
    files = Files()
    error = await _refused(
        ask,
        files,
        [*_asked(_request("c1"), _request("c2")), ChatMessage("user", "hm?")],
        UnansweredRequestError,
        "requests 'approval_c1', 'approval_c2' have no answer; a paused run must be answered "
        "in one go (approve or reject every approval request, answer or cancel every question)",
    )
    assert error.request_ids == ("approval_c1", "approval_c2")


async def test_a_request_answered_twice_is_named(ask: Ask) -> None:
    files = Files()
    r1 = _request("c1")
    error = await _refused(
        ask,
        files,
        [*_asked(r1), ChatMessage("user", [r1.create_response(True), r1.create_response(False)])],
        DuplicateResponseError,
        "request 'approval_c1' answered more than once; answer each request exactly once",
    )
    assert error.request_ids == ("approval_c1",)


async def test_an_answer_to_no_approval_request_is_named(ask: Ask) -> None:
    files = Files()
    stray = _request("c9").create_response(True)
    error = await _refused(
        ask,
        files,
        [ChatMessage("user", "hi"), ChatMessage("user", [stray])],
        UnknownResponseError,
        "request 'approval_c9' answers no approval request in the history; send the assistant "
        "message holding the request along with the answer",
    )
    assert error.request_ids == ("approval_c9",)


async def test_answers_to_no_question_are_named_together(ask: Ask) -> None:
    files = Files()
    answers = [InterruptResponseContent("q1", 1), InterruptResponseContent("q2", 2)]
    error = await _refused(
        ask,
        files,
        [ChatMessage("user", "hi"), ChatMessage("user", answers)],
        UnknownResponseError,
        "requests 'q1', 'q2' answer no question request in the history; send the assistant "
        "message holding the request along with the answer",
    )
    assert error.request_ids == ("q1", "q2")


async def test_an_expired_approval_names_the_request_and_says_it_can_only_be_rejected(
    ask: Ask,
) -> None:
    files = Files()
    r1 = _request("c1")
    answer = r1.create_response(True)
    r1.expires_at = PAST
    error = await _refused(
        ask,
        files,
        [*_asked(r1), ChatMessage("user", [answer])],
        ExpiredRequestError,
        "approval request 'approval_c1' expired; it can only be rejected",
    )
    assert error.request_ids == ("approval_c1",)


async def test_an_edit_the_request_does_not_allow_names_the_request(ask: Ask) -> None:
    files = Files()
    r1 = _request("c1", allow_edits=False)
    answer = r1.create_response(True)
    answer.edited_arguments = {"path": "other"}
    error = await _refused(
        ask,
        files,
        [*_asked(r1), ChatMessage("user", [answer])],
        InvalidResponseError,
        "approval request 'approval_c1' does not allow editing the arguments",
    )
    assert error.request_ids == ("approval_c1",)


async def test_one_call_id_used_twice_names_the_id_and_the_requests(ask: Ask) -> None:
    files = Files()
    r1 = _request("c1")
    r2 = ToolApprovalRequestContent("approval_c1b", call("c1", "delete_file", path="other"))
    error = await _refused(
        ask,
        files,
        [
            *_asked(r1, r2),
            ChatMessage("user", [r1.create_response(True), r2.create_response(True)]),
        ],
        InvalidResponseError,
        "tool call id 'c1' is used by more than one call or request, so the answers to requests "
        "'approval_c1', 'approval_c1b' are ambiguous; nothing was run (each tool call needs its "
        "own id)",
    )
    assert error.request_ids == ("approval_c1", "approval_c1b")


async def test_two_call_ids_used_twice_are_named_together(ask: Ask) -> None:
    files = Files()
    requests = [
        _request("c1"),
        ToolApprovalRequestContent("approval_c1b", call("c1", "delete_file", path="x")),
        _request("c2"),
        ToolApprovalRequestContent("approval_c2b", call("c2", "delete_file", path="y")),
    ]
    error = await _refused(
        ask,
        files,
        [*_asked(*requests), ChatMessage("user", [r.create_response(True) for r in requests])],
        InvalidResponseError,
        "tool call ids 'c1', 'c2' are used by more than one call or request, so the answers to "
        "requests 'approval_c1', 'approval_c1b', 'approval_c2', 'approval_c2b' are ambiguous; "
        "nothing was run (each tool call needs its own id)",
    )
    assert error.request_ids == ("approval_c1", "approval_c1b", "approval_c2", "approval_c2b")


async def test_an_expired_question_says_it_can_only_be_cancelled(ask: Ask) -> None:
    runs: list[str] = []

    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        return "deployed"

    question = InterruptRequestContent(
        "q1", message="Which build?", tool_call_id="c1", key="build", expires_at=PAST
    )
    history = [
        ChatMessage("user", "ship"),
        ChatMessage("assistant", [call("c1", "deploy", env="prod")]),
        ChatMessage("assistant", [question]),
        ChatMessage("user", [InterruptResponseContent("q1", 3)]),
    ]
    model = scripted("unreachable")
    expired = "question 'q1' expired; it can only be cancelled"
    with pytest.raises(ExpiredRequestError, match=f"^{re.escape(expired)}$"):
        await ask(FunctionInvokingChatClient(model), history, ChatOptions(tools=[deploy]))
    assert runs == []
    assert model.calls == []
