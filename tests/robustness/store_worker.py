"""One worker of a deployment, for the multi-process store tests: ``uvicorn store_worker:app``
in a child process, configured by its environment (the same key and store in every worker).

- ``AGUI_CHAT_SIGNING_KEY``, ``STORE_URL`` (``sqlite:///...`` or ``redis://...``),
  ``AGUI_CHAT_AUDIENCE`` (optional: another agent), ``LEASE_SECONDS`` (the claim lease);
- ``EFFECTS_DIR``: every side effect is a line appended to ``<thread id>.log`` there, by
  whichever worker ran it, so the test counts them across processes and restarts.

The model is stateless (any worker, any restart, answers alike): a history with a result
for the call gets "Deleted."; otherwise it calls ``delete_file`` (or, when the person asked
for it, ``slow_delete``, which hangs after it started, or ``delete_file`` behind a pipeline
that hangs before the tool loop runs).
"""

from __future__ import annotations

import asyncio
import os
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

EFFECTS = Path(os.environ.get("EFFECTS_DIR", "."))


def effect(line: str) -> None:
    run = current_run()
    thread = run.thread_id if run is not None else "unknown"
    with open(EFFECTS / f"{thread}.log", "a") as log:
        log.write(f"{line} pid={os.getpid()}\n")
        log.flush()
        os.fsync(log.fileno())


@approval_required
@ai_function
def delete_file(path: str) -> str:
    """Delete a file."""
    effect(f"delete {path}")
    return f"deleted {path}"


@approval_required
@ai_function
async def slow_delete(path: str) -> str:
    """Delete a file, slowly."""
    effect(f"started {path}")
    await asyncio.sleep(120)  # the test kills the worker meanwhile
    effect(f"finished {path}")
    return f"deleted {path}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    if any(isinstance(c, FunctionResultContent) for m in messages for c in m.contents):
        return "Deleted."
    asked = messages[0].text if messages else ""
    tool = "slow_delete" if "slowly" in asked else "delete_file"
    first = FunctionCallContent("c1", tool, {"path": "a.txt"})
    if "three" in asked:  # a pause of three calls, the first of them slow
        others = [FunctionCallContent(f"c{i}", "delete_file", {"path": p}) for i, p in
                  ((2, "b.txt"), (3, "c.txt"))]  # fmt: skip
        return [first, *others]
    return [first]


class HangsBeforeTheTools(DelegatingChatClient):
    """A resumed request whose person asked for "a hang" waits here, after the claim and
    before the tool loop runs: the test kills the worker meanwhile."""

    def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        resumed = bool(current_run().input.resume)
        if resumed and "hang" in messages[0].text and os.environ.get("HANG") == "1":
            return self._hang()
        return self.inner_client.get_streaming_response(messages, options)

    async def _hang(self) -> AsyncIterator[ChatResponseUpdate]:
        effect("hanging")
        await asyncio.sleep(120)
        yield ChatResponseUpdate()  # pragma: no cover


app = AGUIServer(
    HangsBeforeTheTools(FunctionInvokingChatClient(ScriptedChatClient(model))),
    tools=[delete_file, slow_delete],
    approval_store=os.environ["STORE_URL"],
    claim_lease=timedelta(seconds=float(os.environ.get("LEASE_SECONDS", "30"))),
)
