"""Every store gives a kept result back exactly as the tool loop produced it, whatever the
string: NUL characters (PostgreSQL's ``text`` cannot hold them), lone surrogates (not valid
UTF-8, which SQLite, Redis and PostgreSQL encode to), the mark the stores escape with, very
long strings and the JSON a non-string result is serialised to. One set of cases, run
against memory, a SQLite file, a real Redis and a real PostgreSQL, read back through another
store of the same deployment (as a re-sent answer on another worker would)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agui_chat.stores import ApprovalStore
from fake_clock import FakeClock

CASES = {
    "empty": "",
    "plain": "deleted a.txt",
    "nul inside": "before\x00after",
    "nul alone": "\x00",
    "nul at the end": "ends with a NUL\x00",
    "lone high surrogate": "a \ud800 b",
    "lone low surrogate": "\udfff",
    "surrogates and nul": "\ud83d\x00\ude00",
    "the escape mark": "\ufdd0",
    "starts with the escape mark": '\ufdd0"not json"',
    "looks escaped": '\ufdd0"\\u0000"',
    "json": '{"a": [1, 2.5, null, true], "b": "\\u0000"}',
    "a non-string result": json.dumps({"path": "a\x00b", "sizes": [1, 2]}),
    "controls and bidi": "\x1b[31m red \u202e reversed \u200b",
    "astral": "😀 \U000e0100 \U0010ffff",
    "very long": "é" * 3_000_000 + "\x00",
    "the lost-result text's shape": "d:p:s:1.5:owner",
}


@pytest.mark.parametrize("result", CASES.values(), ids=CASES.keys())
async def test_a_result_is_given_back_exactly(
    make_store: Callable[[], ApprovalStore], clock: FakeClock, result: str
) -> None:
    writer, reader = make_store(), make_store()
    assert await writer.claim("k", expires_at=clock.now + 60, owner="a")
    assert await writer.mark_started("k", owner="a")
    await writer.record_result("k", result)
    held = await reader.record("k")
    assert held is not None and held.started
    assert held.result == result  # exactly: same length, same code points
    assert await reader.get_result("k") == result
    # kept, it still holds the claim: a re-sent answer replays it, never runs again
    assert await reader.claim("k", expires_at=clock.now + 60, owner="b") is False
    # and the record is still the same one after another read
    assert (await writer.record("k")) == held
