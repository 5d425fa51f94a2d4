"""Governance over AG-UI: the answerer is the principal of the request that carries the
answer (``identify=`` or Starlette's authentication), never the payload; the requester is
bound into the signed interrupt id; ``approvers=`` and ``distinct_approver=`` are decided
before the claim, so a refused answer uses nothing up; remembered approvals (grants) let a
covered call run without a pause in their thread only, until they expire or are revoked on
any worker; every decision has an audit record in the store."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from server_support import (
    SideEffects,
    approve,
    history_from,
    interrupts,
    outcome,
    reject,
    run_error,
    run_input,
    scripted,
    user,
)
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.routing import Mount

from agui_chat import FunctionCallContent, Principal, ai_function, approval_required
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_server import SIGNING_KEY, client_for
from agui_streams import assert_valid_agui, sse_events
from fake_clock import FakeClock, on_the_server

USERS = {
    "alice": Principal("alice", name="Alice", roles=frozenset({"ops"})),
    "bob": Principal("bob", roles=frozenset({"dev"})),
    "carol": Principal("carol", roles=frozenset({"ops"})),
}


def asked(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The interrupts a run ended on (none: it finished)."""
    return interrupts(events) if outcome(events)["type"] == "interrupt" else []


def by_header(request: Request) -> Principal | None:
    """The test's authentication: the ``x-user`` header names a known user."""
    return USERS.get(request.headers.get("x-user", ""))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    return on_the_server(monkeypatch)


class Files:
    """A gated ``write_file`` (with the given rules) that counts its runs."""

    def __init__(self, **rules: Any) -> None:
        self.effects = SideEffects()

        @approval_required(**rules)
        @ai_function
        def write_file(path: str) -> str:
            """Write a file."""
            self.effects.record("write_file", path=path)
            return f"wrote {path}"

        self.tool = write_file

    @property
    def runs(self) -> int:
        return self.effects.count("write_file")


def writes(*paths: str) -> Any:
    """A model that, per request, calls write_file(path) and answers once it has the result."""
    replies: list[Any] = []
    for i, path in enumerate(paths):
        replies += [[FunctionCallContent(f"c{i}", "write_file", {"path": path})], "Done."]
    return scripted(*replies)


async def post(app: Any, body: dict[str, Any], who: str | None = None) -> list[dict[str, Any]]:
    headers = {"accept": "text/event-stream"}
    if who is not None:
        headers["x-user"] = who
    async with client_for(app) as client:
        response = await client.post("/", json=body, headers=headers)
    assert response.status_code == 200, response.text
    events = sse_events(response.content)
    assert_valid_agui(events, resumed=bool(body.get("resume")))
    return events


def server(files: Files, model: Any, store: InMemoryApprovalStore, **options: Any) -> AGUIServer:
    return AGUIServer(
        model,
        tools=[files.tool],
        signing_key=SIGNING_KEY,
        approval_store=store,
        identify=options.pop("identify", by_header),
        **options,
    )


def served(
    clock: FakeClock, files: Files, *paths: str, **options: Any
) -> tuple[AGUIServer, InMemoryApprovalStore]:
    """``files`` served with a model writing each of ``paths`` in turn, over an in-memory
    store on ``clock``: the server and its store."""
    store = InMemoryApprovalStore(clock=clock)
    return server(files, writes(*paths), store, **options), store


async def pause(app: Any, who: str | None, thread: str = "t1") -> tuple[list[Any], dict[str, Any]]:
    first = [user("write notes.txt")]
    events = await post(app, run_input(*first, thread=thread), who)
    [interrupt] = interrupts(events)
    return [*first, *history_from(events)], interrupt


async def resume(
    app: Any, history: list[Any], entry: dict[str, Any], who: str | None, thread: str = "t1"
) -> list[dict[str, Any]]:
    return await post(app, run_input(*history, thread=thread, run="r2", resume=[entry]), who)


