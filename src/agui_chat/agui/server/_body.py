"""Reading a request body within bounds: its size, the time it takes to arrive, and how deeply
its JSON nests (read from the text, before ``json.loads`` builds anything)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request

from ._from_wire import InputError

__all__ = ["MAX_JSON_DEPTH", "json_depth_exceeds", "parse_json", "read_body"]

#: How deeply a request body may nest (deeper bodies are refused before anything walks them).
MAX_JSON_DEPTH = 100

# Brackets kept (both kinds as ``[`` and ``]``: one pass of ``replace`` then removes exactly
# one level), everything else deleted.
_BRACKETS_ONLY = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Shallow bodies (most of them) empty within this many passes of ``replace``.
_PASSES = 8


async def read_body(request: Request, *, max_bytes: int, timeout: float) -> bytes:
    """The whole body: 413 past ``max_bytes``, 408 if not all there within ``timeout`` s."""
    too_large = InputError(413, "BODY_TOO_LARGE", f"the body is larger than {max_bytes} bytes")
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise InputError(400, "INVALID_CONTENT_LENGTH", "Content-Length is not a number")
        if int(declared) > max_bytes:
            raise too_large

    async def read() -> bytes:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_bytes:
                raise too_large
        return bytes(body)

    try:
        return await asyncio.wait_for(read(), timeout)
    except asyncio.TimeoutError:
        raise InputError(
            408, "REQUEST_TIMEOUT", f"the request body did not arrive within {timeout:g} seconds"
        ) from None


def json_depth_exceeds(text: bytes, limit: int) -> bool:
    """Whether the JSON text nests deeper than ``limit``, read from its brackets alone (the
    strings cut out, both kinds as ``[]``): each pass of ``replace(b"[]", b"")`` removes one
    level, and what is left of a deep text is read block by block. Text whose brackets or
    quotes do not pair up is left for ``json.loads`` to refuse."""
    unescaped = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(_BRACKETS_ONLY, _NOT_BRACKETS)
    passes = 0
    while brackets and passes < min(limit, _PASSES):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return False  # unbalanced: not JSON; json.loads says so
        passes += 1
        # A pass that removed little (a long chain) would be repeated as often as the text
        # nests: read the blocks instead.
        few = len(brackets) - len(shorter) < len(brackets) // 8
        brackets = shorter
        if few:
            break
    return bool(brackets) and _deeper_than(brackets, limit - passes)


def _deeper_than(brackets: bytes, limit: int) -> bool:
    """Whether a text of ``[`` and ``]`` reaches a depth over ``limit``, from its blocks: it
    splits at every ``][`` into blocks ``[``*a ``]``*b (the split took one ``]`` from the
    end of each block but the last and one ``[`` from the start of each but the first)."""
    blocks = brackets.split(b"][")
    last = len(blocks) - 1
    depth = 0
    for i, block in enumerate(blocks):
        opens = block.count(b"[") + (i > 0)
        if depth + opens > limit:
            return True
        depth += opens - (len(block) - opens + (i > 0) + (i < last))
    return False


def parse_json(body: bytes) -> Any:
    """The body's JSON; 400 ``JSON_TOO_DEEP`` past ``MAX_JSON_DEPTH``, ``INVALID_JSON`` if it
    is not JSON."""
    if json_depth_exceeds(body, MAX_JSON_DEPTH):
        raise _too_deep()
    try:
        return json.loads(body)
    except RecursionError:  # pragma: no cover - the scan above bounds the depth
        raise _too_deep() from None
    except ValueError:
        raise InputError(400, "INVALID_JSON", "the body is not valid JSON") from None


def _too_deep() -> InputError:
    return InputError(400, "JSON_TOO_DEEP", f"the body nests deeper than {MAX_JSON_DEPTH} levels")
