"""When a streamed tool call reaches the caller: ours (each update as it arrives) against
MEAI's choice (every update after the turn's first call held until the model's stream ends),
measured side by side in one run (issue 16 item 10; docs/meai.md).

The model streams a short text, then one tool call whose arguments arrive in DELTAS pieces
(``FunctionCallUpdateContent``, as the AG-UI client yields them), then the complete call;
it takes GAP seconds between updates, as a real model does. Printed: the time until the
caller sees the call start forming, and the CPU cost per update of each way when the model
answers at once.

    .venv/bin/python bench/streaming_calls.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator

from agui_chat import (
    BaseChatClient,
    ChatOptions,
    ChatResponseUpdate,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionInvokingChatClient,
    ai_function,
)
from agui_chat._client import ChatMessages


@ai_function
def lookup(q: str) -> str:
    """Look up."""
    return f"found {len(q)}"


class Model(BaseChatClient):
    def __init__(self, deltas: int, gap: float) -> None:
        self.deltas, self.gap, self.round = deltas, gap, 0

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.round += 1
        if self.round % 2 == 0:
            yield ChatResponseUpdate("assistant", "done", message_id="m2")
            return
        for word in ("Let ", "me ", "look."):
            yield ChatResponseUpdate("assistant", word, message_id="m1")
        piece = '"' + "x" * 8
        for i in range(self.deltas):
            if self.gap:
                await asyncio.sleep(self.gap)
            text = (
                '{"q": ' + piece
                if i == 0
                else ("x" * 8 + '"}' if i == self.deltas - 1 else "x" * 8)
            )
            yield ChatResponseUpdate(
                "assistant", [FunctionCallUpdateContent("c1", "lookup", text)], message_id="m1"
            )
        yield ChatResponseUpdate(
            "assistant",
            [FunctionCallContent("c1", "lookup", {"q": "x" * 8 * self.deltas})],
            message_id="m1",
        )


async def buffered(stream: AsyncIterator[ChatResponseUpdate]) -> AsyncIterator[ChatResponseUpdate]:
    """MEAI's streaming rule, applied to a turn: after the first call, hold every update
    until the stream ends."""
    held: list[ChatResponseUpdate] | None = None
    async for update in stream:
        calls = any(
            isinstance(c, (FunctionCallContent, FunctionCallUpdateContent)) for c in update.contents
        )
        if held is None and not calls:
            yield update
            continue
        held = held if held is not None else []
        held.append(update)
    for update in held or ():
        yield update


async def first_call_after(deltas: int, gap: float, hold: bool) -> float:
    client = FunctionInvokingChatClient(Model(deltas, gap))
    stream = client.get_streaming_response("go", ChatOptions(tools=[lookup]))
    source = buffered(stream) if hold else stream
    start = time.perf_counter()
    seen = None
    async for update in source:
        if seen is None and any(
            isinstance(c, (FunctionCallUpdateContent, FunctionCallContent)) for c in update.contents
        ):
            seen = time.perf_counter() - start
    assert seen is not None
    return seen


async def cpu_per_update(deltas: int, hold: bool) -> float:
    client = FunctionInvokingChatClient(Model(deltas, 0.0))
    start = time.process_time()
    stream = client.get_streaming_response("go", ChatOptions(tools=[lookup]))
    count = 0
    async for _ in buffered(stream) if hold else stream:
        count += 1
    return (time.process_time() - start) / count


async def main(quick: bool) -> None:
    deltas, gap, pairs = (20, 0.0005, 3) if quick else (200, 0.001, 7)
    ours, meai = [], []
    for _ in range(pairs):  # alternate, so a change of load hits both alike
        ours.append(await first_call_after(deltas, gap, hold=False))
        meai.append(await first_call_after(deltas, gap, hold=True))
    o, m = statistics.median(ours), statistics.median(meai)
    print(
        f"time to the first sign of the call ({deltas} argument deltas, {gap * 1000:.1f} ms apart):"
    )
    print(f"  ours (as they arrive) {o * 1000:8.2f} ms")
    print(f"  held to stream end    {m * 1000:8.2f} ms   ({m / o:.0f}x later)")
    big = 2000 if quick else 20000
    cpu_o, cpu_m = [], []
    for _ in range(pairs):
        cpu_o.append(await cpu_per_update(big, hold=False))
        cpu_m.append(await cpu_per_update(big, hold=True))
    co, cm = statistics.median(cpu_o), statistics.median(cpu_m)
    print(f"CPU per update, model answering at once ({big} deltas):")
    print(f"  ours {co * 1e6:.2f} us, held {cm * 1e6:.2f} us: ratio ours/held {co / cm:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
