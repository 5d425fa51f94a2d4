"""One way for the tests to make an ``AGUIServer`` and talk to it in process.

``agui_server(model, tools=[...], **options)`` builds the server with the test key and a fresh
``InMemoryApprovalStore`` (either can be overridden, ``clock=`` gives the fresh store a fake
clock) and returns a ``ServedAgent``: its ``app`` (to mount, serve with uvicorn or wrap), its
``model``, and ``run`` / ``pause`` / ``resume`` / ``post``, which POST a run input through
httpx's ``ASGITransport``, check the answer is a valid AG-UI stream and return its events.

A test of the constructor itself, or of a server in a child process, builds its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx

from agui_chat import AITool, ChatClient
from agui_chat.agui import AGUIServer
from agui_chat.stores import ApprovalStore, InMemoryApprovalStore
from agui_streams import assert_valid_agui, history_from, run_input, sse_events

SIGNING_KEY = "test-signing-key-0123456789abcdef"
BASE_URL = "http://localhost"

#: ``approval_store=`` left out: each server gets a new ``InMemoryApprovalStore``.
FRESH: Any = object()


def client_for(app: Any) -> httpx.AsyncClient:
    """An httpx client that sends its requests to ``app`` in process."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)


async def run_agui(app: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST one run through ASGITransport; check the response is a valid AG-UI stream and
    return its events."""
    async with client_for(app) as client:
        response = await client.post("/", json=body, headers={"accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.content)
    assert_valid_agui(events, resumed=bool(body.get("resume")))
    return events


class Paused(NamedTuple):
    """A run that ended in interrupts: its events, the history a client holds after it (the
    messages sent, then what the run added) and the interrupts of its ``RUN_FINISHED``."""

    events: list[dict[str, Any]]
    history: list[dict[str, Any]]
    interrupts: list[dict[str, Any]]


@dataclass
class ServedAgent:
    """An ``AGUIServer`` and the calls a test makes to it."""

    app: AGUIServer
    model: ChatClient

    def client(self) -> httpx.AsyncClient:
        """An httpx client that sends its requests to this server in process."""
        return client_for(self.app)

    async def post(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """POST ``body`` as it is (see ``run_agui``)."""
        return await run_agui(self.app, body)

    async def run(self, *messages: dict[str, Any], **body: Any) -> list[dict[str, Any]]:
        """One run of ``messages`` (``thread``, ``run`` and any other key of the run input
        as keywords); its events."""
        return await self.post(run_input(*messages, **body))

    async def pause(self, *messages: dict[str, Any], **body: Any) -> Paused:
        """A run that must end in interrupts (the test fails otherwise)."""
        events = await self.run(*messages, **body)
        finished = events[-1]
        assert finished["type"] == "RUN_FINISHED", finished
        assert finished["outcome"]["type"] == "interrupt", finished["outcome"]
        history = [*messages, *history_from(events)]
        return Paused(events, history, finished["outcome"]["interrupts"])

    async def resume(
        self,
        history: Sequence[dict[str, Any]],
        *entries: dict[str, Any],
        run: str = "r2",
        **body: Any,
    ) -> list[dict[str, Any]]:
        """A run that sends ``history`` again and answers interrupts with ``entries``."""
        return await self.run(*history, run=run, resume=list(entries), **body)


def agui_server(
    model: ChatClient,
    *,
    tools: Iterable[AITool] = (),
    signing_key: bytes | str | None = SIGNING_KEY,
    approval_store: ApprovalStore | str | None = FRESH,
    clock: Any = None,
    **options: Any,
) -> ServedAgent:
    """An ``AGUIServer`` for ``model`` and ``tools`` with the test key and a fresh in-memory
    store (``clock``: the fresh store's clock); any other ``AGUIServer`` option (``audience``,
    ``approval_ttl``, ``function_invocation``, ...) is passed on."""
    if approval_store is FRESH:
        approval_store = (
            InMemoryApprovalStore() if clock is None else InMemoryApprovalStore(clock=clock)
        )
    elif clock is not None:
        raise ValueError("clock= sets the clock of the fresh store; give your store its clock")
    app = AGUIServer(
        model, tools=tools, signing_key=signing_key, approval_store=approval_store, **options
    )
    return ServedAgent(app, model)
