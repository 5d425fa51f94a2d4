"""The consent rules one decision at a time (``agui_chat.consent._rules``): a gate found
through every wrapper and through the tool as its source offers it now, the answer rules at
their boundaries, and the one request-id scheme. The end-to-end behaviour is shown by the
tool loop's, the server's and the MCP lane's tests; these pin each rule where it lives."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

import pytest

from agui_chat import (
    AIFunction,
    AITool,
    DelegatingAIFunction,
    DuplicateResponseError,
    ExpiredRequestError,
    InvalidResponseError,
    UnansweredRequestError,
    ai_function,
    approval_required,
)
from agui_chat.consent import _rules
from agui_chat.consent._rules import (
    Gate,
    approval_request_id,
    approval_wrappers,
    check_answered_once,
    check_approval,
    check_payload,
    check_question,
    find_tool,
    gate,
    is_about,
    is_past,
    may_edit,
    question_request_id,
)

NOW = 1_900_000_000.0


def delete_file() -> AIFunction:
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        return path

    return delete_file


class Listed(DelegatingAIFunction):
    """A tool whose source may have changed it since it was listed (as an MCP tool's toolset
    does): ``now`` is what the source offers today (``None``: withdrawn)."""

    def __init__(self, inner: AIFunction, now: AITool | None) -> None:
        super().__init__(inner)
        self.now = now

    def current(self) -> AITool | None:
        return self.now


# -- the gate ---------------------------------------------------------------------------------


def test_a_tool_its_source_withdrew_is_not_found() -> None:
    kept, gone = Listed(delete_file(), delete_file()), Listed(delete_file(), None)
    assert find_tool({"delete_file": kept}, "delete_file") is kept
    assert find_tool({"delete_file": gone}, "delete_file") is None
    assert find_tool({}, "delete_file") is None


def test_a_stale_copy_is_gated_as_its_source_offers_the_tool_now() -> None:
    live = approval_required(delete_file())
    stale = Listed(delete_file(), live)  # listed ungated, re-declared gated since
    assert approval_wrappers(stale) == [live]
    assert gate(stale, {"path": "a"}) == Gate("Approve delete_file?", allow_edits=True)


def test_the_live_gate_is_counted_once_and_the_copys_own_gates_stay() -> None:
    own = approval_required(delete_file(), allow_edits=False)
    live = approval_required(delete_file())
    both = DelegatingAIFunction(own)
    assert approval_wrappers(both) == [own]
    sourced = Listed(own.inner, live)
    wrapped = approval_required(sourced, allow_edits=False)
    assert approval_wrappers(wrapped) == [wrapped, live]
    assert gate(wrapped, {})
    assert gate(wrapped, {}).allow_edits is False  # type: ignore[union-attr]
    same = Listed(delete_file(), None)
    same.now = same  # a source that offers the tool itself: its gates are not doubled
    assert approval_wrappers(same) == []


def test_a_withdrawn_tool_asked_about_anyway_is_gated_without_edits() -> None:
    gone = Listed(delete_file(), None)
    assert gate(gone, {"path": "a"}) == Gate("Approve delete_file?", allow_edits=False)


def test_a_gate_is_found_through_every_wrapper_and_each_one_counts() -> None:
    inner = approval_required(delete_file(), when=lambda args: args["path"].startswith("/"))
    outer = approval_required(DelegatingAIFunction(inner), allow_edits=False)
    assert approval_wrappers(outer) == [outer, inner]
    asks = gate(outer, {"path": "notes.txt"})  # the outer one always asks
    assert asks == Gate("Approve delete_file?", allow_edits=False)
    assert gate(DelegatingAIFunction(inner), {"path": "notes.txt"}) is None
    assert gate(DelegatingAIFunction(inner), {"path": "/etc"}) == Gate(
        "Approve delete_file?", allow_edits=True
    )
    assert gate(delete_file(), {}) is None


def test_edits_need_the_request_and_every_wrapper_to_allow_them() -> None:
    assert may_edit(True, None) is True
    assert may_edit(False, None) is False
    assert may_edit(True, approval_required(delete_file())) is True
    assert may_edit(True, approval_required(delete_file(), allow_edits=False)) is False
    assert may_edit(False, approval_required(delete_file())) is False


# -- the request ids --------------------------------------------------------------------------


def test_one_request_id_scheme() -> None:
    digest = "d" * 64
    tail = hashlib.sha256(digest.encode("utf-8")).hexdigest()[:12]
    assert approval_request_id("c1") == "approval_c1"
    assert question_request_id("c1", digest) == f"input_c1_{tail}"
    assert question_request_id(None, digest) == f"input__{tail}"
    assert is_about("approval_c1", "c1")
    assert is_about(f"input_c1_{tail}", "c1")
    assert not is_about(f"input_c10_{tail}", "c1")
    assert not is_about("input_c1_short", "c1")
    assert not is_about(f"input_c2_{tail}", "c1")
    assert not is_about("approval_c10", "c1")


# -- the answer rules -------------------------------------------------------------------------


def test_expiry_is_read_at_the_instant_given_and_its_own_instant_is_past() -> None:
    assert is_past(NOW, NOW) and is_past(NOW - 1, NOW) and not is_past(NOW + 1, NOW)
    moment = datetime.fromtimestamp(NOW, tz=timezone.utc)
    assert is_past(moment, NOW) and not is_past(moment, NOW - 1)
    assert not is_past(None, NOW)


def test_is_past_reads_the_engines_clock_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "clock", lambda: NOW)
    assert is_past(NOW) and not is_past(NOW + 1)


def test_approving_past_the_expiry_is_refused_rejecting_is_not() -> None:
    with pytest.raises(ExpiredRequestError) as refused:
        check_approval("r1", approved=True, allow_edits=True, expires_at=NOW, now=NOW)
    assert refused.value.code == "APPROVAL_EXPIRED"
    assert refused.value.request_ids == ("r1",)
    assert str(refused.value) == "approval request 'r1' expired; it can only be rejected"
    assert check_approval("r1", approved=False, allow_edits=True, expires_at=NOW, now=NOW) is None
    assert (
        check_approval("r1", approved=True, allow_edits=True, expires_at=NOW, now=NOW - 1) is None
    )


def test_an_edit_that_does_not_approve_is_refused() -> None:
    with pytest.raises(InvalidResponseError) as refused:
        check_approval(
            "r1", approved=False, edited_arguments={"path": "b"}, allow_edits=True, expires_at=None
        )
    assert refused.value.request_ids == ("r1",)
    assert str(refused.value) == "approval request 'r1': edited arguments only go with an approval"


def test_an_edit_is_refused_where_not_offered_and_checked_against_the_tool() -> None:
    tool = approval_required(delete_file())
    edit: dict[str, Any] = {"path": "b.txt"}
    with pytest.raises(InvalidResponseError) as refused:
        check_approval(
            "r1", approved=True, edited_arguments=edit, allow_edits=False, expires_at=None
        )
    assert refused.value.code == "APPROVAL_EDIT_NOT_ALLOWED"
    locked = approval_required(delete_file(), allow_edits=False)
    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        check_approval(
            "r1",
            approved=True,
            edited_arguments=edit,
            allow_edits=True,
            expires_at=None,
            tool=locked,
        )
    with pytest.raises(InvalidResponseError) as invalid:
        check_approval(
            "r1",
            approved=True,
            edited_arguments={"file": "b"},
            allow_edits=True,
            expires_at=None,
            tool=tool,
        )
    assert invalid.value.code is None and invalid.value.request_ids == ("r1",)
    assert "argument 'path'" in str(invalid.value)
    kept = check_approval(
        "r1", approved=True, edited_arguments=edit, allow_edits=True, expires_at=None, tool=tool
    )
    assert kept == edit and kept is not edit


def test_a_question_answered_past_its_expiry_is_refused_cancelling_is_not() -> None:
    with pytest.raises(ExpiredRequestError) as refused:
        check_question(
            "q1", resolved=True, payload=1, response_schema=None, expires_at=NOW, now=NOW
        )
    assert refused.value.code == "INTERRUPT_EXPIRED"
    assert str(refused.value) == "question 'q1' expired; it can only be cancelled"
    check_question(
        "q1", resolved=False, payload=None, response_schema=None, expires_at=NOW, now=NOW
    )
    check_question(
        "q1", resolved=True, payload=1, response_schema=None, expires_at=NOW, now=NOW - 1
    )


def test_a_payload_must_fit_its_schema_and_a_schema_that_is_none_holds_nothing() -> None:
    schema = {"type": "object", "required": ["env"]}
    with pytest.raises(InvalidResponseError) as refused:
        check_payload("q1", {}, schema)
    assert refused.value.request_ids == ("q1",)
    assert str(refused.value) == (
        "answer to 'q1' does not match its response schema: (root): 'env' is a required property"
    )
    check_payload("q1", {"env": "prod"}, schema)
    check_payload("q1", {}, None)
    check_payload("q1", {}, {"type": "no-such-type"})  # not a schema: holds nothing


def test_each_request_answered_once() -> None:
    check_answered_once({"a": [1], "b": [2]})
    with pytest.raises(UnansweredRequestError) as missing:
        check_answered_once({"a": [], "b": [1, 2]})  # a missing answer is said first
    assert missing.value.request_ids == ("a",)
    assert str(missing.value).startswith("request 'a' has no answer; a paused run")
    with pytest.raises(UnansweredRequestError, match=r"^requests 'a', 'b' have no answer"):
        check_answered_once({"a": [], "b": []})
    with pytest.raises(DuplicateResponseError) as twice:
        check_answered_once({"a": [1], "b": [1, 2]})
    assert twice.value.request_ids == ("b",)
    assert str(twice.value) == (
        "request 'b' answered more than once; answer each request exactly once"
    )
