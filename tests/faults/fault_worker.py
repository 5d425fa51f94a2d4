"""One worker of the fault lane's deployments: ``uvicorn fault_worker:app`` in a child process,
configured by its environment (every worker of a deployment has the same key and store).

- ``AGUI_CHAT_SIGNING_KEY``, ``STORE_URL`` (``sqlite:///...``, ``redis://...`` or
  ``postgresql://...``), ``LEASE_SECONDS`` (the claim lease);
- ``EFFECTS_DIR``: the one side effect, a paid invoice, is a line ``paid <n> pid=<pid>``
  appended (and fsynced) to ``<thread id>.effects`` there by whichever worker ran it, so the
  tests count runs exactly, across processes, kills and restarts;
- ``CLAIM_PAUSE``: seconds a resumed run waits after its claims are made, before the tool
  loop (a line ``claimed pid=<pid>`` in ``<thread id>.marks`` says it is there): the window
  in which a test kills the worker, or the store, "mid-claim";
- ``TOOL_PAUSE``: seconds the tool waits after its side effect, before it returns (and the
  server keeps its result): the window for "mid-tool";
- holds: while a file ``<thread id>.hold-claim`` (``.hold-tool``) exists in ``EFFECTS_DIR``,
  a resumed run of that thread waits at the end of its claim pause (its tool, at the end of
  its tool pause), up to ``HOLD_BOUND`` seconds: a test holds a worker exactly there to kill
  it (``Deployment.holding``). Without the file, nothing waits.

The model is stateless (any worker, any restart, answers alike): asked "pay invoice <n>" it
calls ``pay(invoice=n)``, which needs the person's approval; with the call's result in the
history it says "Paid."."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from agui_chat import (
    ChatMessage,
    ChatOptions,
    ChatResponseUpdate,
    DelegatingChatClient,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIServer, current_run
from agui_chat.testing import ScriptedChatClient

EFFECTS = Path(os.environ["EFFECTS_DIR"])
CLAIM_PAUSE = float(os.environ.get("CLAIM_PAUSE", "0"))
TOOL_PAUSE = float(os.environ.get("TOOL_PAUSE", "0"))
HOLD_BOUND = 60.0  # seconds a hold lasts at most, whatever a test left behind


def _append(name: str, line: str) -> None:
    """One line, written and on disk before this returns (a ``kill -9`` right after keeps it)."""
    fd = os.open(EFFECTS / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{line} pid={os.getpid()}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _thread() -> str:
    run = current_run()
    return run.thread_id if run is not None else "unknown"


async def _held(where: str) -> None:
    """Wait (bounded) while the test holds this thread's run at ``where`` (a file
    ``<thread id>.hold-<where>`` in the effects folder)."""
    hold = EFFECTS / f"{_thread()}.hold-{where}"
    deadline = time.monotonic() + HOLD_BOUND
    while hold.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


@approval_required
@ai_function
async def pay(invoice: int) -> str:
    """Pay an invoice."""
    _append(f"{_thread()}.effects", f"paid {invoice}")
    await asyncio.sleep(TOOL_PAUSE)
    await _held("tool")
    return f"paid invoice {invoice}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    if any(isinstance(c, FunctionResultContent) for m in messages for c in m.contents):
        return "Paid."
    invoice = int(messages[0].text.split()[-1])
    return [FunctionCallContent("c1", "pay", {"invoice": invoice})]


class PausesAfterTheClaim(DelegatingChatClient):
    """A resumed run passes here after the server claimed its answers and before the tool
    loop starts any tool: it leaves a mark and waits ``CLAIM_PAUSE``."""

    def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        run = current_run()
        if run is not None and run.input.resume:
            return self._after_a_pause(messages, options)
        return self.inner_client.get_streaming_response(messages, options)

    async def _after_a_pause(
        self, messages: Any, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        _append(f"{_thread()}.marks", "claimed")
        await asyncio.sleep(CLAIM_PAUSE)
        await _held("claim")
        async for update in self.inner_client.get_streaming_response(messages, options):
            yield update


app = AGUIServer(
    PausesAfterTheClaim(FunctionInvokingChatClient(ScriptedChatClient(model))),
    tools=[pay],
    approval_store=os.environ["STORE_URL"],
    claim_lease=timedelta(seconds=float(os.environ.get("LEASE_SECONDS", "2"))),
)