async def test_four_eyes_refuses_the_requester_and_the_payload_cannot_name_another(
    clock: FakeClock,
) -> None:
    files = Files(distinct_approver=True)
    app, store = served(clock, files, "notes.txt")
    history, interrupt = await pause(app, "bob")
    for entry in (approve(interrupt), reject(interrupt, "mine")):
        refused = run_error(await resume(app, history, entry, "bob"))
        assert refused["code"] == "APPROVER_IS_REQUESTER"
    smuggled = approve(interrupt, approver={"id": "alice"})
    assert run_error(await resume(app, history, smuggled, "bob"))["code"] == (
        "RESUME_UNKNOWN_PAYLOAD_KEY"
    )
    assert run_error(await resume(app, history, approve(interrupt), None))["code"] == (
        "APPROVER_UNKNOWN"
    )
    assert files.runs == 0
    events = await resume(app, history, approve(interrupt), "alice")
    assert files.runs == 1 and events[-1]["type"] == "RUN_FINISHED"
    [record] = [r async for r in store.audit()]
    assert (record.decision, record.outcome) == ("approved", "ran")
    assert record.approver == USERS["alice"]  # with the roles that let them answer
    assert record.requester == Principal("bob")  # who asked: no roles
    assert (record.thread_id, record.run_id, record.call_id) == ("t1", "r2", "c0")


async def test_only_a_principal_with_the_role_answers_approve_or_reject(clock: FakeClock) -> None:
    files = Files(approvers={"ops"})
    app, store = served(clock, files, "notes.txt")
    history, interrupt = await pause(app, "bob")
    for entry in (approve(interrupt), reject(interrupt, "no")):
        assert run_error(await resume(app, history, entry, "bob"))["code"] == (
            "APPROVER_NOT_ALLOWED"
        )
        assert run_error(await resume(app, history, entry, None))["code"] == "APPROVER_UNKNOWN"
    assert files.runs == 0 and [r async for r in store.audit()] == []
    await resume(app, history, approve(interrupt), "carol")
    assert files.runs == 1


async def test_require_identity_refuses_an_answer_from_nobody(clock: FakeClock) -> None:
    files = Files()
    app, _ = served(clock, files, "notes.txt", require_identity=True)
    history, interrupt = await pause(app, None)
    refused = run_error(await resume(app, history, approve(interrupt), None))
    assert refused["code"] == "APPROVER_UNKNOWN"
    assert refused["message"] == (
        "resume[0]: this server takes answers only from an identified person "
        "(require_identity), and this request names nobody; nothing was used up"
    )
    await resume(app, history, approve(interrupt), "bob")
    assert files.runs == 1


async def test_starlettes_authentication_is_the_default(clock: FakeClock) -> None:
    class HeaderAuth(AuthenticationBackend):
        async def authenticate(
            self, conn: HTTPConnection
        ) -> tuple[AuthCredentials, SimpleUser] | None:
            name = conn.headers.get("x-user")
            if name is None:
                return None
            scopes = sorted(USERS[name].roles)
            return AuthCredentials(scopes), SimpleUser(name)

    files = Files(approvers="ops", distinct_approver=True)
    store = InMemoryApprovalStore(clock=clock)
    agent = AGUIServer(
        writes("notes.txt"), tools=[files.tool], signing_key=SIGNING_KEY, approval_store=store
    )
    app = Starlette(
        routes=[Mount("/", app=agent)],
        middleware=[Middleware(AuthenticationMiddleware, backend=HeaderAuth())],
    )
    history, interrupt = await pause(app, "alice")
    assert run_error(await resume(app, history, approve(interrupt), "alice"))["code"] == (
        "APPROVER_IS_REQUESTER"
    )
    assert run_error(await resume(app, history, approve(interrupt), "bob"))["code"] == (
        "APPROVER_NOT_ALLOWED"
    )
    await resume(app, history, approve(interrupt), "carol")
    assert files.runs == 1
    [record] = [r async for r in store.audit()]
    assert record.approver == Principal("carol", name="carol", roles=frozenset({"ops"}))
    assert record.requester is not None and record.requester.id == "alice"


async def test_a_remembered_approval_runs_the_same_call_in_its_thread_only(
    clock: FakeClock,
) -> None:
    files = Files(allow_remember=True)
    app, store = served(clock, files, "notes.txt", "notes.txt", "notes.txt")
    history, interrupt = await pause(app, "alice")
    assert "remember" in interrupt["responseSchema"]["properties"]
    remember = {"scope": "thread", "seconds": 600}
    await resume(app, history, approve(interrupt, remember=remember), "alice")
    [grant] = await store.grants(thread_id="t1")
    assert grant.granted_by == USERS["alice"]
    assert (grant.expires - grant.created) == timedelta(seconds=600)

    again = await post(app, run_input(user("again"), thread="t1", run="r3"), "bob")
    assert asked(again) == [] and files.runs == 2
    other = await post(app, run_input(user("again"), thread="t2", run="r4"), "alice")
    assert len(asked(other)) == 1 and files.runs == 2

    records = [r async for r in store.audit()]
    assert [(r.decision, r.outcome, r.grant_id) for r in records] == [
        ("approved", "ran", None),
        ("remembered", "ran", grant.id),
    ]
    assert records[1].requester == Principal("bob") and records[1].approver == USERS["alice"]
    assert await store.verify_audit() == 2


