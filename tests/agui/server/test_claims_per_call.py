"""Issue 26 item 1: claims are per call. One call of a pause whose tool started and was
lost (its worker killed, its store down) never strands the other calls of that pause: they
stay runnable, once each; a re-sent answer runs exactly those and replays the kept results
(the lost call's as ``LOST_RESULT``: never run again). While a run lasts its leases are
renewed, so a long tool is "in progress", never taken for lost."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from server_support import (
    SideEffects,
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent, ai_function, approval_required
from agui_chat._exceptions import ApprovalStoreUnavailableError
from agui_chat.agui.server._claims import LOST_RESULT
from agui_chat.agui.server._signing import InterruptSigner
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from fake_clock import FakeClock, on_the_server

PATHS = ("a.txt", "b.txt", "c.txt")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    return on_the_server(monkeypatch)


def three_deletes(fx: SideEffects, store: Any, **options: Any) -> ServedAgent:
    calls = [FunctionCallContent(f"c{i}", "delete_file", {"path": p}) for i, p in enumerate(PATHS)]
    model = scripted(calls, "Done.", "Done again.")
    return agui_server(model, tools=[fx.delete_file()], approval_store=store, **options)


async def paused(agent: ServedAgent) -> tuple[dict[str, Any], list[str]]:
    """The resume body approving every call of the pause, and the calls' store keys."""
    first = await agent.post(run_input(user("go")))
    found = interrupts(first)
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(i) for i in found])
    return body, [InterruptSigner.fingerprint(i["id"]) for i in found]


