"""Governance in process: who may answer (approver roles, a predicate, four eyes), remembered
approvals (grants) with ``FunctionInvokingChatClient(approval_store=...)``, and the audit
trail the loop keeps. Every refusal uses nothing up: the right person can answer after."""

from __future__ import annotations

from dataclasses import replace
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


def requests_of(response: ChatResponse) -> list[ToolApprovalRequestContent]:
    """The approvals ``response`` asks for."""
    return [
        c
        for m in response.messages
        for c in m.contents
        if isinstance(c, ToolApprovalRequestContent)
    ]


def request_of(response: ChatResponse) -> ToolApprovalRequestContent:
    [request] = requests_of(response)
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
    assert (grant.thread_id, grant.principal_id) == ("t1", None)  # the thread's, nobody's
    assert (grant.expires - grant.created) == timedelta(seconds=600)

    again = await client.get_response([ChatMessage("user", "again")], options)  # c2: covered
    assert files.written == ["notes.txt", "notes.txt"]
    assert requests_of(again) == []
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
    asked = requests_of(response)
    assert asked[-1].tool_call.arguments == {"path": "secret.txt"}  # the pause: it asks
    assert [r.decision async for r in store.audit()] == ["approved"]


async def test_each_refusal_names_the_request_the_tool_and_who_to_ask() -> None:
    """What a person reads when an answer is refused: the request and tool it is about, who
    answered, what the tool needs, and that nothing was used up."""
    files = Files(approvers=("ops", "sre"), distinct_approver=True)
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool])
    history, request = await paused(client, options)
    request.requester = BOB
    about = "the answer to 'approval_c1' (tool 'write_file')"
    expected = {
        None: f"{about} came from nobody: this call may only be answered by an identified "
        "person; nothing was used up",
        BOB: f"{about}: 'bob' asked for this call and may not answer it too (four eyes: "
        "another person must); nothing was used up",
        Principal("dave", roles=frozenset({"dev"})): f"{about}: 'dave' may not answer this "
        "call (it needs one of the roles ops, sre); nothing was used up, so someone allowed "
        "can still answer",
    }
    for who, message in expected.items():
        with pytest.raises(ApproverNotAllowedError) as refused:
            await answer(client, history, options, request.create_response(True, approver=who))
        assert str(refused.value) == message
        assert refused.value.request_ids == ("approval_c1",)
    request.requester = None
    with pytest.raises(ApproverNotAllowedError) as unknown:
        await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert str(unknown.value) == (
        f"{about}: who asked for this call is not known, so a second person's approval cannot "
        "be shown (four eyes); nothing was used up"
    )
    assert unknown.value.request_ids == ("approval_c1",)
    assert files.written == []


async def test_a_predicate_refusal_says_the_tools_rule_decided() -> None:
    files = Files(approvers=lambda principal, call: False)
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[files.tool])
    history, request = await paused(client, options)
    with pytest.raises(
        ApproverNotAllowedError, match="it needs the tool's approver rule to allow them"
    ):
        await answer(client, history, options, request.create_response(True, approver=ALICE))


@pytest.mark.parametrize(
    ("rules", "store", "conversation", "answer_of", "problem"),
    [
        (
            {},
            True,
            "t1",
            lambda r: replace(r.create_response(True), remember="thread"),
            "this tool does not allow remembering an approval (allow_remember=False)",
        ),
        (
            {"allow_remember": True},
            False,
            "t1",
            lambda r: r.create_response(True, remember="thread"),
            "nothing here keeps remembered approvals (give the tool loop an approval_store, "
            "or use a store that keeps grants)",
        ),
        (
            {"allow_remember": True},
            True,
            "t1",
            lambda r: r.create_response(True, remember="principal"),
            "remember 'principal' needs to know who answered, and nobody did",
        ),
        (
            {"allow_remember": True},
            True,
            None,
            lambda r: r.create_response(True, remember="thread"),
            "remember 'thread' needs a conversation (ChatOptions.conversation_id)",
        ),
    ],
)
async def test_each_remember_refusal_says_why_with_its_code(
    rules: dict[str, Any], store: bool, conversation: str | None, answer_of: Any, problem: str
) -> None:
    files = Files(**rules)
    kept = InMemoryApprovalStore() if store else None
    client = FunctionInvokingChatClient(model(call()), approval_store=kept)
    options = ChatOptions(tools=[files.tool], conversation_id=conversation)
    history, request = await paused(client, options)
    with pytest.raises(InvalidResponseError) as refused:
        await answer(client, history, options, answer_of(request))
    assert str(refused.value) == (
        f"approval request 'approval_c1': {problem}; nothing was run or remembered"
    )
    assert refused.value.code == "RESUME_INVALID_PAYLOAD"
    assert refused.value.request_ids == ("approval_c1",)
    assert files.written == []