async def test_a_grant_revoked_on_another_worker_or_expired_asks_again(clock: FakeClock) -> None:
    files = Files(allow_remember=True)
    store = InMemoryApprovalStore(clock=clock)
    model = writes("notes.txt", "notes.txt", "notes.txt")
    app, other_worker = server(files, model, store), server(files, model, store)
    history, interrupt = await pause(app, "alice")
    await resume(app, history, approve(interrupt, remember={"scope": "thread"}), "alice")
    [grant] = await store.grants()
    assert await other_worker.approval_store.revoke_grant(grant.id) is True
    assert (
        len(interrupts(await post(app, run_input(user("again"), thread="t1", run="r3"), "alice")))
        == 1
    )
    assert files.runs == 1


async def test_a_grant_never_outlives_max_remember(clock: FakeClock) -> None:
    files = Files(allow_remember=True)
    app, store = served(clock, files, "notes.txt", "notes.txt", max_remember=timedelta(minutes=1))
    history, interrupt = await pause(app, "alice")
    await resume(
        app, history, approve(interrupt, remember={"scope": "thread", "seconds": 86400}), "alice"
    )
    [grant] = await store.grants()
    assert grant.expires - grant.created == timedelta(minutes=1)
    clock.advance(61)
    assert await store.grants() == []
    assert (
        len(interrupts(await post(app, run_input(user("again"), thread="t1", run="r3"), "alice")))
        == 1
    )


async def test_a_grant_never_crosses_audiences(clock: FakeClock) -> None:
    files = Files(allow_remember=True)
    store = InMemoryApprovalStore(clock=clock)
    model = writes("notes.txt", "notes.txt")
    one = server(files, model, store, audience="agent-one")
    two = server(files, model, store, audience="agent-two")
    history, interrupt = await pause(one, "alice")
    await resume(one, history, approve(interrupt, remember={"scope": "principal"}), "alice")
    assert (
        len(interrupts(await post(two, run_input(user("again"), thread="t1", run="r3"), "alice")))
        == 1
    )
    assert files.runs == 1


@pytest.mark.parametrize(
    ("rules", "remember", "who", "code"),
    [
        ({}, {"scope": "thread"}, "alice", "RESUME_INVALID_PAYLOAD"),  # tool does not allow it
        ({"allow_remember": True}, {"scope": "principal"}, None, "RESUME_INVALID_PAYLOAD"),
        (
            {"allow_remember": True, "approvers": "ops"},
            {"scope": "thread"},
            "bob",
            "APPROVER_NOT_ALLOWED",
        ),
        (
            {"allow_remember": True},
            {"scope": "thread", "seconds": -5},
            "alice",
            "RESUME_INVALID_PAYLOAD",
        ),
        ({"allow_remember": True}, {"scope": "forever"}, "alice", "RESUME_INVALID_PAYLOAD"),
    ],
)
async def test_a_remember_that_cannot_be_honoured_is_refused_and_nothing_is_remembered(
    clock: FakeClock, rules: dict[str, Any], remember: dict[str, Any], who: str | None, code: str
) -> None:
    files = Files(**rules)
    app, store = served(clock, files, "notes.txt")
    history, interrupt = await pause(app, "carol")
    refused = run_error(await resume(app, history, approve(interrupt, remember=remember), who))
    assert refused["code"] == code
    assert files.runs == 0 and await store.grants() == []
    assert [r async for r in store.audit()] == []
    await resume(app, history, approve(interrupt), "alice")  # nothing was used up
    assert files.runs == 1


async def test_a_rejection_is_recorded_with_its_reason_and_no_outcome(clock: FakeClock) -> None:
    files = Files()
    app, store = served(clock, files, "notes.txt")
    history, interrupt = await pause(app, "bob")
    await resume(app, history, reject(interrupt, "not /etc, please"), "alice")
    [record] = [r async for r in store.audit()]
    assert (record.decision, record.reason, record.outcome, record.approver) == (
        "rejected",
        "not /etc, please",
        None,
        USERS["alice"],
    )
    assert files.runs == 0


