"""The resume check's claims in the consumed-approvals store, pinned by what a person and an
operator see: an answer used once is refused the second time, a resume whose claim is
refused (or whose store fails, or whose client leaves mid-claim) releases its own claims
and only its own, and a resume mixing a kept answer with a fresh one runs the fresh one."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from server_support import (
    SideEffects,
    answer,
    approve,
    history_from,
    interrupts,
    outcome,
    post_and_leave,
    refused_before_the_run,
    run_input,
    scripted,
    types,
    user,
)

from agui_chat import FunctionCallContent, InterruptRequestContent
from agui_chat._exceptions import ApprovalStoreUnavailableError
from agui_chat.agui.server._signing import InterruptSigner
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from fake_clock import FakeClock, on_the_server

CONSUMED = (
    "was already used, and that run left no result to replay (its tool asked again, or the "
    "answer went to the model); nothing ran twice: ask the person again"
)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The clock interrupts are issued and resumes checked on (pass it to the store too)."""
    return on_the_server(monkeypatch)


class SlowStore(InMemoryApprovalStore):
    """A networked store as the server sees it: the claim of ``slow_key`` is on its way
    (not yet written) until the test lets it through with ``go``."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.slow_key: str | None = None
        self.reached = asyncio.Event()
        self.go = asyncio.Event()

    async def claim(self, key: str, *, expires_at: float | None, **lease: Any) -> bool:
        if key == self.slow_key:
            self.slow_key = None
            self.reached.set()
            await self.go.wait()
        return await super().claim(key, expires_at=expires_at, **lease)


class OutageStore(InMemoryApprovalStore):
    """A store that goes down right after the first claim of a resume succeeds."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.down = False

    async def claim(self, key: str, *, expires_at: float | None, **lease: Any) -> bool:
        if self.down:
            raise ApprovalStoreUnavailableError("store down")
        claimed = await super().claim(key, expires_at=expires_at, **lease)
        self.down = self.armed
        return claimed

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        if self.down:
            raise ApprovalStoreUnavailableError("store down")
        await super().release(key, owner=owner, started=started)


def two_deletes(fx: SideEffects, store: Any, *replies: Any) -> ServedAgent:
    """A server whose model asks to delete a.txt (c1) and b.txt (c2) in one turn."""
    model = scripted(
        [
            FunctionCallContent("c1", "delete_file", {"path": "a.txt"}),
            FunctionCallContent("c2", "delete_file", {"path": "b.txt"}),
        ],
        *replies,
    )
    return agui_server(model, tools=[fx.delete_file()], approval_store=store)