async def test_a_rejection_cannot_carry_a_remember_behind_create_responses_back() -> None:
    files = Files(allow_remember=True)
    store = InMemoryApprovalStore()
    client = FunctionInvokingChatClient(model(call()), approval_store=store)
    options = ChatOptions(tools=[files.tool], conversation_id="t1")
    history, request = await paused(client, options)
    with pytest.raises(ValueError, match="only an approval can be remembered"):
        replace(request.create_response(False), remember="thread")
    rejected = request.create_response(False)
    rejected.remember = "thread"  # set after the content checked itself: the engine refuses
    with pytest.raises(InvalidResponseError) as refused:
        await answer(client, history, options, rejected)
    assert str(refused.value) == (
        "approval request 'approval_c1': only an approval can be remembered; nothing was run "
        "or remembered"
    )
    assert await store.grants() == [] and [r async for r in store.audit()] == []


async def test_a_tool_that_fails_is_recorded_failed_and_a_batch_records_each_call() -> None:
    """Outcomes per call in a batch: a call nobody had to approve has no record, the covered
    and the approved ones each get theirs (``failed`` when the tool raised)."""
    store = InMemoryApprovalStore()
    failures: list[str] = []

    @approval_required
    @ai_function
    def fail_file(path: str) -> str:
        """Fail to write a file."""
        failures.append(path)
        raise OSError("disk full")

    @ai_function
    def look(path: str) -> str:
        """Look at a file."""
        return "ok"

    batch = ChatMessage(
        "assistant",
        [
            FunctionCallContent("p1", "look", {"path": "a"}),
            FunctionCallContent("f1", "fail_file", {"path": "b"}),
        ],
    )
    client = FunctionInvokingChatClient(model(batch, "done"), approval_store=store)
    options = ChatOptions(tools=[fail_file, look], conversation_id="t1")
    history = [ChatMessage("user", "go")]
    paused_on = await client.get_response(history, options)
    [request] = requests_of(paused_on)
    await answer(client, [*history, *paused_on.messages], options, request.create_response(True))
    assert failures == ["b"]
    [record] = [r async for r in store.audit()]
    assert (record.call_id, record.decision, record.outcome) == ("f1", "approved", "failed")


async def test_every_gate_of_a_tool_wrapped_twice_must_let_the_answer_through() -> None:
    """Four eyes on the outer wrapper and a role on the inner one: someone who is not the
    requester still needs the role; neither rule is read past."""
    written: list[str] = []

    @ai_function
    def write_file(path: str) -> str:
        """Write a file."""
        written.append(path)
        return "ok"

    tool = approval_required(distinct_approver=True)(approval_required(approvers="ops")(write_file))
    client = FunctionInvokingChatClient(model(call()))
    options = ChatOptions(tools=[tool])
    history, request = await paused(client, options)
    request.requester = Principal("erin")
    with pytest.raises(ApproverNotAllowedError) as refused:
        await answer(client, history, options, request.create_response(True, approver=BOB))
    assert refused.value.code == "APPROVER_NOT_ALLOWED"
    await answer(client, history, options, request.create_response(True, approver=ALICE))
    assert written == ["notes.txt"]
