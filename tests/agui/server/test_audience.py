"""Every token names the server that issued it (its audience, mixed into the MAC as a
per-audience subkey): another agent sharing the signing key refuses it with
``APPROVAL_AUDIENCE_MISMATCH`` and runs nothing."""

from __future__ import annotations

from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
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
from agui_chat.agui.server._signing import InterruptSigner, TokenError, audience_id
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


def test_the_audience_is_in_the_mac_not_only_in_the_claims() -> None:
    a = InterruptSigner(SIGNING_KEY, audience="a")
    b = InterruptSigner(SIGNING_KEY, audience="b")
    from agui_chat.agui.server._signing import InterruptClaims

    token = a.sign(InterruptClaims("approval", "t1", "c1", "delete_file", {}))
    assert a.verify(token).audience == audience_id("a")
    with pytest.raises(TokenError) as caught:
        b.verify(token)
    assert caught.value.reason == "audience"
    # Renaming the audience in the claims breaks the MAC: the token is then forged.
    version, payload, mac = token.split(".")
    relabelled = f"{version}.{payload.replace(*_swap(payload, 'a', 'b'))}.{mac}"
    with pytest.raises(TokenError) as caught:
        b.verify(relabelled)
    assert caught.value.reason in ("forged", "unknown")


def _swap(payload: str, old: str, new: str) -> tuple[str, str]:
    import base64
    import json

    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["au"] = audience_id(new)
    from agui_chat.agui.server._signing import canonical_json

    encoded = base64.urlsafe_b64encode(canonical_json(claims).encode()).rstrip(b"=").decode()
    return payload, encoded
