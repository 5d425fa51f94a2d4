"""What a grant covers and says, what an audit record holds, exactly: a grant's boundaries
(audience, tool, arguments, scope, the instant it expires), its JSON round trip, the words a
person reads; each field of a record the tool loop writes (the edit, a result's digest, who
asked), outcomes joined by seq or by claim, and the words of a trail that does not verify.
Through public names: ``Grant``, ``ApprovalStore`` and ``FunctionInvokingChatClient``."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from agui_chat import (
    AuditChainError,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    Principal,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.consent._audit import AuditDraft
from agui_chat.stores import Grant, InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient
from fake_clock import FakeClock, on_the_server

NOW = datetime(2026, 12, 8, 10, 0, tzinfo=timezone.utc)
ALICE = Principal("alice", name="Alice", roles=frozenset({"ops"}))


def a_grant(**changes: Any) -> Grant:
    fields: dict[str, Any] = {
        "id": "g1",
        "audience": "aud",
        "tool": "write_file",
        "arguments_sha256": hashlib.sha256(b'{"path":"a"}').hexdigest(),
        "scope": "thread",
        "thread_id": "t1",
        "principal_id": None,
        "granted_by": ALICE,
        "created": NOW,
        "expires": NOW + timedelta(minutes=10),
        "arguments": {"path": "a"},
    }
    fields.update(changes)
    return Grant(**fields)


def covers(grant: Grant, **changes: Any) -> bool:
    asked: dict[str, Any] = {
        "audience": "aud",
        "tool": "write_file",
        "arguments_sha256": hashlib.sha256(b'{"path":"a"}').hexdigest(),
        "thread_id": "t1",
        "principal_id": "alice",
        "now": NOW,
    }
    asked.update(changes)
    return grant.covers(**asked)


def test_a_grant_covers_exactly_its_call_until_the_instant_it_expires() -> None:
    grant = a_grant()
    assert covers(grant)
    assert not covers(grant, audience="other")
    assert not covers(grant, tool="delete_file")
    assert not covers(grant, arguments_sha256="0" * 64)
    assert not covers(grant, thread_id="t2")
    assert not covers(grant, thread_id=None)
    assert covers(grant, now=grant.expires - timedelta(microseconds=1))
    assert not covers(grant, now=grant.expires)  # expired at that instant, not after it
    tool_wide = a_grant(arguments_sha256=None, arguments=None)
    assert covers(tool_wide, arguments_sha256="0" * 64)
    assert not covers(tool_wide, tool="delete_file", arguments_sha256="0" * 64)


def test_a_principal_grant_covers_only_its_principal_and_a_scope_needs_its_id() -> None:
    mine = a_grant(scope="principal", thread_id=None, principal_id="alice")
    assert covers(mine, thread_id="anywhere")
    assert not covers(mine, principal_id="bob")
    assert not covers(mine, principal_id=None)
    assert not covers(a_grant(scope="principal", thread_id="t1", principal_id=None))
    assert not covers(a_grant(thread_id=None), thread_id=None)


def test_a_grant_round_trips_through_its_json_exactly() -> None:
    for grant in (
        a_grant(),
        a_grant(arguments_sha256=None, arguments=None, granted_by=None),
        a_grant(scope="principal", thread_id=None, principal_id="alice"),
    ):
        text = json.dumps(grant.to_dict())
        assert Grant.from_dict(json.loads(text)) == grant
    assert a_grant().to_dict()["arguments_sha256"] == hashlib.sha256(b'{"path":"a"}').hexdigest()
    assert a_grant().to_dict()["arguments"] == {"path": "a"}
    assert a_grant(granted_by=None).to_dict()["granted_by"] is None


def test_a_grant_says_what_it_covers_in_words() -> None:
    assert a_grant().describe('write_file(path="a")') == (
        'don\'t ask again for write_file(path="a") in this conversation until '
        "2026-12-08 10:10:00 UTC"
    )
    local = NOW.astimezone(timezone(timedelta(hours=5)))
    tool_wide = a_grant(
        arguments_sha256=None, scope="principal", principal_id="alice", expires=local
    )
    assert tool_wide.describe() == (
        "don't ask again for write_file with any arguments for alice until 2026-12-08 10:00:00 UTC"
    )
    assert a_grant().describe() == (
        "don't ask again for write_file with the same arguments in this conversation until "
        "2026-12-08 10:10:00 UTC"
    )


# -- what the tool loop records -------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    return on_the_server(monkeypatch)


def loop(store: InMemoryApprovalStore, *replies: Any, returns: Any = "wrote") -> Any:
    ran: list[dict[str, Any]] = []

    @approval_required(allow_remember=True)
    @ai_function
    def write_file(path: str) -> Any:
        """Write a file."""
        ran.append({"path": path})
        return returns

    queue = [
        ChatMessage("assistant", [r]) if isinstance(r, FunctionCallContent) else r for r in replies
    ]
    model = ScriptedChatClient(lambda messages, options: queue.pop(0))
    return FunctionInvokingChatClient(model, approval_store=store), write_file, ran


async def resume_with(client: Any, options: ChatOptions, answer: Any) -> None:
    history = [ChatMessage("user", "go")]
    paused = await client.get_response(history, options)
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    await client.get_response(
        [*history, *paused.messages, ChatMessage("user", [answer(request)])], options
    )


async def test_an_edited_approval_is_recorded_with_its_edit_the_call_as_run_and_who_asked(
    clock: FakeClock,
) -> None:
    store = InMemoryApprovalStore(clock=clock)
    client, tool, ran = loop(
        store, FunctionCallContent("c1", "write_file", {"path": "a"}), "done", returns={"ok": "é"}
    )
    options = ChatOptions(tools=[tool], conversation_id="t1")

    def edit(request: ToolApprovalRequestContent) -> Any:
        request.requester = Principal("bob", name="Bob", roles=frozenset({"dev"}))
        return request.create_response(True, edited_arguments={"path": "b"}, approver=ALICE)

    await resume_with(client, options, edit)
    assert ran == [{"path": "b"}]
    [record] = [r async for r in store.audit()]
    assert (record.decision, record.audience, record.tool) == ("edited", "local", "write_file")
    assert record.arguments == {"path": "b"} and record.edited_arguments == {"path": "b"}
    assert record.arguments_sha256 == hashlib.sha256(b'{"path":"b"}').hexdigest()
    assert record.requester == Principal("bob", name="Bob")  # who asked: their name, no roles
    assert record.approver == ALICE
    # A result that is not text is digested as its compact JSON, as written, not escaped.
    assert record.result_sha256 == hashlib.sha256('{"ok":"é"}'.encode()).hexdigest()


async def test_a_principal_grant_covers_the_same_call_later_in_the_request_without_a_thread(
    clock: FakeClock,
) -> None:
    """In process the principal is the approver of the answers: a later call of the same
    request is covered by their principal-scoped grant, with no conversation at all."""
    store = InMemoryApprovalStore(clock=clock)
    call = FunctionCallContent("c1", "write_file", {"path": "a"})
    again = FunctionCallContent("c2", "write_file", {"path": "a"})
    client, tool, ran = loop(store, call, again, "done")
    options = ChatOptions(tools=[tool])

    def remember(request: ToolApprovalRequestContent) -> Any:
        return request.create_response(
            True, approver=ALICE, remember="principal", remember_match="tool"
        )

    await resume_with(client, options, remember)
    assert ran == [{"path": "a"}, {"path": "a"}]
    [grant] = await store.grants(principal_id="alice")
    assert (grant.scope, grant.thread_id, grant.principal_id) == ("principal", None, "alice")
    assert grant.arguments_sha256 is None and grant.arguments is None  # any arguments
    records = [r async for r in store.audit()]
    assert [(r.decision, r.grant_id) for r in records] == [
        ("approved", None),
        ("remembered", grant.id),
    ]


async def test_a_loop_without_a_conversation_or_a_principal_reads_no_grants(
    clock: FakeClock,
) -> None:
    store = InMemoryApprovalStore(clock=clock)
    client, tool, ran = loop(store, FunctionCallContent("c1", "write_file", {"path": "a"}))
    paused = await client.get_response([ChatMessage("user", "go")], ChatOptions(tools=[tool]))
    assert len(paused.input_requests) == 1 and ran == []


# -- outcomes, withdrawals and the words of a broken trail ------------------------------------


def decision(call_id: str, claim: str | None = None) -> AuditDraft:
    return AuditDraft(
        "approved", "aud", "t1", "r1", call_id, "write_file", {"path": "a"}, claim=claim
    )


async def test_an_outcome_named_by_its_claim_joins_the_decision_recorded_with_that_claim() -> None:
    store = InMemoryApprovalStore()
    assert await store.claim("key-1", expires_at=None, owner="o")
    seq = await store.start_audited("key-1", owner="o", audit=decision("c1", claim="key-1"))
    assert seq == 1
    await store.record_result("key-1", "lost it", outcome=("key-1", "lost"))
    await store.record_result("key-1", "again", outcome=("key-1", "ran"))  # kept once
    [record] = [r async for r in store.audit()]
    assert record.outcome == "lost"
    assert record.result_sha256 == hashlib.sha256(b"lost it").hexdigest()
    await store.append_audit(decision("c9"))
    await store.record_result("never-claimed", "x", outcome=("nobody", "ran"))
    assert [(r.call_id, r.outcome) async for r in store.audit()] == [("c1", "lost"), ("c9", None)]


async def test_a_withdrawn_decision_stays_in_the_chain_but_not_in_the_trail() -> None:
    store = InMemoryApprovalStore()
    first = await store.append_audit(decision("c1"))
    await store.append_audit(decision("c2"))
    await store.record_withdrawn(first)
    assert [r.call_id async for r in store.audit()] == ["c2"]
    assert await store.verify_audit() == 2


async def test_a_broken_trail_is_named_in_words() -> None:
    from dataclasses import replace

    store = InMemoryApprovalStore()
    for call_id in ("c1", "c2", "c3"):
        await store.append_audit(decision(call_id))
    trail = store._trail  # the store's own list: what an attacker with its memory would edit
    trail[1] = replace(trail[1], body=trail[1].body.replace("c2", "cX"))
    with pytest.raises(
        AuditChainError,
        match=r"^audit record 2 was altered \(its hash does not match its content and the "
        r"record before it\)$",
    ) as altered:
        await store.verify_audit()
    assert altered.value.seq == 2
    store = InMemoryApprovalStore()
    for call_id in ("c1", "c2", "c3"):
        await store.append_audit(decision(call_id))
    del store._trail[-1]
    with pytest.raises(
        AuditChainError,
        match=r"^the audit trail ends at record 2 but its head says 3: records were removed "
        r"from its end$",
    ) as cut:
        await store.verify_audit()
    assert cut.value.seq == 3


def test_arguments_are_compared_by_the_digest_of_their_canonical_ascii_json() -> None:
    """Key order and spacing do not change a digest; the JSON hashed is ASCII (``é`` as
    ``\\u00e9``), so every store and every reader computes the same one."""
    from agui_chat.consent._grants import arguments_sha256

    canonical = '{"a":"\\u00e9","b":[1,2]}'
    expected = hashlib.sha256(canonical.encode("ascii")).hexdigest()
    assert arguments_sha256({"b": [1, 2], "a": "é"}) == expected
    assert arguments_sha256({"a": "é", "b": [1, 2]}) == expected
    assert arguments_sha256(None) == hashlib.sha256(b"{}").hexdigest()


async def test_each_call_of_a_batch_gets_its_own_outcome_and_a_tool_that_asks_again_ran(
    clock: FakeClock,
) -> None:
    """A batch where a call nobody had to approve comes first: the covered call after it still
    gets its outcome; an approved tool that asks a question ran (no result to digest)."""
    from agui_chat import request_input

    store = InMemoryApprovalStore(clock=clock)

    @ai_function
    def look(path: str) -> str:
        """Look at a file."""
        return "ok"

    @approval_required(allow_remember=True)
    @ai_function
    def write_file(path: str) -> str:
        """Write a file, asking which encoding."""
        if path == "asks":
            request_input("Which encoding?")
        return "wrote"

    replies: list[Any] = [
        ChatMessage("assistant", [FunctionCallContent("c1", "write_file", {"path": "a"})]),
        "done",
        ChatMessage(
            "assistant",
            [
                FunctionCallContent("p1", "look", {"path": "a"}),
                FunctionCallContent("c2", "write_file", {"path": "a"}),
            ],
        ),
        "done",
        ChatMessage("assistant", [FunctionCallContent("c3", "write_file", {"path": "asks"})]),
    ]
    model = ScriptedChatClient(lambda messages, options: replies.pop(0))
    client = FunctionInvokingChatClient(model, approval_store=store)
    options = ChatOptions(tools=[write_file, look], conversation_id="t1")
    await resume_with(client, options, lambda r: r.create_response(True, remember="thread"))
    await client.get_response([ChatMessage("user", "again")], options)
    await resume_with(client, options, lambda r: r.create_response(True))
    records = {r.call_id: r async for r in store.audit()}
    assert records["c2"].decision == "remembered" and records["c2"].outcome == "ran"
    assert (records["c3"].outcome, records["c3"].result_sha256) == ("ran", None)
