"""Nothing refused consumes an approval (DESIGN §4). Every check that can refuse a resume runs
before the claim, and a claim whose tool never started (a later refusal, the client gone, a
process that died) is released or lapses. Each case: the refused resume runs nothing, and
the honest resume sent afterwards runs the tool exactly once."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from server_support import (
    answer,
    approve,
    assistant_calls,
    history_from,
    interrupts,
    outcome,
    post_and_leave,
    refused_before_the_run,
    run_input,
    scripted,
    user,
)

from agui_chat import (
    ChatClient,
    ChatOptions,
    ChatResponseUpdate,
    DelegatingChatClient,
    FunctionCallContent,
    FunctionInvokingChatClient,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.agui import AGUIServer, current_run
from agui_chat.consent import _rules
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from agui_streams import SideEffects


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def delete_app(effects: SideEffects, store: Any = None, **settings: Any) -> ServedAgent:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    return agui_server(
        model,
        tools=[effects.delete_file()],
        approval_store=store if store is not None else InMemoryApprovalStore(),
        **settings,
    )


async def paused(agent: ServedAgent) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    return [user("delete a.txt"), *history_from(first)], interrupt


async def honest_resume_runs_once(
    agent: ServedAgent,
    history: list[dict[str, Any]],
    interrupt: dict[str, Any],
    effects: SideEffects,
) -> None:
    events = await agent.resume(history, approve(interrupt), run="honest")
    assert outcome(events) == {"type": "success"}, events
    assert effects.runs["delete_file"] == [{"path": "a.txt"}]


def with_other_c1(history: list[dict[str, Any]], *, same_message: bool) -> list[dict[str, Any]]:
    """The history with a second, different call that reuses id ``c1``."""
    out = copy.deepcopy(history)
    other = {
        "id": "c1",
        "type": "function",
        "function": {"name": "delete_file", "arguments": json.dumps({"path": "/etc"})},
    }
    if same_message:
        holder = next(m for m in out if m.get("toolCalls"))
        holder["toolCalls"].append(other)
    else:
        out.append(assistant_calls(("c1", "delete_file", {"path": "/etc"}), message_id="a9"))
    return out


@pytest.mark.parametrize("same_message", [True, False], ids=["same message", "later message"])
async def test_a_call_id_reused_by_another_call_is_refused_before_the_claim(
    same_message: bool,
) -> None:
    effects = SideEffects()
    agent = delete_app(effects)
    history, interrupt = await paused(agent)
    ambiguous = with_other_c1(history, same_message=same_message)
    events = await agent.resume(ambiguous, approve(interrupt))
    refused_before_the_run(events, "RESUME_INVALID_PAYLOAD")
    assert effects.count("delete_file") == 0
    await honest_resume_runs_once(agent, history, interrupt, effects)


async def test_an_approval_and_a_question_sharing_a_call_id_are_refused_before_the_claim() -> None:
    ran: list[str] = []

    @approval_required
    @ai_function
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        sure = request_input(f"Really wipe {disk}?", key="sure")
        ran.append(sure.status)
        return "wiped"

    model = scripted([FunctionCallContent("c1", "wipe", {"disk": "sda"})], "Done.")
    agent = agui_server(model, tools=[wipe])
    first = await agent.post(run_input(user("wipe")))
    (approval,) = interrupts(first)
    history = [user("wipe"), *history_from(first)]
    asked = await agent.resume(history, approve(approval))
    (question,) = interrupts(asked)
    mixed = [approve(approval), answer(question, True)]
    events = await agent.resume(history, *mixed, run="r3")
    refused_before_the_run(events, "RESUME_INVALID_PAYLOAD")
    assert ran == []
    honest = await agent.resume(history, answer(question, True), run="r4")
    assert outcome(honest) == {"type": "success"}
    assert ran == ["resolved"]


async def test_a_payload_that_fails_its_schema_consumes_nothing() -> None:
    effects = SideEffects()
    agent = delete_app(effects)
    history, interrupt = await paused(agent)
    bad = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": "yes"}}
    events = await agent.resume(history, bad)
    refused_before_the_run(events, "RESUME_INVALID_PAYLOAD")
    await honest_resume_runs_once(agent, history, interrupt, effects)


class FailsOnce(DelegatingChatClient):
    """In front of the tool loop: the first resumed request fails before the loop sees it
    (a refusal or a failure after the claim, before any tool started)."""

    def __init__(self, inner: ChatClient, *, block: asyncio.Event | None = None) -> None:
        super().__init__(inner)
        self.failed = False
        self.block = block
        self.reached = asyncio.Event()

    def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        resumed = bool(current_run().input.resume)
        if resumed and not self.failed:
            self.failed = True
            return self._fail()
        return self.inner_client.get_streaming_response(messages, options)

    async def _fail(self) -> AsyncIterator[ChatResponseUpdate]:
        self.reached.set()
        if self.block is not None:
            await self.block.wait()
        raise RuntimeError("failed before the tool loop")
        yield  # pragma: no cover


def failing_app(effects: SideEffects, store: Any, **settings: Any) -> tuple[AGUIServer, FailsOnce]:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    front = FailsOnce(FunctionInvokingChatClient(model), **settings)
    agent = agui_server(front, tools=[effects.delete_file()], approval_store=store)
    return agent, front


async def test_a_claim_whose_run_failed_before_the_tool_started_is_released() -> None:
    effects = SideEffects()
    agent, _ = failing_app(effects, InMemoryApprovalStore())
    history, interrupt = await paused(agent)
    events = await agent.resume(history, approve(interrupt))
    assert events[-1]["type"] == "RUN_ERROR"
    assert effects.count("delete_file") == 0
    await honest_resume_runs_once(agent, history, interrupt, effects)


async def test_a_claim_whose_client_left_before_the_tool_started_is_released() -> None:
    effects = SideEffects()
    block = asyncio.Event()
    agent, front = failing_app(effects, InMemoryApprovalStore(), block=block)
    history, interrupt = await paused(agent)
    body = run_input(*history, run="r2", resume=[approve(interrupt)])
    await post_and_leave(agent.app, body, front.reached)  # the claim is made, the run under way
    assert effects.count("delete_file") == 0
    await honest_resume_runs_once(agent, history, interrupt, effects)


async def test_a_claim_left_by_a_process_that_died_before_the_tool_started_lapses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(_rules, "clock", clock)
    store = InMemoryApprovalStore(clock=clock)
    effects = SideEffects()
    agent, _ = failing_app(effects, store)
    agent.app.claim_lease = timedelta(seconds=30)
    history, interrupt = await paused(agent)

    async def died(key: str, *, owner: str = "", started: bool = False) -> None:
        return None  # the process died: nothing released its claim

    monkeypatch.setattr(store, "release", died)
    events = await agent.resume(history, approve(interrupt))
    assert events[-1]["type"] == "RUN_ERROR"
    assert effects.count("delete_file") == 0
    # Within the lease the answer is still held by the dead claim...
    held = await agent.resume(history, approve(interrupt), run="r3")
    refusal = refused_before_the_run(held, "RESUME_CLAIM_HELD")
    assert refusal["retryAfter"] == 31  # retryable, after the dead claim's lease
    assert effects.count("delete_file") == 0
    # ...and once the lease ran out, the honest resume runs the tool once.
    clock.now += 31
    await honest_resume_runs_once(agent, history, interrupt, effects)
