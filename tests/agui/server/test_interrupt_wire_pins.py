"""The interrupt objects a client receives, whole: for an approval and a question, each field
the server writes (reason, message, toolCallId, responseSchema, expiresAt, metadata) and what
the signed id vouches for (the pause, the expiry, the question, the trace context), read
back with the server's own key. Also the keys that tell equal questions of one pause apart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
    SideEffects,
    answer,
    history_from,
    interrupts,
    outcome,
    run_input,
    scripted,
    user,
)

from agui_chat import (
    FunctionCallContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from agui_chat.agui.server._signing import InterruptClaims, InterruptSigner
from agui_chat.consent import _rules
from agui_chat.middleware._tool_tracing import REQUESTED_AT, TRACEPARENT
from agui_server import ServedAgent, agui_server

NOW = 4_000_000_000.25  # the fake clock: a quarter second past a whole second
IN_AN_HOUR = "2096-10-02T08:06:41Z"  # ceil(NOW + 3600), the default TTL, in UTC
TRACE = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
SCHEMA = {"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupts are issued at ``NOW``."""
    monkeypatch.setattr(_rules, "clock", lambda: NOW)


@pytest.fixture
def far_from_utc() -> Iterator[None]:
    """The server process runs in a zone nine and a half hours off UTC."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Australia/Adelaide"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


def app_for(*requests: Any, tools: list[Any] | None = None, **settings: Any) -> ServedAgent:
    """A server whose model pauses on ``requests`` at once, then says ``done``."""
    return agui_server(scripted(list(requests), "done"), tools=tools or [], **settings)


async def paused_on(*requests: Any, **settings: Any) -> list[dict[str, Any]]:
    return interrupts(await app_for(*requests, **settings).run(user("go")))


def claims_of(interrupt: dict[str, Any]) -> InterruptClaims:
    """What the interrupt's id vouches for, read with the server's key."""
    return InterruptSigner(SIGNING_KEY).verify(interrupt["id"])


def without_id(interrupt: dict[str, Any]) -> dict[str, Any]:
    assert interrupt["id"].startswith("v1.")
    return {k: v for k, v in interrupt.items() if k != "id"}


def remote_approval(**options: Any) -> ToolApprovalRequestContent:
    """An approval the model asks for a tool this server does not run."""
    call = FunctionCallContent("c1", "remote_deploy", {"env": "prod"})
    return ToolApprovalRequestContent("r1", call, **options)


def at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, timezone.utc)


# -- approvals ------------------------------------------------------------------------------


async def test_an_approval_without_a_message_goes_out_whole_with_the_default_message() -> None:
    """An approval with no message of its own: "Approve <tool>?", any-object edits, TTL."""
    (interrupt,) = await paused_on(remote_approval())
    assert without_id(interrupt) == {
        "reason": "tool_call",
        "message": "Approve remote_deploy?",
        "toolCallId": "c1",
        "responseSchema": {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "reason": {"type": "string"},
                "editedArgs": {"type": "object"},
            },
            "required": ["approved"],
        },
        "expiresAt": IN_AN_HOUR,
    }
    claims = claims_of(interrupt)
    assert (claims.kind, claims.call_id, claims.tool_name) == ("approval", "c1", "remote_deploy")
    assert (claims.arguments, claims.allow_edits) == ({"env": "prod"}, True)
    assert (claims.pause, claims.pause_size) == (None, 1)  # a lone interrupt names no pause


async def test_an_approval_request_offering_no_edits_has_no_edited_args() -> None:
    """A request with ``allow_edits=False`` gets no ``editedArgs`` and its id allows none."""
    (interrupt,) = await paused_on(remote_approval(allow_edits=False, message="Ship it?"))
    assert interrupt["message"] == "Ship it?"
    assert interrupt["responseSchema"]["properties"] == {
        "approved": {"type": "boolean"},
        "reason": {"type": "string"},
    }
    assert claims_of(interrupt).allow_edits is False


async def test_edits_are_not_offered_for_a_tool_that_refuses_them() -> None:
    """A request offering edits for a tool declared ``allow_edits=False`` offers none."""
    tool = SideEffects().delete_file(allow_edits=False)
    call = FunctionCallContent("c1", "delete_file", {"path": "a.txt"})
    request = ToolApprovalRequestContent("r1", call, allow_edits=True)
    (interrupt,) = await paused_on(request, tools=[tool])
    assert set(interrupt["responseSchema"]["properties"]) == {"approved", "reason"}
    assert claims_of(interrupt).allow_edits is False


async def test_edits_of_a_tool_that_allows_them_follow_its_parameters_schema() -> None:
    """A model's request for a local tool with edits: ``editedArgs`` is its parameters."""
    tool = SideEffects().delete_file()
    call = FunctionCallContent("c1", "delete_file", {"path": "a.txt"})
    (interrupt,) = await paused_on(ToolApprovalRequestContent("r1", call), tools=[tool])
    assert interrupt["responseSchema"]["properties"]["editedArgs"] == tool.parameters
    assert claims_of(interrupt).allow_edits is True


async def test_a_request_expiring_before_the_ttl_keeps_its_own_expiry_rounded_up() -> None:
    """The earlier of the TTL and the request's expiry wins, rounded up to a second."""
    (interrupt,) = await paused_on(remote_approval(expires_at=at(NOW + 10.5)))
    assert interrupt["expiresAt"] == "2096-10-02T07:06:51Z"
    assert claims_of(interrupt).expires_at == 4_000_000_011


