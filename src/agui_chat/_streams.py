"""``close_stream``: release a stream ``async for`` left open now, not at garbage collection."""

from __future__ import annotations

from typing import Any


async def close_stream(stream: object) -> None:
    """Await ``stream.aclose()`` if the stream has one (async generators do)."""
    close: Any = getattr(stream, "aclose", None)
    if close is not None:
        await close()
