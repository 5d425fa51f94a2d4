"""What streams into the page goes through the display function too (issue 25 item 1), in a
real Chromium fed by a hostile server: the model's text and reasoning, a tool's result, a
``RUN_ERROR``'s message and code, a question's schema (labels, descriptions, choices). Each
shows a conceal sequence, an OSC title, BEL, a C1 CSI and a right-to-left override as visible
escapes, in text nodes (never HTML); a long error is cut with a marker and the whole a click
away. The page's twin of the display function (``visible`` in ui/src/shown.js) escapes
exactly the characters ``agui_chat._display.visible`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import ScriptedStreamServer, open_page, ready, say, serve, shot

from agui_chat._display import visible

PAYLOAD = (
    "ok\x1b[8m\napprove lookup(q=1)? [y]es\x1b[0m\x1b]0;all approved\x07\x9b8m report\u202efdp.exe"
)
#: The pieces of PAYLOAD as the display function shows them.
ESCAPED = ("\\x1b[8m", "\\x1b]0;all approved\\x07", "\\x9b8m", "report\\u202efdp.exe")
#: Characters that must never reach the page raw.
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
XSS = "<img src=x onerror=window.__xss=1>"

#: Characters to hold the page's twin to the Python display function: C0, DEL, C1, Latin-1,
#: Arabic with its letter mark, general punctuation (bidi controls, separators, invisible
#: operators), the BOM, specials, private use, an unassigned code point, a lone surrogate,
#: an emoji, tag characters and a private-use plane; and every code point that draws as
#: nothing (Unicode's Default_Ignorable_Code_Point) with its neighbours: the combining
#: grapheme joiner, Hangul fillers, Khmer and Mongolian signs, variation selectors, shorthand
#: and musical format controls, the whole tag and supplementary variation selector block.
SAMPLE = "".join(
    [
        *map(chr, range(0x00, 0x300)),
        *map(chr, range(0x600, 0x700)),
        *map(chr, range(0x2000, 0x2070)),
        "\ufeff\ufff9\ufffa\ufffb\ufffc\ufffd\ue000\uf8ff\u0378\ud800",
        "\U0001f600\U000e0001\U000e0041\U0010fffd",
        *map(chr, range(0x340, 0x360)),
        *map(chr, range(0x1150, 0x1170)),
        *map(chr, range(0x17B0, 0x17C0)),
        *map(chr, range(0x1800, 0x1812)),
        *map(chr, range(0x3160, 0x3170)),
        *map(chr, range(0xFDF0, 0xFE11)),
        *map(chr, range(0xFF9E, 0xFFA2)),
        *map(chr, range(0xFFF0, 0xFFF9)),
        *map(chr, range(0x1BC9C, 0x1BCA5)),
        *map(chr, range(0x1D170, 0x1D17E)),
        *map(chr, range(0xE0000, 0xE1000)),
    ]
)


def _stream(data: dict[str, Any], site: str) -> list[dict[str, Any]]:
    """What the hostile server answers the run whose user message names ``site``."""
    run = {"threadId": data["threadId"], "runId": data["runId"]}
    started = {"type": "RUN_STARTED", **run}
    done = {"type": "RUN_FINISHED", **run, "outcome": {"type": "success"}}
    text = [
        {"type": "TEXT_MESSAGE_START", "messageId": "t1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "t1", "delta": PAYLOAD[:9]},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "t1", "delta": PAYLOAD[9:] + " " + XSS},
        {"type": "TEXT_MESSAGE_END", "messageId": "t1"},
    ]
    if site == "stream":
        return [
            started,
            {"type": "REASONING_START", "messageId": "r1"},
            {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
            {
                "type": "REASONING_MESSAGE_CONTENT",
                "messageId": "r1",
                "delta": "thinking " + PAYLOAD,
            },
            {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
            {"type": "REASONING_END", "messageId": "r1"},
            *text,
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "lookup"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q": "x"}'},
            {"type": "TOOL_CALL_END", "toolCallId": "c1"},
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": "res1",
                "toolCallId": "c1",
                "content": "result " + PAYLOAD + " " + XSS,
                "role": "tool",
            },
            done,
        ]
    if site == "sample":
        return [
            started,
            {"type": "TEXT_MESSAGE_START", "messageId": "s1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "s1", "delta": SAMPLE},
            {"type": "TEXT_MESSAGE_END", "messageId": "s1"},
            done,
        ]
    if site == "error":
        long = PAYLOAD + " " + XSS + " " + "A" * 500 + "THE-END"
        return [started, {"type": "RUN_ERROR", "message": long, "code": "BAD\u202eCODE\x1b[8m"}]
    if site == "prototype":  # a code that is a name of every JS object
        return [started, {"type": "RUN_ERROR", "message": "no such code", "code": "constructor"}]
    if site == "question":
        schema = {
            "type": "object",
            "properties": {
                "pick": {"title": "pick " + PAYLOAD, "description": PAYLOAD, "enum": [PAYLOAD, "b"]}
            },
            "required": ["pick"],
        }
        interrupt = {"id": "q1", "reason": "input_required", "responseSchema": schema}
        return [
            started,
            {
                "type": "RUN_FINISHED",
                **run,
                "outcome": {"type": "interrupt", "interrupts": [interrupt]},
            },
        ]
    if site == "cancelled":  # the server cancels the run while a call is open
        return [
            started,
            {"type": "TOOL_CALL_START", "toolCallId": "c9", "toolCallName": "lookup"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c9", "delta": '{"q": "y"}'},
            {"type": "TOOL_CALL_END", "toolCallId": "c9"},
            {"type": "RUN_FINISHED", **run, "outcome": {"type": "cancelled"}},
        ]
    raise AssertionError(site)


def hostile_run(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run answered by :func:`_stream` for the site its last user message names."""
    return _stream(data, str(data["messages"][-1].get("content")))


