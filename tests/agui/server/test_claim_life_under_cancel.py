"""A claim's whole life under a cancelled request: the client leaves while the store is in the
middle of one step (a store that blocks, as a slow disk would), and the step then completes.

Before the tool's first line (claiming, the started mark being written) the approval is not
used: the same answer sent again runs the tool exactly once. Once the tool started, it never
runs again: a result being kept when the client left is kept and replayed; a tool cut off
mid-run replays ``LOST_RESULT``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    post_and_leave,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent, ai_function, approval_required
from agui_chat.agui.server._claims import LOST_RESULT
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server


class SlowStore(InMemoryApprovalStore):
    """Blocks once, after the write of ``step`` is done and before it answers, until ``go``."""

    def __init__(self, step: str, nth: int = 1) -> None:
        super().__init__()
        self.step, self.nth = step, nth  # blocks on the nth call of the step
        self.reached = asyncio.Event()
        self.go = asyncio.Event()
        self.armed = False

    async def _slow(self, step: str) -> None:
        if self.armed and step == self.step:
            self.nth -= 1
            if self.nth:
                return
            self.armed = False
            self.reached.set()
            await self.go.wait()

    async def claim(self, key: str, **kwargs: Any) -> bool:
        claimed = await super().claim(key, **kwargs)
        await self._slow("claim")
        return claimed

    async def _mark_started(self, key: str, *kwargs: Any) -> bool:
        marked = await super()._mark_started(key, *kwargs)
        await self._slow("mark_started")
        return marked

    async def record_result(self, key: str, result: str, **kept: Any) -> None:
        await super().record_result(key, result, **kept)
        await self._slow("record_result")


class Tool:
    """A gated ``delete_file`` that counts its starts; ``hold`` keeps it running."""

    def __init__(self) -> None:
        self.starts = 0
        self.running = asyncio.Event()
        self.hold = False

        @approval_required
        @ai_function
        async def delete_file(path: str) -> str:
            """Delete a file."""
            self.starts += 1
            self.running.set()
            if self.hold and path == "a.txt":
                await asyncio.Event().wait()  # cut off by the cancel
            return f"deleted {path}"

        self.function = delete_file


def agent_for(store: SlowStore, tool: Tool) -> ServedAgent:
    model = scripted(
        [FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.", "Deleted."
    )
    return agui_server(model, tools=[tool.function], approval_store=store)


async def cancelled_resume(step: str, *, hold: bool = False) -> tuple[Any, ...]:
    """Pause, then send the approval and leave while ``step`` is under way; the step then
    completes. Returns the agent, the tool, the history and the interrupt."""
    store, tool = SlowStore(step), Tool()
    tool.hold = hold
    agent = agent_for(store, tool)
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    history = [user("delete a.txt"), *history_from(first)]
    body = run_input(*history, run="r2", resume=[approve(interrupt)])
    store.armed = not hold
    reached = tool.running if hold else store.reached
    leaving = asyncio.ensure_future(post_and_leave(agent.app, body, reached))
    await reached.wait()
    await asyncio.sleep(0.01)  # the disconnect is taken and the run cancelled
    store.go.set()  # the slow step completes after the client left
    await leaving
    return agent, tool, history, interrupt


@pytest.mark.parametrize("step", ["claim", "mark_started"])
async def test_a_cancel_before_the_tools_first_line_loses_no_approval(step: str) -> None:
    agent, tool, history, interrupt = await cancelled_resume(step)
    assert tool.starts == 0
    events = await agent.resume(history, approve(interrupt), run="again")
    assert outcome(events) == {"type": "success"}, events
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ["deleted a.txt"]
    assert tool.starts == 1
    replay = await agent.resume(history, approve(interrupt), run="third")
    assert [e["content"] for e in replay if e["type"] == "TOOL_CALL_RESULT"] == ["deleted a.txt"]
    assert tool.starts == 1
    # The audit trail shows the one run; a record the cancelled mark brought is withdrawn
    # (kept in the chain, which still verifies), never shown as a run that did not happen.
    store = agent.app.approval_store
    records = [r async for r in store.audit()]
    assert [(r.decision, r.outcome, r.run_id) for r in records] == [("approved", "ran", "again")]
    assert await store.verify_audit() == (2 if step == "mark_started" else 1)


async def test_a_cancel_while_the_result_is_kept_keeps_it_and_runs_nothing_again() -> None:
    agent, tool, history, interrupt = await cancelled_resume("record_result")
    assert tool.starts == 1
    events = await agent.resume(history, approve(interrupt), run="again")
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["deleted a.txt"]
    assert tool.starts == 1


async def test_a_cancel_while_the_tool_runs_never_runs_it_again() -> None:
    agent, tool, history, interrupt = await cancelled_resume("tool", hold=True)
    assert tool.starts == 1
    tool.hold = False
    events = await agent.resume(history, approve(interrupt), run="again")
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == [LOST_RESULT]
    assert tool.starts == 1


def two_calls_agent(store: SlowStore, tool: Tool) -> ServedAgent:
    model = scripted(
        [
            FunctionCallContent("c1", "delete_file", {"path": "a.txt"}),
            FunctionCallContent("c2", "delete_file", {"path": "b.txt"}),
        ],
        "Deleted.",
    )
    return agui_server(model, tools=[tool.function], approval_store=store)


async def leave_a_pause_of_two(
    store: SlowStore, tool: Tool, reached: asyncio.Event
) -> tuple[ServedAgent, list[dict[str, Any]], list[dict[str, Any]]]:
    """Pause on two calls, send both approvals and leave once ``reached``; the store's slow
    step then completes. Returns the agent, the history and the two interrupts."""
    agent = two_calls_agent(store, tool)
    first = await agent.post(run_input(user("delete both")))
    pending = interrupts(first)
    history = [user("delete both"), *history_from(first)]
    body = run_input(*history, run="r2", resume=[approve(i) for i in pending])
    store.armed = reached is store.reached  # else the tool itself holds the run
    leaving = asyncio.ensure_future(post_and_leave(agent.app, body, reached))
    await reached.wait()
    await asyncio.sleep(0.01)
    store.go.set()
    await leaving
    return agent, history, pending


@pytest.mark.parametrize(
    ("case", "nth", "hold", "replayed"),
    [
        ("the first call's mark in flight", 1, False, []),
        # a batch's results are kept as they are streamed, after the batch: the first call's
        # result was not out yet, so it replays as lost (it never runs again)
        ("the first call ran, the second's mark in flight", 2, False, [LOST_RESULT]),
        ("the first call cut off mid-run", 1, True, [LOST_RESULT]),
    ],
)
async def test_a_cancel_settles_every_claim_of_the_pause(
    case: str, nth: int, hold: bool, replayed: list[str]
) -> None:
    """Two calls paused together, the client gone at one step of the first or the second:
    each call that began is never run again, each that did not runs once when sent again."""
    store, tool = SlowStore("mark_started", nth), Tool()
    tool.hold = hold
    reached = tool.running if hold else store.reached
    agent, history, pending = await leave_a_pause_of_two(store, tool, reached)
    started = tool.starts
    events = await agent.resume(history, *(approve(i) for i in pending), run="again")
    assert outcome(events) == {"type": "success"}, events
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert results[: len(replayed)] == replayed
    assert "deleted b.txt" in results
    assert tool.starts == started + (2 - len(replayed))