def results(events: list[dict[str, Any]]) -> dict[str, str]:
    return {e["toolCallId"]: e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"}


async def a_worker_died(
    store: InMemoryApprovalStore, keys: list[str], clock: FakeClock, started: int
) -> None:
    """What a worker killed with ``kill -9`` leaves: its claims on every call of the pause,
    the first ``started`` of them started, none with a result."""
    epoch = await store.epoch()
    for key in keys:
        claimed = await store.claim(
            key, expires_at=None, owner="dead", lease_until=clock.now + 15, epoch=epoch
        )
        assert claimed
    for key in keys[:started]:
        assert await store.mark_started(key, owner="dead")


async def test_a_call_lost_mid_tool_never_strands_its_siblings(clock: FakeClock) -> None:
    fx = SideEffects()
    store = InMemoryApprovalStore(clock=clock)
    agent = three_deletes(fx, store)
    body, keys = await paused(agent)
    await a_worker_died(store, keys, clock, started=1)

    # Within the dead worker's lease: the tool might still be running; retry after the wait.
    early = refused_before_the_run(await agent.post(body), "RESUME_IN_PROGRESS")
    assert early["retryAfter"] == 16
    assert fx.count("delete_file") == 0

    clock.advance(16)  # the lease ran out: c0 is lost, c1 and c2 never started
    resumed = await agent.post({**body, "runId": "r3"})
    assert outcome(resumed) == {"type": "success"}
    assert results(resumed) == {"c0": LOST_RESULT, "c1": "deleted b.txt", "c2": "deleted c.txt"}
    assert fx.runs["delete_file"] == [{"path": "b.txt"}, {"path": "c.txt"}]  # never a.txt

    again = await agent.post({**body, "runId": "r4"})
    assert results(again) == results(resumed)  # every result replayed, nothing run
    assert fx.count("delete_file") == 2


async def test_claims_of_a_worker_that_died_before_any_tool_lapse_and_all_run_once(
    clock: FakeClock,
) -> None:
    fx = SideEffects()
    store = InMemoryApprovalStore(clock=clock)
    agent = three_deletes(fx, store)
    body, keys = await paused(agent)
    await a_worker_died(store, keys, clock, started=0)
    clock.advance(5)
    held = refused_before_the_run(await agent.post(body), "RESUME_CLAIM_HELD")
    assert held["retryAfter"] == 11  # the first second past what is left of the dead claim's lease
    assert "nothing was used" in held["message"]
    clock.advance(11)
    assert outcome(await agent.post({**body, "runId": "r3"})) == {"type": "success"}
    assert [r["path"] for r in fx.runs["delete_file"]] == list(PATHS)


class GoesDownAfterTheFirstStart(InMemoryApprovalStore):
    """A store that goes down once the first tool is marked started, until ``down`` is
    cleared."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.down = False
        self.starts = 0

    def _check(self) -> None:
        if self.down:
            raise ApprovalStoreUnavailableError("store down")

    async def _mark_started(self, key: str, *lease: Any) -> bool:
        self._check()
        self.starts += 1
        self.down = self.starts == 1
        return await super()._mark_started(key, *lease)

    async def record_result(self, key: str, result: str, **kept: Any) -> None:
        self._check()
        await super().record_result(key, result, **kept)

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        self._check()
        await super().release(key, owner=owner, started=started)


async def test_a_store_down_mid_pause_loses_no_approval_once_it_is_back(
    clock: FakeClock,
) -> None:
    """The chaos run's case: the store goes down once the first call's tool started; the
    run stops before the second starts, and can neither keep the first result nor release
    the other claims. Once the store is back the same answer is not "already consumed": it
    is held (retry after the lease); then the first call, whose result was lost, is
    replayed as lost and the other two run, once each."""
    fx = SideEffects()
    store = GoesDownAfterTheFirstStart(clock)
    agent = three_deletes(fx, store)
    body, _ = await paused(agent)
    broken = await agent.post(body)
    assert broken[-1]["code"] == "APPROVAL_STORE_UNAVAILABLE"
    assert broken[-1]["retryAfter"] == 2
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]
    store.down = False  # the store is back

    again = await agent.post({**body, "runId": "r3"})
    held = refused_before_the_run(again, "RESUME_IN_PROGRESS")  # c0's lease still runs
    assert 1 <= held["retryAfter"] <= 16
    clock.advance(16)
    resumed = await agent.post({**body, "runId": "r4"})
    assert outcome(resumed) == {"type": "success"}
    assert results(resumed) == {"c0": LOST_RESULT, "c1": "deleted b.txt", "c2": "deleted c.txt"}
    assert [r["path"] for r in fx.runs["delete_file"]] == list(PATHS)  # a.txt once


def slow_delete(fx: SideEffects, started: asyncio.Event, go: asyncio.Event) -> Any:
    @approval_required
    @ai_function
    async def delete_file(path: str) -> str:
        """Delete a file (slowly)."""
        fx.record("delete_file", path=path)
        started.set()
        await asyncio.wait_for(go.wait(), 20)
        return f"deleted {path}"

    return delete_file


async def test_a_copy_sent_while_the_tool_runs_is_in_progress_then_replays(
    clock: FakeClock,
) -> None:
    """The same answer sent twice at once (a client retry, a second tab): the copy is told
    the answer is being run, with a wait; sent again after, it gets the result."""
    fx, started, go = SideEffects(), asyncio.Event(), asyncio.Event()
    store = InMemoryApprovalStore(clock=clock)
    model = scripted([FunctionCallContent("c0", "delete_file", {"path": "a.txt"})], "Done.")
    agent = agui_server(model, tools=[slow_delete(fx, started, go)], approval_store=store)
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    running = asyncio.ensure_future(agent.post(body))
    await asyncio.wait_for(started.wait(), 20)
    copy = refused_before_the_run(await agent.post({**body, "runId": "r3"}), "RESUME_IN_PROGRESS")
    assert copy["retryAfter"] == 16
    go.set()
    assert outcome(await running) == {"type": "success"}
    replay = await agent.post({**body, "runId": "r4"})
    assert results(replay) == {"c0": "deleted a.txt"}
    assert fx.count("delete_file") == 1


async def test_a_tool_running_longer_than_the_lease_is_renewed_never_taken_for_lost(
    clock: FakeClock,
) -> None:
    """The run renews its leases (every third of the lease): a copy sent long past the
    first lease finds the call in progress, not lost, and never replays it as lost."""
    fx, started, go = SideEffects(), asyncio.Event(), asyncio.Event()
    store = InMemoryApprovalStore(clock=clock)
    model = scripted([FunctionCallContent("c0", "delete_file", {"path": "a.txt"})], "Done.")
    agent = agui_server(
        model,
        tools=[slow_delete(fx, started, go)],
        approval_store=store,
        claim_lease=timedelta(seconds=0.3),
    )
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    key = InterruptSigner.fingerprint(interrupt["id"])
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    running = asyncio.ensure_future(agent.post(body))
    await asyncio.wait_for(started.wait(), 20)
    clock.advance(60)  # far past the lease the claim was made with
    for _ in range(2000):  # until the run's next renewal
        held = await store.record(key)
        if held is not None and held.lease_until is not None and held.lease_until > clock.now:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the running call's lease was never renewed")
    refused_before_the_run(await agent.post({**body, "runId": "r3"}), "RESUME_IN_PROGRESS")
    go.set()
    assert outcome(await running) == {"type": "success"}
    assert fx.count("delete_file") == 1


class TakenBeforeTheStart(InMemoryApprovalStore):
    """A store in which another resume took every claim just before its tool started (the
    claim lapsed meanwhile): ``mark_started`` says no."""

    async def _mark_started(self, key: str, *lease: Any) -> bool:
        return False


async def test_a_claim_taken_over_before_its_tool_started_runs_nothing_and_says_retry() -> None:
    """The resume's claim on c0 lapsed and another resume took it before the tool started:
    the tool does not start here, and the client is told the answer is in progress, which
    call, and to retry after the lease."""
    fx = SideEffects()
    model = scripted([FunctionCallContent("c0", "delete_file", {"path": "a.txt"})], "Done.")
    agent = agui_server(model, tools=[fx.delete_file()], approval_store=TakenBeforeTheStart())
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    events = await agent.post(
        run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    )
    error = events[-1]
    assert error["type"] == "RUN_ERROR", error
    assert error["code"] == "RESUME_IN_PROGRESS"
    assert error["retryAfter"] == 15  # the claim lease
    assert "'c0'" in error["message"]
    assert fx.count("delete_file") == 0


async def test_tools_the_model_calls_after_the_approved_one_run_without_a_claim() -> None:
    """After the approved call ran, the model calls a tool that needs no approval, then
    reuses the approved call's id for it: both run (they hold no claim), the approved
    tool once."""
    fx = SideEffects()
    model = scripted(
        [FunctionCallContent("c0", "delete_file", {"path": "a.txt"})],
        [FunctionCallContent("c1", "lookup", {"city": "Oslo"})],
        [FunctionCallContent("c0", "lookup", {"city": "Bergen"})],
        "Done.",
    )
    agent = agui_server(model, tools=[fx.delete_file(), fx.lookup()])
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    events = await agent.post(
        run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    )
    assert outcome(events) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]
    assert fx.runs["lookup"] == [{"city": "Oslo"}, {"city": "Bergen"}]


async def test_a_call_started_late_in_its_run_is_in_progress_for_a_copy_not_lost(
    clock: FakeClock,
) -> None:
    """c0 took 10 s, then c1 started: c1's claim is renewed as it starts, so a copy of the
    answer sent 10 s later (past the lease the claims were made with) finds c1 in progress,
    never replays it as lost."""
    fx, started, go = SideEffects(), asyncio.Event(), asyncio.Event()

    @approval_required
    @ai_function
    def slow_first(path: str) -> str:
        """Delete a file (takes 10 s)."""
        fx.record("slow_first", path=path)
        clock.advance(10)
        return f"deleted {path}"

    store = InMemoryApprovalStore(clock=clock)
    model = scripted(
        [
            FunctionCallContent("c0", "slow_first", {"path": "a.txt"}),
            FunctionCallContent("c1", "delete_file", {"path": "b.txt"}),
        ],
        "Done.",
    )
    agent = agui_server(
        model, tools=[slow_first, slow_delete(fx, started, go)], approval_store=store
    )
    first = await agent.post(run_input(user("go")))
    found = interrupts(first)
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(i) for i in found])
    running = asyncio.ensure_future(agent.post(body))
    await asyncio.wait_for(started.wait(), 20)
    clock.advance(10)  # 20 s after the claims: past their first lease, within c1's
    copy = await agent.post({**body, "runId": "r3"})
    refused_before_the_run(copy, "RESUME_IN_PROGRESS")
    go.set()
    assert outcome(await running) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "b.txt"}]


class CountsRenewals(InMemoryApprovalStore):
    """An in-memory store that counts the renewals it is asked for."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.renewals = 0

    async def renew(self, keys: Any, *, owner: str, lease_until: float | None) -> None:
        if lease_until is not None:  # (None: a used answer held for good, at the run's end)
            self.renewals += 1
        await super().renew(keys, owner=owner, lease_until=lease_until)


async def test_a_run_that_ended_renews_nothing_any_more() -> None:
    """The renewals are the run's: once it has settled, no timer or renewal in flight keeps
    renewing its claims (nor keeps working in the process)."""
    fx, started, go = SideEffects(), asyncio.Event(), asyncio.Event()
    store = CountsRenewals()
    model = scripted([FunctionCallContent("c0", "delete_file", {"path": "a.txt"})], "Done.")
    agent = agui_server(
        model,
        tools=[slow_delete(fx, started, go)],
        approval_store=store,
        claim_lease=timedelta(seconds=0.06),  # a renewal every 20 ms while the run lasts
    )
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    running = asyncio.ensure_future(agent.post(body))
    await asyncio.wait_for(started.wait(), 20)
    for _ in range(2000):  # until the run has renewed twice (each renewal sets up the next)
        if store.renewals >= 2:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError(f"the run renewed {store.renewals} time(s), not again and again")
    go.set()
    assert outcome(await running) == {"type": "success"}
    after_the_run = store.renewals
    await asyncio.sleep(0.2)  # ten renewal periods
    assert store.renewals == after_the_run
    assert fx.count("delete_file") == 1


class TakenOverByAnother(InMemoryApprovalStore):
    """A store in which another resume really took the claim over just before this run's
    tool was to start (this run's claim had lapsed): the other resume holds it now."""

    async def _mark_started(self, key: str, *lease: Any) -> bool:
        held = await self.record(key)
        assert held is not None
        await self.release(key, owner=held.owner)
        assert await self.claim(key, expires_at=None, owner="the-other-resume", lease_until=None)
        return await super()._mark_started(key, *lease)


async def test_a_run_that_lost_its_claim_leaves_the_other_resumes_claim_alone() -> None:
    """The run's claim was taken over: at its end it releases only its own claims, so the
    other resume's claim stands and a third copy of the answer cannot run the tool."""
    fx = SideEffects()
    store = TakenOverByAnother()
    model = scripted([FunctionCallContent("c0", "delete_file", {"path": "a.txt"})], "Done.")
    agent = agui_server(model, tools=[fx.delete_file()], approval_store=store)
    first = await agent.post(run_input(user("go")))
    (interrupt,) = interrupts(first)
    body = run_input(user("go"), *history_from(first), run="r2", resume=[approve(interrupt)])
    events = await agent.post(body)
    assert events[-1]["code"] == "RESUME_IN_PROGRESS"
    held = await store.record(InterruptSigner.fingerprint(interrupt["id"]))
    assert held is not None and held.owner == "the-other-resume"
    assert fx.count("delete_file") == 0
