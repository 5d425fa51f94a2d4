"""Reading a request body within bounds: its size, the time it takes to arrive, and how deeply
its JSON nests."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from starlette.requests import Request

from ._from_wire import InputError

#: How deeply a request body may nest (deeper bodies are refused).
MAX_JSON_DEPTH = 100


async def read_body(request: Request, *, max_bytes: int, timeout: float) -> bytes:
    """The whole body: 413 past ``max_bytes``, 408 if not all there within ``timeout`` s."""

    def too_large() -> InputError:
        return InputError(413, "BODY_TOO_LARGE", f"the body is larger than {max_bytes} bytes")

    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise InputError(400, "INVALID_CONTENT_LENGTH", "Content-Length is not a number")
        if int(declared) > max_bytes:
            raise too_large()

    async def read() -> bytes:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_bytes:
                raise too_large()
        return bytes(body)

    try:
        if sys.version_info >= (3, 11):  # a deadline on this task, not a task of its own
            async with asyncio.timeout(timeout):
                return await read()
        return await asyncio.wait_for(read(), timeout)
    except asyncio.TimeoutError:
        raise InputError(
            408, "REQUEST_TIMEOUT", f"the request body did not arrive within {timeout:g} seconds"
        ) from None


def parse_json(body: bytes) -> Any:
    """The body's JSON, read as text in the UTF it is in (8, 16 or 32, either byte order,
    with or without a BOM: RFC 8259 §8.1), then checked: 400 ``JSON_TOO_DEEP`` past
    ``MAX_JSON_DEPTH``, ``INVALID_JSON`` if it is not such text or not JSON."""
    try:
        text = body.decode(json.detect_encoding(body))
    except UnicodeDecodeError:
        not_text = "the body is not UTF-8, UTF-16 or UTF-32 text"
        raise InputError(400, "INVALID_JSON", not_text) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise InputError(400, "INVALID_JSON", "the body is not valid JSON") from None
    # Level by level, without recursion: the containers at depth 1, 2, ...
    level = [data] if type(data) in (list, dict) else []
    for _ in range(MAX_JSON_DEPTH):
        level = [
            child
            for value in level
            for child in (value.values() if type(value) is dict else value)
            if type(child) in (list, dict)
        ]
    if level:
        raise _too_deep()
    return data


def _too_deep() -> InputError:
    return InputError(400, "JSON_TOO_DEEP", f"the body nests deeper than {MAX_JSON_DEPTH} levels")
