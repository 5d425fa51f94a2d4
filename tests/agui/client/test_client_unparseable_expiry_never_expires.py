"""agui-wire §5.4 obligation 5: the client judges expiry by parsing ``expiresAt`` as a date;
a value it cannot parse therefore never expires (the answer is sent as given), while a past
date with an offset or without a time is expired and can only be cancelled."""

from __future__ import annotations

from typing import Any

import pytest
from agui_client_support import Agent, run, text

from agui_chat import ChatMessage, ExpiredRequestError, InterruptRequestContent

USER = ChatMessage("user", "deploy", message_id="u1")


def asks(expires_at: str) -> Any:
    interrupt = {"id": "q-1", "reason": "input_required", "expiresAt": expires_at}
    return lambda b: run(b, outcome={"type": "interrupt", "interrupts": [interrupt]})


def done(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a2", "ok"))


async def answer(agent: Agent) -> None:
    async with agent.client() as client:
        paused = await client.get_response([USER])
        (request,) = paused.input_requests
        assert isinstance(request, InterruptRequestContent)
        reply = ChatMessage("user", [request.create_response("blue")])
        await client.get_response([USER, *paused.messages, reply])


@pytest.mark.parametrize("expires_at", ["soon", "", "tomorrow at noon"])
async def test_an_expiry_that_is_not_a_date_never_expires(expires_at: str) -> None:
    agent = Agent(asks(expires_at), done)

    await answer(agent)

    assert agent.last["resume"] == [{"interruptId": "q-1", "status": "resolved", "payload": "blue"}]


@pytest.mark.parametrize("expires_at", ["2001-01-01T00:00:00+02:00", "2001-01-01"])
async def test_a_past_date_in_any_iso_form_is_expired(expires_at: str) -> None:
    agent = Agent(asks(expires_at))

    with pytest.raises(ExpiredRequestError, match="q-1"):
        await answer(agent)

    assert len(agent.requests) == 1
