"""The consent engine's plan one step at a time (``agui_chat.consent._plan``): ``pair`` from
pairs a caller vouched for, ``check`` at the instant it is given, the refusals that name what
they are about, and ``leave_out`` for answers an earlier run already used."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from agui_chat import (
    AIFunction,
    ChatMessage,
    ExpiredRequestError,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    UnknownResponseError,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.consent import _rules
from agui_chat.consent._plan import VerifiedPair, check, leave_out, pair, schedule

NOW = 1_900_000_000.0


def tools() -> dict[str, AIFunction]:
    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        build = request_input("Which build?", key="build")
        return f"{env} {build.payload}"

    gated = approval_required(deploy)
    return {"deploy": gated}


def call(call_id: str = "c1", name: str = "deploy") -> FunctionCallContent:
    return FunctionCallContent(call_id, name, {"env": "prod"})


def approval(call_id: str = "c1", *, expires_at: float | None = None, ok: bool = True) -> Any:
    request = ToolApprovalRequestContent(
        f"approval_{call_id}",
        call(call_id),
        expires_at=None
        if expires_at is None
        else datetime.fromtimestamp(expires_at, tz=timezone.utc),
    )
    return VerifiedPair(
        call(call_id),
        request,
        request.create_response(ok) if ok else request.create_response(False, "no"),
    )


def question(call_id: str = "c1", name: str = "deploy") -> VerifiedPair:
    request = InterruptRequestContent(
        f"input_{call_id}_q", message="Which build?", tool_call_id=call_id, key="build"
    )
    return VerifiedPair(
        call(call_id, name), request, InterruptResponseContent(request.request_id, 7)
    )


def test_check_reads_the_instant_it_is_given_not_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "clock", lambda: NOW)
    history: list[ChatMessage] = []
    late = pair(history, [approval(expires_at=NOW + 10)])
    with pytest.raises(ExpiredRequestError, match="expired"):
        check(late, tools(), now=NOW + 20)
    check(pair(history, [approval(expires_at=NOW + 10)]), tools(), now=NOW + 5)
    monkeypatch.setattr(_rules, "clock", lambda: NOW + 20)
    with pytest.raises(ExpiredRequestError, match="expired"):
        check(pair(history, [approval(expires_at=NOW + 10)]), tools())


def test_a_verified_pair_about_another_call_is_refused_naming_its_request() -> None:
    mixed = VerifiedPair(call("c2"), approval().request, approval().answer)
    with pytest.raises(InvalidResponseError) as refused:
        pair([], [mixed])
    assert refused.value.request_ids == ("approval_c1",)


def test_a_verified_call_that_already_has_its_result_runs_nothing() -> None:
    history = [
        ChatMessage("assistant", [call()]),
        ChatMessage("tool", [FunctionResultContent("c1", "done before")]),
    ]
    pairs = pair(history, [approval()])
    plan = schedule(pairs, check(pairs, tools()), history)
    assert plan.to_run == [] and plan.rejected == []


def test_a_question_after_a_verified_approval_of_its_call_runs_with_both() -> None:
    pairs = pair([], [approval(), question()])
    plan = schedule(pairs, check(pairs, tools()), [])
    [scheduled] = plan.to_run
    assert scheduled.call.call_id == "c1"
    assert [a.payload for a in scheduled.answers.values()] == [7]


def test_a_call_no_tool_here_runs_is_refused_naming_every_request_about_it() -> None:
    pairs = pair([], [approval("c1"), question("c1")])
    with pytest.raises(UnknownResponseError) as refused:
        check(pairs, {})
    assert refused.value.code == "RESUME_UNKNOWN_TOOL"
    assert set(refused.value.request_ids) == {"approval_c1", "input_c1_q"}
    assert "are about a call to tool 'deploy'" in str(refused.value)
    with pytest.raises(UnknownResponseError, match="is about a call to tool 'deploy'"):
        check(pair([], [approval("c1")]), {})


def test_a_question_answer_naming_an_approval_request_says_how_to_answer_it() -> None:
    request = ToolApprovalRequestContent("approval_c1", call())
    history = [
        ChatMessage("assistant", [request]),
        ChatMessage("user", [InterruptResponseContent("approval_c1", {"approved": True})]),
    ]
    with pytest.raises(UnknownResponseError, match=r"request\.create_response\(approved"):
        check(pair(history), tools())


def test_leave_out_drops_every_request_about_the_calls_an_earlier_run_used() -> None:
    pairs = pair([], [approval("c1"), question("c1"), approval("c2")])
    pending = check(pairs, tools())
    leave_out(pairs, pending, {"c1"})
    assert set(pairs.approvals) == {"approval_c2"} == set(pending.approvals)
    assert pairs.questions == {} and pending.questions == {}
    assert set(pairs.verified) == {"c2"}
    plan = schedule(pairs, pending, [])
    assert [s.call.call_id for s in plan.to_run] == ["c2"]