async def test_a_principal_grant_follows_its_principal_and_nobody_else(clock: FakeClock) -> None:
    files = Files(allow_remember=True)
    app, store = served(clock, files, "notes.txt", "notes.txt", "notes.txt")
    history, interrupt = await pause(app, "alice")
    await resume(app, history, approve(interrupt, remember={"scope": "principal"}), "alice")
    [grant] = await store.grants(principal_id="alice")
    assert (grant.scope, grant.thread_id) == ("principal", None)
    # Alice in another conversation: covered.
    assert asked(await post(app, run_input(user("again"), thread="t9", run="r3"), "alice")) == []
    assert files.runs == 2
    # Bob in Alice's own thread, or anyone unidentified: asked.
    assert len(asked(await post(app, run_input(user("again"), thread="t9", run="r4"), "bob"))) == 1
    assert files.runs == 2


async def grants_call(
    app: Any, body: Any, who: str | None = None, query: str = "agui_chat=grants"
) -> Any:
    headers = {} if who is None else {"x-user": who}
    async with client_for(app) as client:
        return await client.post(f"/?{query}", json=body, headers=headers)


async def test_the_grants_endpoint_lists_and_revokes_only_this_conversations_grants(
    clock: FakeClock,
) -> None:
    files = Files(allow_remember=True)
    app, store = served(clock, files, "notes.txt", "notes.txt", "notes.txt")
    for thread in ("t1", "t2"):
        history, interrupt = await pause(app, "alice", thread)
        await resume(
            app, history, approve(interrupt, remember={"scope": "thread"}), "alice", thread
        )
    mine, theirs = (await store.grants(thread_id="t1"))[0], (await store.grants(thread_id="t2"))[0]

    listed = (await grants_call(app, {"threadId": "t1"}, "bob", "x=1&agui_chat=grants")).json()
    [shown] = listed["grants"]
    assert shown["id"] == mine.id and shown["scope"] == "thread" and shown["match"] == "arguments"
    assert shown["call"]["full"] == 'write_file(path="notes.txt")'
    assert shown["description"].startswith(
        'don\'t ask again for write_file(path="notes.txt") in this conversation until '
    )
    assert shown["grantedBy"] == {"id": "alice", "name": "Alice"}

    # Another conversation's grant cannot be revoked by naming its id from this one.
    refused = await grants_call(app, {"threadId": "t1", "revoke": theirs.id}, "bob")
    assert refused.status_code == 404 and refused.json()["code"] == "GRANT_NOT_FOUND"
    assert len(await store.grants(thread_id="t2")) == 1
    revoked = await grants_call(app, {"threadId": "t1", "revoke": mine.id}, "bob")
    assert revoked.json() == {"revoked": True}
    assert await store.grants(thread_id="t1") == []
    for bad in ({}, {"threadId": 5}, {"threadId": "t1", "revoke": 7}, [1]):
        wrong = await grants_call(app, bad)
        assert wrong.status_code == 400 and wrong.json()["code"] == "INVALID_GRANTS_REQUEST"


async def test_the_grants_endpoint_says_when_the_store_keeps_none(clock: FakeClock) -> None:
    from agui_chat.stores import ApprovalStore, Claim, ClaimRecord

    class OwnStore(ApprovalStore):  # a store of your own written before governance
        async def _claim(self, claim: Claim) -> bool:
            return True

        async def record(self, key: str) -> ClaimRecord | None:
            return None

        async def record_result(self, key: str, result: str, **kept: Any) -> None:
            return None

        async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
            return None

    files = Files(allow_remember=True)
    app = server(files, writes("notes.txt"), OwnStore())  # type: ignore[arg-type]
    answer = await grants_call(app, {"threadId": "t1"})
    assert answer.status_code == 404 and answer.json()["code"] == "GRANTS_NOT_KEPT"
    history, interrupt = await pause(app, "alice")
    assert "remember" not in interrupt["responseSchema"]["properties"]  # never offered
    refused = run_error(
        await resume(app, history, approve(interrupt, remember={"scope": "thread"}), "alice")
    )
    assert refused["code"] == "RESUME_INVALID_PAYLOAD"
    await resume(app, history, approve(interrupt), "alice")
    assert files.runs == 1
