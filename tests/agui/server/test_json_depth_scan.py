"""The JSON depth limit: a body nested deeper than ``MAX_JSON_DEPTH`` is refused with 400
``JSON_TOO_DEEP`` (also one too deep for ``json.loads`` to build), one exactly that deep is
read (brackets inside strings do not count), whatever its shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import scripted

from agui_chat.agui.server._body import MAX_JSON_DEPTH
from agui_server import agui_server

TOO_DEEP = (400, "JSON_TOO_DEEP")


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


async def answer(body: bytes) -> tuple[int, str]:
    """The status and error code the server answers ``body`` with."""
    async with agui_server(scripted()).client() as client:
        response = await client.post(
            "/", content=body, headers={"content-type": "application/json"}
        )
    return response.status_code, response.json()["code"]


async def exactly_at_the_limit_is_read(text: bytes, real: int) -> None:
    """``text`` (of depth ``real`` <= the limit), nested to the limit, is read; one level
    more is too deep."""
    pad = MAX_JSON_DEPTH - real
    assert await answer(b"[" * pad + text + b"]" * pad) == (422, "INVALID_INPUT")
    assert await answer(b"[" * (pad + 1) + text + b"]" * (pad + 1)) == TOO_DEEP


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_the_check_reads_the_real_depth(value: Any) -> None:
    asyncio.run(exactly_at_the_limit_is_read(json.dumps(value).encode(), depth(value)))


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), 400, "JSON_TOO_DEEP"),
        (
            b'{"a":' * (MAX_JSON_DEPTH + 1) + b"1" + b"}" * (MAX_JSON_DEPTH + 1),
            400,
            "JSON_TOO_DEEP",
        ),
        (b"[" * 200_000, 400, "JSON_TOO_DEEP"),
        (b'["' + b"[" * 5000 + b'"]', 422, None),  # brackets in a string are text
        (b"[}", 400, "INVALID_JSON"),
    ],
    ids=["deep array", "deep object", "unclosed and deep", "brackets in a string", "unbalanced"],
)
async def test_deep_bodies_are_refused(body: bytes, status: int, code: str | None) -> None:
    async with agui_server(scripted()).client() as client:
        response = await client.post(
            "/", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["code"] == code


async def test_a_body_exactly_at_the_limit_passes_the_check() -> None:
    """Nested exactly as deep as the server reads, the body is parsed (and refused only as
    not being a run input); one level deeper is ``JSON_TOO_DEEP`` (the cases above)."""
    at_limit = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    async with agui_server(scripted()).client() as client:
        response = await client.post(
            "/", content=at_limit, headers={"content-type": "application/json"}
        )
    assert (response.status_code, response.json()["code"]) == (422, "INVALID_INPUT")


@pytest.mark.parametrize("real", [9, 50, 99, 100, 101, 150])
@pytest.mark.parametrize("shape", ["chain", "alternating", "wide and deep"])
async def test_deep_bodies_of_every_shape_read_their_real_depth(real: int, shape: str) -> None:
    if shape == "chain":
        text = "[" * real + "]" * real
    elif shape == "alternating":
        half, odd = divmod(real, 2)
        text = '{"a":[' * half + ('{"b":1}' if odd else "1") + "]}" * half
    else:  # many shallow siblings around one deep branch
        text = "[" + ",".join(["[[[1]]]"] * 2000 + ["[" * (real - 1) + "]" * (real - 1)]) + "]"
    assert depth(json.loads(text)) == real
    if real > MAX_JSON_DEPTH:
        assert await answer(text.encode()) == TOO_DEEP
    else:
        await exactly_at_the_limit_is_read(text.encode(), real)
