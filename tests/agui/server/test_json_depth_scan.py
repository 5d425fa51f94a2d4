"""The JSON depth limit is checked on the body's text, before ``json.loads`` builds anything:
the bracket scan gives the real depth (brackets inside strings do not count), and a body
nested deeper than the limit is refused with 400 ``JSON_TOO_DEEP``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import scripted

from agui_chat.agui.server._body import MAX_JSON_DEPTH, json_depth_exceeds
from agui_server import agui_server


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


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_scan_reads_the_real_depth(value: Any) -> None:
    text = json.dumps(value).encode()
    real = depth(value)
    assert json_depth_exceeds(text, real) is False
    if real > 0:
        assert json_depth_exceeds(text, real - 1) is True


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
async def test_deep_bodies_are_refused_before_parsing(
    body: bytes, status: int, code: str | None
) -> None:
    async with agui_server(scripted()).client() as client:
        response = await client.post(
            "/", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["code"] == code


async def test_a_body_exactly_at_the_limit_passes_the_scan() -> None:
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
def test_deep_bodies_of_every_shape_read_their_real_depth(real: int, shape: str) -> None:
    if shape == "chain":
        text = "[" * real + "]" * real
    elif shape == "alternating":
        half, odd = divmod(real, 2)
        text = '{"a":[' * half + ('{"b":1}' if odd else "1") + "]}" * half
    else:  # many shallow siblings around one deep branch
        text = "[" + ",".join(["[[[1]]]"] * 2000 + ["[" * (real - 1) + "]" * (real - 1)]) + "]"
    assert depth(json.loads(text)) == real
    assert json_depth_exceeds(text.encode(), real) is False
    assert json_depth_exceeds(text.encode(), real - 1) is True
    assert json_depth_exceeds(text.encode(), MAX_JSON_DEPTH) is (real > MAX_JSON_DEPTH)
