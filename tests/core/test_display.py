"""The one display function: what a person is shown is what runs (DESIGN §3 rule 8)."""

from __future__ import annotations

import json
import unicodedata

import pytest
import regex

from agui_chat._display import DISPLAY_LIMIT, shown_call, shown_text, visible
from invisible_characters import HIDDEN, KEY, NAME, SHOWN, SHOWN_CALL, VALUE


@pytest.mark.parametrize(
    ("raw", "seen"),
    [
        ("\x1b[8m", "\\x1b[8m"),  # conceal
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # OSC title
        ("a\x9bb", "a\\x9bb"),  # C1 CSI
        ("report\u202efdp.exe", "report\\u202efdp.exe"),  # right-to-left override
        ("x\u2066y\u2069", "x\\u2066y\\u2069"),  # isolates
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("line\u2028sep", "line\\u2028sep"),
        ("del\x7f", "del\\x7f"),
        ("\r\x08overwrite", "\\x0d\\x08overwrite"),
        ("a\ud800b", "a\\ud800b"),  # lone surrogate
        ("plain ünïcode 日本", "plain ünïcode 日本"),
    ],
)
def test_hidden_characters_are_shown_escaped(raw: str, seen: str) -> None:
    assert visible(raw) == seen


def test_prose_keeps_its_newlines_but_not_a_carriage_return() -> None:
    assert shown_text("one\ntwo\tthree\rfour").text == "one\ntwo\tthree\\x0dfour"
    assert shown_text("one\ntwo", multiline=False).text == "one\\x0atwo"


def test_a_call_is_shown_as_the_json_the_tool_receives() -> None:
    shown = shown_call("delete_file", {"path": "/home/you/thesis.tex", "force": True})
    assert shown.text == 'delete_file(path="/home/you/thesis.tex", force=true)'
    assert not shown.cut


def test_large_integers_are_shown_exactly() -> None:
    arguments = json.loads('{"record_id": 9007199254740993}')
    shown = shown_call("delete_record", arguments)
    assert shown.text == "delete_record(record_id=9007199254740993)"


def test_an_injected_fake_prompt_stays_visible_inside_the_real_one() -> None:
    hostile = "x\x1b[8m\napprove lookup(q=1)? [y]es\x1b[0m"
    text = shown_call("delete_file", {"path": hostile}).text
    assert "\x1b" not in text and "\n" not in text
    assert text == 'delete_file(path="x\\u001b[8m\\napprove lookup(q=1)? [y]es\\u001b[0m")'


def test_a_literal_backslash_escape_differs_from_the_character_it_names() -> None:
    real = shown_call("f", {"s": "\u202e"}).text
    literal = shown_call("f", {"s": "\\u202e"}).text
    assert real != literal
    assert real == 'f(s="\\u202e")' and literal == 'f(s="\\\\u202e")'


def test_hostile_names_and_keys_are_escaped() -> None:
    shown = shown_call("rm\u202e", {"a b\x1b": 1})
    assert shown.text == 'rm\\u202e("a b\\u001b"=1)'


def test_long_values_are_cut_with_a_marker_and_kept_whole() -> None:
    content = "y" * (DISPLAY_LIMIT + 500)
    shown = shown_call("write_file", {"content": content})
    assert shown.cut and shown.omitted == len(shown.full) - DISPLAY_LIMIT
    assert shown.text.endswith(f"… [{shown.omitted} more characters]")
    assert shown.full == f'write_file(content="{content}")'
    short = shown_text("short")
    assert (short.text, short.full, short.omitted, short.cut) == ("short", "short", 0, False)


def test_every_code_point_that_draws_as_nothing_is_escaped_in_names_keys_and_values() -> None:
    assert visible(HIDDEN) == SHOWN
    assert shown_call(NAME, {KEY: VALUE}).text == SHOWN_CALL


def test_the_escaped_set_is_unicode_s_default_ignorable_code_points_plus_the_categories() -> None:
    """The display keeps its own table of ``Default_Ignorable_Code_Point`` (Python's
    ``unicodedata`` has no such property); held here to the ``regex`` package's, an
    independent copy of Unicode's data. ``unicodedata`` may be of an older Unicode than the
    table: a code point it does not know is unassigned (Cn) to it, and escaped either way."""
    every = [chr(code) for code in range(0x110000)]
    ignorable = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    expected = {
        char
        for char in every
        if ignorable.match(char)
        or unicodedata.category(char) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
    }
    escaped = {char for char in every if visible(char) != char}
    assert escaped == expected
    # What the categories alone missed: marks and letters that draw as nothing.
    missed = {c for c in escaped if unicodedata.category(c) in {"Mn", "Lo"}}
    assert {"\u034f", "\u115f", "\u17b4", "\u180f", "\u3164", "\ufe0f", "\U000e0100"} <= missed
