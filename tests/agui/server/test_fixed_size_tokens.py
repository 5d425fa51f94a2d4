"""A token's size does not depend on how many interrupts share its pause (it carries a digest
of the pause, not a list of its siblings), so a pause of 250 gated calls is answerable in one
body within the default limit, and runs each call once. A resume leaving any one of them out
is still refused, whichever it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent
from agui_chat.agui import AGUIServer
from agui_server import ServedAgent, agui_server
from agui_streams import SideEffects


def gated_batch(effects: SideEffects, count: int) -> ServedAgent:
    calls = [
        FunctionCallContent(f"c{i:03d}", "delete_file", {"path": f"f{i:03d}.txt"})
        for i in range(count)
    ]
    return agui_server(scripted(calls, "Deleted them."), tools=[effects.delete_file()])


async def pause_of(count: int) -> tuple[AGUIServer, SideEffects, list[dict[str, Any]]]:
    effects = SideEffects()
    agent = gated_batch(effects, count)
    events = await agent.post(run_input(user("delete them all")))
    return agent, effects, events


async def test_token_size_does_not_grow_with_the_pause() -> None:
    _, _, two = await pause_of(2)
    _, _, many = await pause_of(250)
    sizes_two = {len(i["id"]) for i in interrupts(two)}
    sizes_many = {len(i["id"]) for i in interrupts(many)}
    assert len(interrupts(many)) == 250
    # only the count's digits, "2" vs "250": 2 bytes of JSON, at most 3 characters of base64
    assert max(sizes_many) - max(sizes_two) <= 3
    assert max(sizes_many) <= 400  # the bound docs/reliability.md states for such a call


async def test_a_pause_of_250_gated_calls_is_answered_in_one_body_and_runs_each_once() -> None:
    agent, effects, events = await pause_of(250)
    paused = interrupts(events)
    body = run_input(
        user("delete them all"),
        *history_from(events),
        run="r2",
        resume=[approve(i) for i in paused],
    )
    assert len(json.dumps(body)) < agent.app.max_body_bytes
    resumed = await agent.post(body)
    assert outcome(resumed) == {"type": "success"}
    assert sorted(r["path"] for r in effects.runs["delete_file"]) == [
        f"f{i:03d}.txt" for i in range(250)
    ]


@pytest.mark.parametrize("left_out", [0, 137, 249])
async def test_leaving_any_one_interrupt_of_a_large_pause_out_runs_nothing(left_out: int) -> None:
    agent, effects, events = await pause_of(250)
    paused = interrupts(events)
    history = [user("delete them all"), *history_from(events)]
    partial = [approve(i) for n, i in enumerate(paused) if n != left_out]
    refused = await agent.resume(history, *partial)
    refused_before_the_run(refused, "RESUME_INCOMPLETE")
    assert effects.count("delete_file") == 0
