"""Reading a request body within bounds: its size, the time it takes to arrive, and how deeply
its JSON nests (checked on the text, before ``json.loads`` builds anything)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from starlette.requests import Request

from ._from_wire import InputError

__all__ = ["MAX_JSON_DEPTH", "json_depth_exceeds", "parse_json", "read_body"]

#: How deeply a request body may nest (deeper bodies are refused before anything walks them).
MAX_JSON_DEPTH = 100

# A JSON string (the unrolled form: the regex engine runs through it without backtracking).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_EMPTY_PAIR = re.compile(rb"\[\]|\{\}")


async def read_body(request: Request, *, max_bytes: int, timeout: float) -> bytes:
    """The whole body: 413 past ``max_bytes``, 408 if it has not all arrived within
    ``timeout`` seconds (a client that stalls holds nothing open for long)."""
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
    """Whether the JSON text nests deeper than ``limit``, read from its brackets alone.

    Strings are cut out, then everything but brackets; each pass of ``_EMPTY_PAIR`` then
    removes exactly the innermost (now empty) containers, so the passes it takes to empty
    the text are its depth. Every step runs in C. Text whose brackets do not pair up is left
    for ``json.loads`` to refuse."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        shorter = _EMPTY_PAIR.sub(b"", brackets)
        if len(shorter) == len(brackets):
            return False  # unbalanced: not JSON; json.loads says so
        brackets = shorter
    return bool(brackets) and _EMPTY_PAIR.search(brackets) is not None


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
