"""The bounded outbox between a run's producer and its HTTP stream: encoded events wait
there and are drained in one write."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["Outbox"]


class Outbox:
    """Encoded events waiting to be written, drained in one write; past ``HIGH_WATER``
    pieces or ``HIGH_WATER_BYTES`` bytes the run waits for a drain (a slow reader holds a
    bounded amount of memory)."""

    HIGH_WATER = 512
    HIGH_WATER_BYTES = 1 << 20

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self.ready = asyncio.Event()  # set while something waits to be drained
        self._room = asyncio.Event()
        self._room.set()
        self.closed = False

    def push(self, data: bytes) -> None:
        if data:
            self._parts.append(data)
            self._size += len(data)
            self.ready.set()

    async def put(self, data: bytes) -> None:
        self.push(data)
        if len(self._parts) >= self.HIGH_WATER or self._size >= self.HIGH_WATER_BYTES:
            self._room.clear()
            await self._room.wait()

    async def wait_ready(self, disconnected: asyncio.Future[Any], timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for something to drain or the client to leave
        (``disconnected``); whether there is something to drain."""
        if not self.ready.is_set():
            waiter = asyncio.ensure_future(self.ready.wait())
            await asyncio.wait(
                {waiter, disconnected}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            waiter.cancel()
        return self.ready.is_set()

    def close(self) -> None:
        self.closed = True
        self.ready.set()

    def drain(self) -> tuple[bytes, bool]:
        """Everything waiting, and whether the run has ended."""
        data = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        if not self.closed:
            self.ready.clear()
        self._room.set()
        return data, self.closed