async def paused(
    agent: ServedAgent,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The history after the first run, its interrupts and their store keys."""
    first = await agent.post(run_input(user("go")))
    found = interrupts(first)
    keys = [InterruptSigner.fingerprint(i["id"]) for i in found]
    return [user("go"), *history_from(first)], found, keys


def both(one: dict[str, Any], two: dict[str, Any]) -> list[dict[str, Any]]:
    return [approve(one), approve(two)]


# -- an answer is used once ------------------------------------------------------------------


async def test_an_answer_to_a_question_of_the_model_is_taken_once() -> None:
    """No tool runs for such an answer, so no result is kept: its claim stays, and the same
    answer sent again is refused rather than handed to the model a second time."""
    seen: list[int] = []

    def reply(messages: list[Any], options: Any) -> str:
        seen.append(len(messages))
        return "Going on."

    model = scripted([InterruptRequestContent("q1", message="Continue?")], reply, reply)
    agent = agui_server(model)
    history, (question,), _ = await paused(agent)
    first = await agent.resume(history, answer(question, True))
    assert outcome(first) == {"type": "success"}
    again = await agent.resume(history, answer(question, True), run="r3")
    error = refused_before_the_run(again, "RESUME_ALREADY_CONSUMED")
    assert error["message"] == f"resume[0] {CONSUMED}"
    assert len(seen) == 1


async def test_a_kept_answer_and_a_fresh_one_replay_the_first_and_run_the_second() -> None:
    """An earlier resume ran c1 and kept its result, then stopped before c2 started: the
    next resume replays c1's result and runs c2, and the model is called."""
    fx = SideEffects()
    store = InMemoryApprovalStore()
    agent = two_deletes(fx, store, "Done.")
    history, (one, two), (k1, _) = await paused(agent)
    assert await store.claim(k1, expires_at=None, owner="earlier-run")
    await store.record_result(k1, "deleted a.txt")
    events = await agent.post(run_input(*history, run="r2", resume=both(one, two)))
    assert outcome(events) == {"type": "success"}
    results = [(e["toolCallId"], e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert results == [("c1", "deleted a.txt"), ("c2", "deleted b.txt")]
    assert fx.runs["delete_file"] == [{"path": "b.txt"}]
    assert "TEXT_MESSAGE_CONTENT" in types(events)


# -- a refused claim releases what it claimed, and only that ---------------------------------


async def test_a_resume_refused_at_its_second_claim_releases_its_first() -> None:
    """c2 is held by another resume (still running): the refusal names resume[1], and once
    that claim goes, the same answers run both tools once."""
    fx = SideEffects()
    store = InMemoryApprovalStore()
    agent = two_deletes(fx, store, "Done.")
    history, (one, two), (_, k2) = await paused(agent)
    assert await store.claim(k2, expires_at=None, owner="other-run", lease_until=None)
    refused = await agent.post(run_input(*history, run="r2", resume=both(one, two)))
    error = refused_before_the_run(refused, "RESUME_ALREADY_CONSUMED")
    assert error["message"] == f"resume[1] {CONSUMED}"
    await store.release(k2, owner="other-run")
    events = await agent.post(run_input(*history, run="r3", resume=both(one, two)))
    assert outcome(events) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}, {"path": "b.txt"}]


async def test_a_refused_resume_never_releases_a_claim_another_resume_took_over(
    clock: FakeClock,
) -> None:
    """While c2's claim is on its way, c1's lease runs out and another resume takes c1 over
    (and c2): the refused resume releases nothing of the other's."""
    fx = SideEffects()
    store = SlowStore(clock)
    agent = two_deletes(fx, store)
    history, (one, two), (k1, k2) = await paused(agent)
    store.slow_key = k2
    refused = asyncio.ensure_future(
        agent.post(run_input(*history, run="r2", resume=both(one, two)))
    )
    await asyncio.wait_for(store.reached.wait(), 10)
    clock.now += agent.app.claim_lease.total_seconds() + 1
    assert await store.claim(k1, expires_at=None, owner="other", lease_until=clock.now + 30)
    assert await store.claim(k2, expires_at=None, owner="other", lease_until=clock.now + 30)
    store.go.set()
    error = refused_before_the_run(await refused, "RESUME_CLAIM_HELD")
    assert error["message"].startswith("resume[1] is held by a claim whose tool has not started")
    assert error["retryAfter"] == 31  # the other's lease, as the fake clock reads it
    assert await store.mark_started(k1, owner="other")
    assert fx.count("delete_file") == 0


async def test_a_store_going_down_mid_claim_refuses_the_resume_as_unavailable() -> None:
    """The first claim is made, the second cannot be (nor can the first be released): the
    client is told to send the same answer again later; nothing ran."""
    fx = SideEffects()
    store = OutageStore()
    agent = two_deletes(fx, store)
    history, (one, two), _ = await paused(agent)
    store.armed = True
    events = await agent.post(run_input(*history, run="r2", resume=both(one, two)))
    error = refused_before_the_run(events, "APPROVAL_STORE_UNAVAILABLE")
    assert error["message"] == (
        "the approval store cannot be reached; nothing was run and the answer was not used: "
        "send the same answer again once the store is back"
    )
    assert fx.count("delete_file") == 0


# -- the client leaves while the claims are on their way -------------------------------------


async def leave_during_claim(agent: ServedAgent, body: dict[str, Any], store: SlowStore) -> Any:
    """POST ``body`` over ASGI; once the claim of ``store.slow_key`` is on its way, the
    caller's code runs (the returned coroutine's ``send``), then the client leaves and,
    after the server cancelled the run, the claim lands."""
    leave = asyncio.Event()
    task = asyncio.ensure_future(post_and_leave(agent.app, body, leave))
    await asyncio.wait_for(store.reached.wait(), 10)
    return task, leave


async def let_through(task: Any, leave: asyncio.Event, store: SlowStore) -> None:
    leave.set()
    for _ in range(50):  # the server sees the disconnect and cancels the run
        await asyncio.sleep(0)
    store.go.set()
    await asyncio.wait_for(task, 10)


async def test_a_client_leaving_mid_claim_releases_its_claims_but_not_one_taken_over(
    clock: FakeClock,
) -> None:
    fx = SideEffects()
    store = SlowStore(clock)
    agent = two_deletes(fx, store)
    history, (one, two), (k1, k2) = await paused(agent)
    store.slow_key = k2
    body = run_input(*history, run="r2", resume=both(one, two))
    task, leave = await leave_during_claim(agent, body, store)
    clock.now += agent.app.claim_lease.total_seconds() + 1
    assert await store.claim(k1, expires_at=None, owner="other", lease_until=clock.now + 30)
    await let_through(task, leave, store)
    assert await store.mark_started(k1, owner="other")  # the other's claim is intact
    assert await store.claim(k2, expires_at=None, owner="third")  # the left run's is gone
    assert fx.count("delete_file") == 0


async def test_a_client_leaving_while_its_claim_is_refused_is_a_quiet_cancellation(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The claim that lands after the client left is refused (another resume holds c2): no
    error is logged, and the claim made on c1 is released."""
    fx = SideEffects()
    store = SlowStore(clock)
    agent = two_deletes(fx, store)
    history, (one, two), (k1, k2) = await paused(agent)
    store.slow_key = k2
    body = run_input(*history, run="r2", resume=both(one, two))
    with caplog.at_level(logging.INFO):
        task, leave = await leave_during_claim(agent, body, store)
        assert await store.claim(k2, expires_at=None, owner="other", lease_until=None)
        await let_through(task, leave, store)
    assert "client left run r2; cancelling it" in [r.getMessage() for r in caplog.records]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert await store.claim(k1, expires_at=None, owner="third")
    assert fx.count("delete_file") == 0
