"""``close_stream``: closing a stream that ``async for`` left open, so the model's stream (and
its connection) is released at once, not when the garbage collector finalizes it."""

from __future__ import annotations

from typing import Any


async def close_stream(stream: object) -> None:
    """Await ``stream.aclose()`` if the stream has one (async generators do)."""
    close: Any = getattr(stream, "aclose", None)
    if close is not None:
        await close()