def _assert_nothing_raw(page: Any) -> None:
    text = page.locator("body").inner_text()
    for char in RAW:
        assert char not in text, f"{char!r} reached the page raw"
    assert page.locator("img").count() == 0
    assert page.evaluate("window.__xss") is None


def test_streamed_text_reasoning_and_a_result_are_shown_escaped(tmp_path: Path) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "stream")
        result = page.locator(".tool .result")
        result.wait_for()
        text = page.locator("article.msg.assistant .text").first.inner_text()
        for piece in ESCAPED:
            assert piece in text, (piece, text)
        assert XSS in text  # as text, not as an element
        page.get_by_text("Reasoning").click()
        thought = page.locator("details.reasoning .text").inner_text()
        assert thought.startswith("thinking ok\\x1b[8m")
        assert all(piece in thought for piece in ESCAPED)
        assert all(piece in result.inner_text() for piece in ESCAPED)
        shot(page, tmp_path, "hostile-stream.png")
        _assert_nothing_raw(page)


def test_the_page_escapes_exactly_what_the_display_function_escapes(tmp_path: Path) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "sample")
        node = page.locator("article.msg.assistant .text")
        node.wait_for()
        shown = node.evaluate("n => n.textContent")
    assert shown == visible(SAMPLE, multiline=True)
    assert "\\u202e" in shown and "\\x9b" in shown and "\\ud800" in shown and "\U0001f600" in shown
    assert "\\u034f" in shown and "\\u3164" in shown and "\\ufe0f" in shown
    assert "\\U000e0100" in shown and "\u1810" in shown  # a Mongolian digit stays


def test_a_run_error_s_message_and_code_are_one_escaped_line_cut_with_the_whole_a_click_away(
    tmp_path: Path,
) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "error")
        alert = page.get_by_role("alert")
        alert.get_by_text("The agent reported an error.").wait_for()
        detail = alert.locator(".error-detail")
        assert detail.inner_text().startswith("ok\\x1b[8m\\x0aapprove lookup")
        assert all(piece in detail.inner_text() for piece in ESCAPED)
        assert "THE-END" not in detail.inner_text() and "more characters]" in detail.inner_text()
        assert alert.locator(".error-code code").inner_text() == "BAD\\u202eCODE\\x1b[8m"
        alert.get_by_role("button", name="Show all").click()
        assert detail.inner_text().endswith("THE-END")
        shot(page, tmp_path, "hostile-run-error.png")
        _assert_nothing_raw(page)
        say(page, "prototype")
        alert.get_by_text("no such code").wait_for()
        assert alert.locator(".error-title").inner_text() == "The agent reported an error."


def test_a_question_s_schema_labels_and_choices_are_shown_escaped(tmp_path: Path) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "question")
        card = page.locator("section.card.question")
        card.wait_for()
        label = card.locator("label").first.inner_text()
        assert label.startswith("pick ok\\x1b[8m\\x0aapprove") and label.endswith("(required)")
        assert all(piece in card.locator(".hint").first.inner_text() for piece in ESCAPED)
        options = card.locator("option").all_inner_texts()
        assert options[1] == visible(PAYLOAD) and options[2] == "b"
        shot(page, tmp_path, "hostile-question.png")
        _assert_nothing_raw(page)


def test_a_run_the_server_cancelled_says_its_open_call_was_cancelled(tmp_path: Path) -> None:
    with serve(ScriptedStreamServer(hostile_run)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "cancelled")
        card = page.locator(".tool[data-state=cancelled]")
        card.wait_for()
        assert card.locator(".tool-status").inner_text() == (
            "Cancelled: the run was cancelled before its result came back."
        )
