"""Every token names the server that issued it (its audience, mixed into the MAC as a
per-audience subkey): another agent sharing the signing key refuses it with
``APPROVAL_AUDIENCE_MISMATCH`` and runs nothing."""

from __future__ import annotations

import base64
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
from agui_chat.agui import AUDIENCE_ENV, default_audience
from agui_server import ServedAgent, agui_server
from agui_streams import SideEffects


def agent(effects: SideEffects, *extra_tools: Any, **settings: Any) -> ServedAgent:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    return agui_server(model, tools=[effects.delete_file(), *extra_tools], **settings)


async def test_agent_a_token_at_agent_b_with_only_a_user_message_runs_nothing() -> None:
    a_effects, b_effects = SideEffects(), SideEffects()
    agent_a = agent(a_effects, a_effects.lookup())
    agent_b = agui_server(scripted("Deleted."), tools=[b_effects.delete_file()])
    assert agent_a.app.audience != agent_b.app.audience
    (interrupt,) = interrupts(await agent_a.post(run_input(user("delete a.txt"))))
    events = await agent_b.post(run_input(user("hi"), run="r2", resume=[approve(interrupt)]))
    refused = refused_before_the_run(events, "APPROVAL_AUDIENCE_MISMATCH")
    assert "another server" in refused["message"]
    assert a_effects.count("delete_file") == b_effects.count("delete_file") == 0


async def test_agents_with_the_same_tools_are_told_apart_by_their_audience() -> None:
    a_effects, b_effects = SideEffects(), SideEffects()
    agent_a = agent(a_effects, audience="billing")
    agent_b = agent(b_effects, audience="files")
    first = await agent_a.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    history = [user("delete a.txt"), *history_from(first)]
    events = await agent_b.resume(history, approve(interrupt))
    refused_before_the_run(events, "APPROVAL_AUDIENCE_MISMATCH")
    assert b_effects.count("delete_file") == 0
    # The issuing agent still takes its own answer.
    own = await agent_a.resume(history, approve(interrupt), run="r3")
    assert outcome(own) == {"type": "success"}
    assert a_effects.count("delete_file") == 1


async def test_the_default_audience_is_stable_per_deployment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    effects = SideEffects()
    one, two = agent(effects, effects.lookup()), agent(SideEffects(), SideEffects().lookup())
    assert one.app.audience == two.app.audience == default_audience(["lookup", "delete_file"])
    assert one.app.audience == "tools:delete_file,lookup"
    monkeypatch.setenv(AUDIENCE_ENV, "orders-agent")
    assert agent(effects).app.audience == "orders-agent"
    assert agent(effects, audience="explicit").app.audience == "explicit"


async def test_the_audience_is_in_the_mac_not_only_in_the_claims() -> None:
    """A token of agent A relabelled with agent B's audience id no longer matches its MAC:
    agent B refuses it as forged and runs nothing."""
    a_effects, b_effects = SideEffects(), SideEffects()
    agent_a, agent_b = agent(a_effects, audience="a"), agent(b_effects, audience="b")
    first = await agent_a.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    (b_interrupt,) = interrupts(await agent_b.post(run_input(user("delete a.txt"), run="rb")))
    relabelled = _with_claim(interrupt["id"], "au", _claims(b_interrupt["id"])["au"])
    history = [user("delete a.txt"), *history_from(first)]
    events = await agent_b.resume(history, approve({**interrupt, "id": relabelled}))
    refused_before_the_run(events, "APPROVAL_FORGED")
    assert a_effects.count("delete_file") == b_effects.count("delete_file") == 0


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    claims: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return claims


def _with_claim(token: str, name: str, value: Any) -> str:
    """``token`` with one claim changed and its MAC kept."""
    version, _, mac = token.split(".")
    text = json.dumps({**_claims(token), name: value}, sort_keys=True, separators=(",", ":"))
    return f"{version}.{base64.urlsafe_b64encode(text.encode()).rstrip(b'=').decode()}.{mac}"
