"""The OpenAI adapters' streaming cost per event, over the raw SDK's iteration of the same
recorded stream (issue 18; budget for the Responses adapter: <= 1.3x).

    python bench/responses.py          # 5,000 events, median of 7 alternating pairs
    python bench/responses.py --quick  # tiny sizes: proves it still runs

(r) OpenAIResponsesChatClient.get_streaming_response vs ``async for event in
    responses.create(stream=True)``: a stream of reasoning summary deltas, output text deltas
    and two function calls with argument deltas, ending response.completed
(r2) OpenAIChatClient (Chat Completions) vs ``async for chunk in chat.completions.create(...)``
    over a stream of the same shape

Both sides read the same bytes through the same SDK client (an in-process httpx transport),
so the ratio is what the adapter adds to the SDK's own parsing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import openai

from agui_chat.openai import OpenAIChatClient, OpenAIResponsesChatClient

RID = "resp_bench"


def _sse(kind: str | None, body: dict[str, Any]) -> bytes:
    head = f"event: {kind}\n" if kind else ""
    return f"{head}data: {json.dumps(body, separators=(',', ':'))}\n\n".encode()


def responses_stream(n: int) -> bytes:
    """``n`` delta events (a tenth reasoning, two calls' arguments, the rest text)."""
    response = {
        "id": RID,
        "object": "response",
        "created_at": 1757540000,
        "model": "m",
        "status": "in_progress",
        "output": [],
    }
    out = [_sse("response.created", {"type": "response.created", "response": response})]
    seq = 0

    def ev(kind: str, **data: Any) -> None:
        nonlocal seq
        seq += 1
        out.append(_sse(kind, {"type": kind, "sequence_number": seq, **data}))

    reasoning, calls = n // 10, n // 10
    text = n - reasoning - calls
    ev(
        "response.output_item.added",
        output_index=0,
        item={"id": "rs_1", "type": "reasoning", "summary": []},
    )
    for _ in range(reasoning):
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            delta="hmm ",
        )
    ev(
        "response.output_item.done",
        output_index=0,
        item={"id": "rs_1", "type": "reasoning", "summary": []},
    )
    ev(
        "response.output_item.added",
        output_index=1,
        item={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        },
    )
    for i in range(text):
        ev(
            "response.output_text.delta",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            delta=f"tok{i} ",
            logprobs=[],
        )
    for c in (2, 3):
        item = {
            "id": f"fc_{c}",
            "type": "function_call",
            "call_id": f"call_{c}",
            "name": "f",
            "arguments": "",
            "status": "in_progress",
        }
        ev("response.output_item.added", output_index=c, item=item)
        for _ in range(calls // 2):
            ev(
                "response.function_call_arguments.delta",
                item_id=f"fc_{c}",
                output_index=c,
                delta='{"a":1}'[:1],
            )
        done = {**item, "arguments": "{}", "status": "completed"}
        ev("response.output_item.done", output_index=c, item=done)
    usage = {
        "input_tokens": 10,
        "output_tokens": n,
        "total_tokens": n + 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": reasoning},
    }
    ev("response.completed", response={**response, "status": "completed", "usage": usage})
    return b"".join(out)


def chat_stream(n: int) -> bytes:
    """``n`` chunks of the same shape for Chat Completions (reasoning, text, two calls)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 1757540000,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    reasoning, calls = n // 10, n // 10
    out = [chunk({"role": "assistant", "reasoning_content": "hmm "}) for _ in range(reasoning)]
    out += [chunk({"content": f"tok{i} "}) for i in range(n - reasoning - calls)]
    for c in (0, 1):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": c,
                            "id": f"call_{c}",
                            "type": "function",
                            "function": {"name": "f", "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": c, "function": {"arguments": "{"[:1]}}]})
            for _ in range(calls // 2 - 1)
        ]
    out.append(chunk({}, "tool_calls"))
    return b"".join(out) + b"data: [DONE]\n\n"


def sdk_for(body: bytes) -> openai.AsyncOpenAI:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return openai.AsyncOpenAI(api_key="sk-bench", base_url="http://bench/v1", http_client=http)


async def _time(run: Callable[[], Awaitable[int]]) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    count = await run()
    return time.perf_counter() - start, count


async def pairs(
    ours: Callable[[], Awaitable[int]], floor: Callable[[], Awaitable[int]], rounds: int
) -> tuple[float, float, float, int]:
    await ours(), await floor()  # warm-up
    o_times, f_times, ratios = [], [], []
    events = 0
    for _ in range(rounds):
        o, _ = await _time(ours)
        f, events = await _time(floor)
        o_times.append(o)
        f_times.append(f)
        ratios.append(o / f)
    return statistics.median(o_times), statistics.median(f_times), statistics.median(ratios), events


async def bench_responses(n: int, rounds: int) -> None:
    sdk = sdk_for(responses_stream(n))
    client = OpenAIResponsesChatClient("m", client=sdk)

    async def floor() -> int:
        count = 0
        stream = await sdk.responses.create(model="m", input="hi", stream=True)
        async for _event in stream:
            count += 1
        return count

    async def ours() -> int:
        return await _count(client.get_streaming_response("hi"))

    figures = await pairs(ours, floor, rounds)
    report("r", "OpenAIResponsesChatClient vs the SDK's Responses stream", *figures, "<= 1.3x")
    await sdk.close()


async def bench_chat(n: int, rounds: int) -> None:
    sdk = sdk_for(chat_stream(n))
    client = OpenAIChatClient("m", client=sdk, stream_usage=False)

    async def floor() -> int:
        count = 0
        stream = await sdk.chat.completions.create(model="m", messages=[], stream=True)
        async for _chunk in stream:
            count += 1
        return count

    async def ours() -> int:
        return await _count(client.get_streaming_response("hi"))

    figures = await pairs(ours, floor, rounds)
    report("r2", "OpenAIChatClient vs the SDK's Chat Completions stream", *figures, "(reported)")
    await sdk.close()


async def _count(updates: AsyncIterator[Any]) -> int:
    count = 0
    async for _update in updates:
        count += 1
    return count


def report(
    key: str, what: str, ours: float, floor: float, ratio: float, events: int, budget: str
) -> None:
    per = 1e6 / max(events, 1)
    print(
        f"({key}) {what}: {events} events; ours {ours * per:.1f} us/event, "
        f"floor {floor * per:.1f} us/event, ratio {ratio:.2f}x (budget {budget})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to prove it runs")
    args = parser.parse_args()
    n, rounds = (200, 1) if args.quick else (5_000, 7)
    asyncio.run(bench_responses(n, rounds))
    asyncio.run(bench_chat(n, rounds))


if __name__ == "__main__":
    main()
