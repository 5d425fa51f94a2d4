"""Structured output: ``get_response(..., response_format=Model)`` against the same call by
hand, side by side in one run.

    python bench/structured.py          # full sizes (~20 s)
    python bench/structured.py --quick  # tiny sizes: proves it still runs

(structured) N calls of ``client.get_response(messages, response_format=Model)`` against N
             calls of ``client.get_response(messages)`` + ``Model.model_validate_json(text)``
             (the floor), on the same chat client (one whose reply is a fresh ``ChatResponse``
             holding the model's JSON, as an adapter returns it), alternated, median of the
             per-pair ratios (31 short pairs, robust to a change of load); for a small
             model and a nested one with a list of 20 items.

Budget (DESIGN §6): at most 1.5x the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from agui_chat import ChatMessage, ChatOptions, ChatResponse, ChatResponseUpdate
from agui_chat._client import BaseChatClient

BUDGET = 1.5


class Weather(BaseModel):
    city: str
    celsius: float
    sunny: bool


class Item(BaseModel):
    name: str
    quantity: int
    tags: list[str]


class Order(BaseModel):
    order_id: int
    customer: str
    items: list[Item]
    note: str | None = None


SMALL = '{"city": "Lisbon", "celsius": 21.5, "sunny": true}'
NESTED = Order(
    order_id=7,
    customer="Ada",
    items=[Item(name=f"item {i}", quantity=i, tags=["a", "b"]) for i in range(20)],
).model_dump_json()


class Replying(BaseChatClient):
    """A chat client whose reply is ``text``, built fresh per call."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def _get_response(self, messages: Any, options: ChatOptions | None) -> ChatResponse[Any]:
        return ChatResponse([ChatMessage("assistant", self.text)], finish_reason="stop")

    async def get_streaming_response(  # type: ignore[override]
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        yield ChatResponseUpdate(role="assistant", contents=self.text)


async def ours(client: Replying, model: type[BaseModel], n: int) -> float:
    messages = [ChatMessage("user", "answer as JSON")]
    start = time.perf_counter()
    for _ in range(n):
        response = await client.get_response(messages, response_format=model)
    elapsed = time.perf_counter() - start
    assert isinstance(response.value, model)
    return elapsed


async def by_hand(client: Replying, model: type[BaseModel], n: int) -> float:
    messages = [ChatMessage("user", "answer as JSON")]
    start = time.perf_counter()
    for _ in range(n):
        response = await client.get_response(messages)
        value = model.model_validate_json(response.text)
    elapsed = time.perf_counter() - start
    assert isinstance(value, model)
    return elapsed


async def measure(n: int, pairs: int) -> int:
    failed = 0
    print(f"structured output on CPython {sys.version.split()[0]}: {n} calls, {pairs} pairs")
    for label, model, text in [("small", Weather, SMALL), ("nested", Order, NESTED)]:
        client = Replying(text)
        await ours(client, model, 50)  # warm the caches (the spec of each type) and the code
        await by_hand(client, model, 50)
        ratios = []
        for i in range(pairs):
            if i % 2:
                floor = await by_hand(client, model, n)
                mine = await ours(client, model, n)
            else:
                mine = await ours(client, model, n)
                floor = await by_hand(client, model, n)
            ratios.append(mine / floor)
        ratio = statistics.median(ratios)
        verdict = "within budget" if ratio <= BUDGET else "OVER budget"
        per_call = mine / n * 1e6
        print(
            f"(structured) {label}: ours {per_call:.1f} us/call, ratio {ratio:.2f}x the floor "
            f"(budget {BUDGET}x)  {verdict}"
        )
        failed += ratio > BUDGET
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: prove it runs")
    args = parser.parse_args()
    n, pairs = (50, 3) if args.quick else (400, 31)
    failed = asyncio.run(measure(n, pairs))
    print("all budgets hold" if not failed else f"{failed} figure(s) over budget")


if __name__ == "__main__":
    main()
