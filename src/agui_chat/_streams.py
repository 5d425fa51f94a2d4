"""``close_stream``: closing a stream that ``async for`` left open.

``async for`` does not close the iterator it leaves early, so a middleware that wraps a
stream closes the inner one itself when its own caller stops reading: then the model's
stream (and its HTTP connection) is released at once, not whenever the garbage collector
finalizes it.
"""

from __future__ import annotations

from typing import Any


async def close_stream(stream: object) -> None:
    """Await ``stream.aclose()`` if the stream has one (async generators do)."""
    close: Any = getattr(stream, "aclose", None)
    if close is not None:
        await close()
