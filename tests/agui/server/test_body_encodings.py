"""The body limits hold for every encoding the server reads: a body nested 900 deep in
``state``, ``forwardedProps`` or a resume payload is refused ``JSON_TOO_DEEP`` in UTF-8,
UTF-16 and UTF-32 (either byte order, with and without a BOM) exactly as in UTF-8, its
shallow twin is read in each, and bytes that are not such text are ``INVALID_JSON`` saying
so."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest
from server_support import run_input, user

from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server

ENCODINGS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8 BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le": lambda text: text.encode("utf-16-le"),
    "utf-16-be": lambda text: text.encode("utf-16-be"),
    "utf-16-le BOM": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be BOM": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-32-le": lambda text: text.encode("utf-32-le"),
    "utf-32-be": lambda text: text.encode("utf-32-be"),
    "utf-32-le BOM": lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
    "utf-32-be BOM": lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
}
PLACES = ["state", "forwardedProps", "resume payload"]


def body_nested(place: str, depth: int) -> str:
    """A run input (with a non-ASCII message) whose ``place`` nests ``depth`` levels."""
    marker = "NESTED"
    nested = "[" * depth + "1" + "]" * depth
    body = run_input(user("löschen ✓ 🗑"), state={}, forwardedProps={})
    if place == "resume payload":
        body["resume"] = [{"interruptId": "i1", "status": "resolved", "payload": marker}]
    else:
        body[place] = marker
    return json.dumps(body, ensure_ascii=False).replace(json.dumps(marker), nested)


async def answer(content: bytes) -> tuple[int, dict[str, Any] | str]:
    server = agui_server(ScriptedChatClient(lambda messages, options: "ok"))
    async with server.client() as client:
        response = await client.post(
            "/", content=content, headers={"content-type": "application/json"}
        )
    if response.headers["content-type"].startswith("application/json"):
        return response.status_code, response.json()
    return response.status_code, response.text


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("encoding", list(ENCODINGS))
async def test_a_body_nested_900_deep_is_refused_in_every_encoding(
    encoding: str, place: str
) -> None:
    status, refusal = await answer(ENCODINGS[encoding](body_nested(place, 900)))
    assert status == 400
    assert isinstance(refusal, dict) and refusal["code"] == "JSON_TOO_DEEP"


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("encoding", list(ENCODINGS))
async def test_its_shallow_twin_is_read_in_every_encoding(encoding: str, place: str) -> None:
    """The same body nested 5 deep is read (a run, or for the resume a refusal on the
    stream naming the unknown interrupt): the encoding itself is accepted."""
    status, stream = await answer(ENCODINGS[encoding](body_nested(place, 5)))
    assert status == 200 and isinstance(stream, str)
    expected = "RESUME_UNKNOWN_INTERRUPT" if place == "resume payload" else "RUN_FINISHED"
    assert expected in stream


@pytest.mark.parametrize(
    "content",
    [
        b'{"threadId": "t\xff"}',  # not UTF-8
        b'{"threadId": "\xed\xa0\x80"}',  # a UTF-8-encoded surrogate
        '{"threadId": "t"}'.encode("utf-16-le")[:-1] + b"\xd8",  # a lone high surrogate
        b"\x00\x00\x00{\x00\x11\x00\x00",  # UTF-32 beyond U+10FFFF
    ],
    ids=["latin-1 byte", "utf-8 surrogate", "utf-16 lone surrogate", "utf-32 out of range"],
)
async def test_bytes_that_are_not_utf_text_are_refused_as_such(content: bytes) -> None:
    status, refusal = await answer(content)
    assert status == 400
    assert isinstance(refusal, dict) and refusal["code"] == "INVALID_JSON"
    assert refusal["message"] == "the body is not UTF-8, UTF-16 or UTF-32 text"


async def test_a_non_ascii_message_reaches_the_model_exactly_in_every_encoding() -> None:
    for encoding, encode in ENCODINGS.items():
        seen: list[str] = []

        def model(messages: Any, options: Any, seen: list[str] = seen) -> str:
            seen.append(messages[-1].text)
            return "ok"

        server = agui_server(ScriptedChatClient(model))
        async with server.client() as client:
            body = json.dumps(run_input(user("löschen ✓ 🗑")), ensure_ascii=False)
            response = await client.post(
                "/", content=encode(body), headers={"content-type": "application/json"}
            )
        assert response.status_code == 200, encoding
        assert seen == ["löschen ✓ 🗑"], encoding
