"""Governance in process: who may answer (approver roles, a predicate, four eyes), remembered
approvals (grants) with ``FunctionInvokingChatClient(approval_store=...)``, and the audit
trail the loop keeps. Every refusal uses nothing up: the right person can answer after."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agui_chat import (
    ApproverNotAllowedError,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionInvokingChatClient,
    InvalidResponseError,
    Principal,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient
from fake_clock import FakeClock, on_the_server

ALICE = Principal("alice", roles=frozenset({"ops"}))
BOB = Principal("bob", roles=frozenset({"dev"}))
CAROL = Principal("carol", roles=frozenset({"ops"}))


class Files:
    """A gated ``write_file`` counting its runs, behind the given approval rules."""

    def __init__(self, **rules: Any) -> None:
        self.written: list[str] = []

        @ai_function
        def write_file(path: str) -> str:
            """Write a file."""
            self.written.append(path)
            return f"wrote {path}"

        self.tool = approval_required(**rules)(write_file)


def model(*replies: FunctionCallContent | ChatMessage | str) -> ScriptedChatClient:
    """A model replying with ``replies`` in turn: a call, a message, or a text; a lone call is
    followed by ``done`` (its answer once it has its result)."""
    if all(isinstance(r, FunctionCallContent) for r in replies) and len(replies) == 1:
        replies = (*replies, "done")
    queue: list[Any] = [
        ChatMessage("assistant", [r]) if isinstance(r, FunctionCallContent) else r for r in replies
    ]

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        return queue.pop(0)

    return ScriptedChatClient(reply)


def request_of(response: ChatResponse) -> ToolApprovalRequestContent:
    [request] = [
        c
        for m in response.messages
        for c in m.contents
        if isinstance(c, ToolApprovalRequestContent)
    ]
    return request


async def paused(
    client: FunctionInvokingChatClient, options: ChatOptions
) -> tuple[list[ChatMessage], ToolApprovalRequestContent]:
    history = [ChatMessage("user", "write notes.txt")]
    response = await client.get_response(history, options)
    history += response.messages
    return history, request_of(response)


async def answer(
    client: FunctionInvokingChatClient,
    history: list[ChatMessage],
    options: ChatOptions,
    response: Any,
) -> ChatResponse:
    return await client.get_response([*history, ChatMessage("user", [response])], options)


def call(call_id: str = "c1", path: str = "notes.txt") -> FunctionCallContent:
    return FunctionCallContent(call_id, "write_file", {"path": path})


@pytest.mark.parametrize(
    ("approver", "code"),
    [
        (None, "APPROVER_UNKNOWN"),
        (BOB, "APPROVER_NOT_ALLOWED"),
    ],
)
async def test_only_a_principal_with_the_role_may_answer_and_a_refusal_uses_nothing_up(
    approver: Principal | None, code: str
) -> None:
    files = Files(approvers="ops")
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool])
    history, request = await paused(client, options)
    for approved in (True, False):  # approve and reject alike
        with pytest.raises(ApproverNotAllowedError) as refused:
            await answer(
                client, history, options, request.create_response(approved, approver=approver)
            )
        assert refused.value.code == code
        assert isinstance(refused.value, InvalidResponseError)
    assert files.written == []
    await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert files.written == ["notes.txt"]


async def test_a_predicate_decides_and_one_that_raises_means_no() -> None:
    seen: list[tuple[str, str]] = []

    def only_alice(principal: Principal, call: FunctionCallContent) -> bool:
        seen.append((principal.id, call.name))
        if principal.id == "carol":
            raise RuntimeError("directory down")
        return principal.id == "alice"

    files = Files(approvers=only_alice)
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool])
    history, request = await paused(client, options)
    for who in (BOB, CAROL):
        with pytest.raises(ApproverNotAllowedError) as refused:
            await answer(client, history, options, request.create_response(True, approver=who))
        assert refused.value.code == "APPROVER_NOT_ALLOWED"
    await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert files.written == ["notes.txt"]
    assert seen == [("bob", "write_file"), ("carol", "write_file"), ("alice", "write_file")]


async def test_four_eyes_refuses_the_requester_and_an_unknown_requester() -> None:
    files = Files(distinct_approver=True)
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool])
    history, request = await paused(client, options)
    with pytest.raises(ApproverNotAllowedError) as unknown:
        await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert unknown.value.code == "APPROVER_UNKNOWN"  # who asked is not known in process
    request.requester = BOB
    for own in (True, False):
        with pytest.raises(ApproverNotAllowedError) as refused:
            await answer(client, history, options, request.create_response(own, approver=BOB))
        assert refused.value.code == "APPROVER_IS_REQUESTER"
    assert files.written == []
    await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert files.written == ["notes.txt"]


async def test_remember_needs_a_tool_that_allows_it_and_a_store() -> None:
    files = Files()
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    assert request.allow_remember is False
    with pytest.raises(InvalidResponseError):
        request.create_response(True, remember="thread")
    forged = request.create_response(True)
    forged.remember = "thread"  # set behind create_response's back: the engine refuses it
    with pytest.raises(InvalidResponseError, match="does not allow remembering"):
        await answer(client, history, options, forged)
    assert files.written == []

    remembering = Files(allow_remember=True)
    client = FunctionInvokingChatClient(model(call()))  # no approval_store
    options = ChatOptions(tools=[remembering.tool], conversation_id="t1")
    history, request = await paused(client, options)
    with pytest.raises(InvalidResponseError, match="keeps remembered approvals"):
        await answer(client, history, options, request.create_response(True, remember="thread"))
    assert remembering.written == []


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """One fake clock for the consent engine and the store."""
    return on_the_server(monkeypatch)


async def test_a_remembered_approval_lets_the_same_call_run_in_its_thread_and_nowhere_else(
    clock: FakeClock,
) -> None:
    store = InMemoryApprovalStore(clock=clock)
    files = Files(allow_remember=True)
    client = FunctionInvokingChatClient(
        model(call("c1"), "done", call("c2"), "done", call("c3", "other.txt"), call("c4")),
        approval_store=store,
    )
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    await answer(
        client,
        history,
        options,
        request.create_response(True, approver=ALICE, remember="thread", remember_for=600),
    )
    [grant] = await store.grants(thread_id="t1")
    assert (grant.tool, grant.scope, grant.granted_by) == ("write_file", "thread", ALICE)
    assert (grant.expires - grant.created) == timedelta(seconds=600)

    again = await client.get_response([ChatMessage("user", "again")], options)  # c2: covered
    assert files.written == ["notes.txt", "notes.txt"]
    assert not any(
        isinstance(c, ToolApprovalRequestContent) for m in again.messages for c in m.contents
    )
    other_args = await client.get_response([ChatMessage("user", "other")], options)  # c3
    assert request_of(other_args).tool_call.arguments == {"path": "other.txt"}
    other_thread = await client.get_response(
        [ChatMessage("user", "again")], ChatOptions(tools=[files.tool], conversation_id="t2")
    )  # c4 in another thread: asks
    request_of(other_thread)
    assert files.written == ["notes.txt", "notes.txt"]

    records = [r async for r in store.audit()]
    assert [(r.call_id, r.decision, r.outcome, r.grant_id) for r in records] == [
        ("c1", "approved", "ran", None),
        ("c2", "remembered", "ran", grant.id),
    ]
    assert records[1].approver == ALICE
    assert await store.verify_audit() == 2


async def test_a_revoked_or_expired_grant_asks_again(clock: FakeClock) -> None:
    store = InMemoryApprovalStore(clock=clock)
    files = Files(allow_remember=True)
    client = FunctionInvokingChatClient(model(call("c1"), "done", call("c2")), approval_store=store)
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    await answer(
        client, history, options, request.create_response(True, remember="thread", remember_for=60)
    )
    [grant] = await store.grants()
    assert await store.revoke_grant(grant.id) is True
    request_of(await client.get_response([ChatMessage("user", "again")], options))  # c2 asks
    assert files.written == ["notes.txt"]


async def test_remember_principal_needs_someone_and_a_thread_needs_a_conversation() -> None:
    store = InMemoryApprovalStore()
    files = Files(allow_remember=True)
    client = FunctionInvokingChatClient(model(call()), approval_store=store)
    with_thread = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, with_thread)
    with pytest.raises(InvalidResponseError, match="needs to know who answered"):
        await answer(
            client, history, with_thread, request.create_response(True, remember="principal")
        )
    no_thread = ChatOptions(tools=[files.tool])
    with pytest.raises(InvalidResponseError, match="needs a conversation"):
        await answer(client, history, no_thread, request.create_response(True, remember="thread"))
    assert files.written == [] and await store.grants() == []
    assert [r async for r in store.audit()] == []


async def test_the_loop_records_a_rejection_with_its_reason_verbatim() -> None:
    store = InMemoryApprovalStore()
    files = Files()
    client = FunctionInvokingChatClient(model(call()), approval_store=store)
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    await answer(
        client, history, options, request.create_response(False, "not /etc, please", approver=BOB)
    )
    [record] = [r async for r in store.audit()]
    assert (record.decision, record.reason, record.outcome, record.approver) == (
        "rejected",
        "not /etc, please",
        None,
        BOB,
    )
    assert files.written == []


@pytest.mark.parametrize("order", ["covered first", "covered last"])
async def test_a_grant_covers_only_the_call_it_was_found_for_never_another_under_its_id(
    clock: FakeClock, order: str
) -> None:
    """A model reusing a covered call's id for other arguments in the same turn gets neither
    call run (the ids are ambiguous), and the next turn's call under that id asks again."""
    store = InMemoryApprovalStore(clock=clock)
    files = Files(allow_remember=True)
    covered, other = call("c1", "notes.txt"), call("c1", "secret.txt")
    files.written.clear()
    both = [covered, other] if order == "covered first" else [other, covered]
    client = FunctionInvokingChatClient(
        model(call("c0"), "done", ChatMessage("assistant", both), call("c1", "secret.txt")),
        approval_store=store,
    )
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    await answer(client, history, options, request.create_response(True, remember="thread"))
    assert files.written == ["notes.txt"]
    response = await client.get_response([ChatMessage("user", "again")], options)
    assert files.written == ["notes.txt"]  # neither c1 ran: "secret.txt" never
    asked = [
        c
        for m in response.messages
        for c in m.contents
        if isinstance(c, ToolApprovalRequestContent)
    ]
    assert asked[-1].tool_call.arguments == {"path": "secret.txt"}  # the pause: it asks
    assert [r.decision async for r in store.audit()] == ["approved"]
