"""The demo agent (``agui-chat demo --browser``) in a real Chromium: the approval of
``delete_file`` and the question of ``deploy`` answered through the page. The approval card
is screenshotted here and compared with docs/approval-card.png (shown in the README): the
same size, the same visible text (kept in the PNG), and nearly the same pixels. The page and
the server run on one fixed time, in one time zone and locale, so the card's expiry line is
the same on every run. ``AGUI_CHAT_UPDATE_SCREENSHOTS=1`` writes the picture afresh."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from browser_support import open_page, ready, say, serve
from png_support import Png, with_text

from agui_chat.cli._demo_agent import demo_model, demo_tools
from agui_server import agui_server
from fake_clock import on_the_server

#: The picture in the README.
APPROVAL_CARD = Path(__file__).parents[3] / "docs" / "approval-card.png"
#: The PNG text chunk that keeps the card's visible text beside its pixels.
CARD_TEXT = "agui-chat card text"
#: When the page and the server think it is (the card's expiry line is read from it).
NOW = datetime(2030, 1, 15, 9, 30, tzinfo=timezone.utc)
#: How far a channel may be off before a pixel counts as changed, and how many may change:
#: room for another build of Chromium smoothing a glyph's edge, none for a changed colour,
#: word or layout (each changes several percent of the card).
TOLERANCE, CHANGED_AT_MOST = 48, 0.005
HOW_TO_UPDATE = (
    "if the page changed on purpose, write the picture again: AGUI_CHAT_UPDATE_SCREENSHOTS=1 "
    ".venv/bin/pytest tests/agui/server/test_ui_demo.py"
)


def test_the_demo_round_trip_in_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = on_the_server(monkeypatch, NOW.timestamp())
    app = agui_server(demo_model(), tools=demo_tools(), ui=True, clock=clock).app
    fixed = {"timezone_id": "UTC", "locale": "en-US"}
    with serve(app) as url, open_page(tmp_path, width=760, height=720, **fixed) as page:
        page.clock.set_fixed_time(NOW)
        ready(page, url)
        say(page, "Please clean up the draft report.")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.wait_for()
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "approval-page.png"))
        # docs/approval-card.png: the card alone, without the composer fixed over it.
        page.evaluate("document.querySelector('footer').hidden = true")
        page.evaluate("document.activeElement.blur()")
        card.screenshot(path=str(tmp_path / "approval-card.png"))
        shown = card.inner_text()
        page.evaluate("document.querySelector('footer').hidden = false")
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted reports/q3-draft.txt.").wait_for()

        say(page, "Now deploy the web service.")
        question = page.get_by_role("group", name="Which build of web should I deploy?")
        question.wait_for()
        assert question.get_by_label("build (required)").input_value() == "42"
        question.get_by_label("note").fill("from the browser")
        page.screenshot(path=str(tmp_path / "question-card.png"))
        question.get_by_role("button", name="Send answer").click()
        page.get_by_text("Done: deployed web build 42 (from the browser).").wait_for()
    assert "Expires in 1 h 0 min (at 10:30:00 AM)." in shown  # the fixed time, read
    taken = with_text((tmp_path / "approval-card.png").read_bytes(), CARD_TEXT, shown)
    if os.environ.get("AGUI_CHAT_UPDATE_SCREENSHOTS") == "1":
        APPROVAL_CARD.write_bytes(taken)
    check_the_same_picture(Png.read(APPROVAL_CARD.read_bytes()), Png.read(taken))


def check_the_same_picture(committed: Png, taken: Png) -> None:
    """``committed`` shows what ``taken`` shows: its size, the card's text, its pixels."""
    where = "docs/approval-card.png"
    size = (committed.width, committed.height)
    assert size == (taken.width, taken.height), (
        f"{where} is {size[0]}x{size[1]}, the card is now {taken.width}x{taken.height}; "
        + HOW_TO_UPDATE
    )
    text = committed.texts.get(CARD_TEXT)
    assert text == taken.texts[CARD_TEXT], (
        f"{where} shows {text!r}, the card now {taken.texts[CARD_TEXT]!r}; " + HOW_TO_UPDATE
    )
    changed = committed.differing(taken, tolerance=TOLERANCE)
    assert changed <= CHANGED_AT_MOST, (
        f"{changed:.2%} of the pixels of {where} differ from the card's; " + HOW_TO_UPDATE
    )