async def test_without_a_ttl_the_request_s_own_expiry_is_sent() -> None:
    """With ``approval_ttl=None`` the request's own expiry is the only one."""
    (interrupt,) = await paused_on(remote_approval(expires_at=at(NOW + 10.5)), approval_ttl=None)
    assert interrupt["expiresAt"] == "2096-10-02T07:06:51Z"


@pytest.mark.usefixtures("far_from_utc")
async def test_expires_at_is_written_in_utc_whatever_the_server_s_zone() -> None:
    """``expiresAt`` carries the UTC time (``Z``), not the server's local time."""
    (interrupt,) = await paused_on(remote_approval())
    assert interrupt["expiresAt"] == IN_AN_HOUR


# -- questions ------------------------------------------------------------------------------


async def test_a_question_of_the_model_goes_out_whole_keeping_its_own_metadata() -> None:
    """No reason given: "input_required"; no toolCallId; its metadata plus our marker."""
    request = InterruptRequestContent("q1", message="Continue?", metadata={"ui": "modal"})
    (interrupt,) = await paused_on(request)
    assert without_id(interrupt) == {
        "reason": "input_required",
        "message": "Continue?",
        "expiresAt": IN_AN_HOUR,
        "metadata": {"ui": "modal", "agui_chat": {"key": "Continue?"}},
    }
    claims = claims_of(interrupt)
    assert (claims.kind, claims.call_id, claims.tool_name, claims.arguments) == (
        "question",
        None,
        None,
        None,
    )
    assert claims.question == {"key": "Continue?", "message": "Continue?"}


async def test_a_question_with_a_reason_and_a_schema_sends_them_and_its_id_holds_them() -> None:
    """The question's reason and schema go out and are signed into its id with its key."""
    request = InterruptRequestContent(
        "q1", reason="choose_env", message="Which env?", response_schema=SCHEMA, key="env"
    )
    (interrupt,) = await paused_on(request, approval_ttl=None)
    assert without_id(interrupt) == {
        "reason": "choose_env",
        "message": "Which env?",
        "responseSchema": SCHEMA,
        "metadata": {"agui_chat": {"key": "env"}},
    }
    assert claims_of(interrupt).question == {
        "key": "env",
        "message": "Which env?",
        "reason": "choose_env",
        "schema": SCHEMA,
    }


async def test_a_question_expiring_before_the_ttl_keeps_its_own_expiry() -> None:
    """A question's own earlier expiry wins over the TTL, rounded up to a second."""
    request = InterruptRequestContent("q1", message="Continue?", expires_at=at(NOW + 10.5))
    (interrupt,) = await paused_on(request)
    assert interrupt["expiresAt"] == "2096-10-02T07:06:51Z"
    assert claims_of(interrupt).expires_at == 4_000_000_011


# -- the trace context a pause carries ------------------------------------------------------


def traced(request: Any, **properties: Any) -> Any:
    """``request`` with the tracing properties a telemetry hook sets on it."""
    request.additional_properties = {**(request.additional_properties or {}), **properties}
    return request


async def test_an_approval_s_id_carries_its_trace_context_and_request_time() -> None:
    """The request's traceparent and when it was made travel in the approval's id."""
    request = traced(remote_approval(), **{TRACEPARENT: TRACE, REQUESTED_AT: 1234.5})
    (interrupt,) = await paused_on(request)
    claims = claims_of(interrupt)
    assert (claims.traceparent, claims.requested_at) == (TRACE, 1234.5)


async def test_a_question_s_id_carries_its_trace_context_and_request_time() -> None:
    """The same for a question."""
    question = InterruptRequestContent("q1", message="Continue?")
    (interrupt,) = await paused_on(traced(question, **{TRACEPARENT: TRACE, REQUESTED_AT: 99.0}))
    claims = claims_of(interrupt)
    assert (claims.traceparent, claims.requested_at) == (TRACE, 99.0)


async def test_a_traced_request_without_a_request_time_is_timed_from_the_pause() -> None:
    """No (or a non-float) request time: the time the interrupt was issued is used."""
    approval = traced(remote_approval(), **{TRACEPARENT: TRACE})
    question = traced(
        InterruptRequestContent("q1", message="Continue?"), **{TRACEPARENT: TRACE, REQUESTED_AT: 7}
    )
    for interrupt in await paused_on(approval, question):
        claims = claims_of(interrupt)
        assert (claims.traceparent, claims.requested_at) == (TRACE, NOW)


async def test_without_a_trace_context_an_id_carries_no_tracing_claims() -> None:
    """Outside a traced span, a request time alone is not signed into the id."""
    (interrupt,) = await paused_on(traced(remote_approval(), **{REQUESTED_AT: 1234.5}))
    claims = claims_of(interrupt)
    assert (claims.traceparent, claims.requested_at) == (None, None)


# -- equal questions of one pause ------------------------------------------------------------


async def test_equal_questions_are_keyed_apart_and_each_answered_once() -> None:
    """Four equal questions (same message and id): keys message, id, id#2, id#3; all four
    answered in one resume are accepted."""
    agent = app_for(*(InterruptRequestContent("q1", message="Continue?") for _ in range(4)))
    first = await agent.post(run_input(user("go")))
    found = interrupts(first)
    assert [i["metadata"]["agui_chat"]["key"] for i in found] == [
        "Continue?",
        "q1",
        "q1#2",
        "q1#3",
    ]
    assert len({claims_of(i).pause for i in found}) == 1
    assert {claims_of(i).pause_size for i in found} == {4}
    resumed = await agent.post(
        run_input(
            user("go"),
            *history_from(first),
            run="r2",
            resume=[answer(i, "yes") for i in found],
        ),
    )
    assert outcome(resumed) == {"type": "success"}
