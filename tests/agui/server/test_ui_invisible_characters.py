"""The page in a real Chromium shows every code point that draws as nothing (Unicode's
``Default_Ignorable_Code_Point``: variation selectors, the combining grapheme joiner, Hangul
fillers, Khmer and Mongolian signs, tags) as an escape: in a streamed call's tool name, key
and value, its result and the model's text (a hostile server's), on an approval card and in
its edit form. An edit that only recomposes a value (``café`` composed to decomposed) or only
adds such a code point is reviewed as a change a person can see, and runs exactly as edited.
Chromium's own ``\\p{Default_Ignorable_Code_Point}`` names the code points the display
escapes. Every test counts the tool's runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import regex
from browser_support import (
    RecordingModel,
    ScriptedStreamServer,
    assert_nothing_raw,
    open_page,
    ready,
    say,
    serve,
    shot,
)

from agui_chat._display import visible
from agui_server import agui_server
from agui_streams import SideEffects
from invisible_characters import (
    HIDDEN,
    KEY,
    LOOK_ALIKE_EDITS,
    NAME,
    SHOWN,
    SHOWN_CALL,
    SHOWN_NAME,
    VALUE,
)


def hostile_run(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A run answered with a call of :data:`NAME` holding :data:`KEY` and :data:`VALUE`, its
    result and a text, all of them holding every code point of :data:`HIDDEN`."""
    ids = {"threadId": data["threadId"], "runId": data["runId"]}
    events = [
        {"type": "RUN_STARTED", **ids},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": NAME},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": json.dumps({KEY: VALUE})},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "r1",
            "toolCallId": "c1",
            "content": VALUE,
            "role": "tool",
        },
        {"type": "TEXT_MESSAGE_START", "messageId": "t1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "t1", "delta": f"wrote {VALUE}"},
        {"type": "TEXT_MESSAGE_END", "messageId": "t1"},
        {"type": "RUN_FINISHED", **ids, "outcome": {"type": "success"}},
    ]
    return events


def test_a_streamed_call_s_name_key_value_result_and_text_show_what_draws_as_nothing(
    tmp_path: Path,
) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "go")
        card = page.locator(".tool")
        card.locator(".result").wait_for()
        assert card.locator(".args").inner_text() == SHOWN_CALL
        assert card.get_attribute("aria-label") == f"Tool call {SHOWN_NAME}"
        assert card.locator(".result").inner_text() == f"notes.txt{SHOWN}"
        text = page.locator("article.msg.assistant .text:not([hidden])").inner_text()
        assert text == f"wrote notes.txt{SHOWN}"
        shot(page, tmp_path, "invisible-streamed-call.png")
        assert_nothing_raw(page, HIDDEN)


def _delete(effects: SideEffects, path: str) -> Any:
    model = RecordingModel({"tidy": [("delete_file", {"path": path})]})
    return agui_server(model.client, tools=[effects.delete_file()], ui=True).app


def _card(page: Any) -> Any:
    card = page.get_by_role("group", name="Approve delete_file?")
    card.wait_for()
    return card


def test_an_approval_and_its_edit_form_show_what_draws_as_nothing_and_run_it_exactly(
    tmp_path: Path,
) -> None:
    effects = SideEffects()
    with serve(_delete(effects, VALUE)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "tidy up")
        card = _card(page)
        assert card.locator("pre.call").inner_text() == f'delete_file(path="notes.txt{SHOWN}")'
        card.get_by_role("button", name="Edit arguments").click()
        field = card.get_by_label("path (required)")
        assert field.input_value() == VALUE  # the field holds the value as it runs
        hint = card.locator(f"#{field.get_attribute('aria-describedby').split()[0]}")
        assert hint.inner_text() == (
            f"This value holds hidden characters, shown escaped: notes.txt{SHOWN}"
        )
        shot(page, tmp_path, "invisible-approval.png")
        assert_nothing_raw(page, HIDDEN)
        card.get_by_role("button", name="Cancel editing").click()
        assert effects.count("delete_file") == 0
        card.get_by_role("button", name="Approve delete_file").click()
        page.locator(".tool .result").wait_for()
    assert effects.runs["delete_file"] == [{"path": VALUE}]


@pytest.mark.parametrize("edit", ["decomposed", "variation selector appended"])
def test_an_edit_that_only_recomposes_or_adds_an_invisible_code_point_is_a_visible_change(
    tmp_path: Path, edit: str
) -> None:
    proposed, edited, (before, after) = LOOK_ALIKE_EDITS[edit]
    effects = SideEffects()
    with serve(_delete(effects, proposed)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "tidy up")
        card = _card(page)
        card.get_by_role("button", name="Edit arguments").click()
        card.get_by_label("path (required)").fill(edited)
        card.get_by_role("button", name="Review the edited call").click()
        review = card.get_by_role("region", name="The edited call")
        review.locator(".changes li").wait_for()
        assert review.locator(".changes li").all_inner_texts() == [f"{before} → {after}"]
        shot(page, tmp_path, "look-alike-edit-review.png")
        assert effects.count("delete_file") == 0
        card.get_by_role("button", name="Approve the edited call").click()
        page.locator(".tool .result").wait_for()
    assert effects.runs["delete_file"] == [{"path": edited}]


def test_chromium_s_default_ignorable_code_points_are_the_ones_the_display_escapes(
    tmp_path: Path,
) -> None:
    """The page's twin of the display function asks Chromium for the property; the display
    function keeps its own table. Both are held to the ``regex`` package's copy of Unicode's
    data, and every one of them is escaped in the terminal and the server's display."""
    with open_page(tmp_path) as page:
        chromium = page.evaluate(
            """() => {
              const ignorable = /\\p{Default_Ignorable_Code_Point}/u;
              const found = [];
              for (let code = 0; code < 0x110000; code++)
                if (ignorable.test(String.fromCodePoint(code))) found.push(code);
              return found;
            }"""
        )
    every = "".join(chr(code) for code in range(0x110000))
    unicode = regex.findall(r"\p{Default_Ignorable_Code_Point}", every)
    assert set(chromium) == {ord(char) for char in unicode}
    assert [code for code in chromium if visible(chr(code)) == chr(code)] == []
