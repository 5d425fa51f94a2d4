"""The page in a real Chromium remembers an approval only where the server offers it: a tool
wrapped ``approval_required(allow_remember=True)`` gets "approve and don't ask again in this
conversation for [duration]" (only durations within the server's ``max_remember``), the next
identical call runs without a card, and the "Remembered approvals" panel lists the grant (its
call escaped as the card showed it) and revokes it, after which the call asks again. A tool
without ``allow_remember`` never offers it, and a page that sends ``remember`` anyway is
refused before anything runs. Every test counts the tool's side effects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from browser_support import (
    Recorder,
    RecordingModel,
    ScriptedStreamServer,
    assert_nothing_raw,
    open_page,
    ready,
    say,
    serve,
    shot,
)

from agui_server import agui_server
from agui_streams import SideEffects
from invisible_characters import HIDDEN, SHOWN, VALUE

#: The durations the page offers when the server allows a day (its default cap).
ALL_DURATIONS = ["10 minutes", "1 hour", "8 hours", "1 day"]
#: Counts every approval card the page ever shows (a MutationObserver on the pause slot).
COUNT_CARDS = """() => {
  window.cardsShown = document.querySelectorAll("#pause section.card.approval").length;
  new MutationObserver((records) => {
    for (const r of records)
      for (const n of r.addedNodes)
        if (n.nodeType === 1)
          window.cardsShown += (n.matches("section.card.approval") ? 1 : 0)
            + n.querySelectorAll("section.card.approval").length;
  }).observe(document.getElementById("pause"), { childList: true, subtree: true });
}"""


def _app(
    effects: SideEffects, path: str = "notes.txt", *, allow_remember: bool = True, **options: Any
) -> Recorder:
    model = RecordingModel({"tidy": [("delete_file", {"path": path})]})
    tool = effects.delete_file(allow_remember=allow_remember)
    return Recorder(agui_server(model.client, tools=[tool], ui=True, **options).app)


def _card(page: Any) -> Any:
    card = page.locator("section.card.approval:not(:has(.decided:not([hidden])))")
    card.wait_for()
    return card


@contextmanager
def _asked(tmp_path: Path, app: Any, prompt: str = "Please tidy up") -> Iterator[tuple[Any, Any]]:
    """The page open on ``app``, ``prompt`` said: the page and the approval card it shows."""
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, prompt)
        yield page, _card(page)


def _durations(card: Any) -> list[str]:
    return [
        o.strip()
        for o in card.get_by_label("Don't ask again for").locator("option").all_inner_texts()
    ]


def _remember(card: Any, duration: str) -> None:
    card.get_by_label("Don't ask again for").select_option(label=duration)
    card.get_by_role("button", name=f"in this conversation for {duration}").click()


def _panel(page: Any) -> Any:
    return page.get_by_role("region", name="Remembered approvals")


def test_remembered_approval_runs_the_next_identical_call_and_revoking_it_asks_again(
    tmp_path: Path,
) -> None:
    effects = SideEffects()
    app = _app(effects)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        page.evaluate(COUNT_CARDS)
        assert _panel(page).count() == 0  # nothing remembered: no panel
        say(page, "Please tidy up")
        card = _card(page)
        assert _durations(card) == ALL_DURATIONS
        # The card says exactly what it covers: this call, these arguments, here, how long.
        card.get_by_label("Don't ask again for").select_option(label="10 minutes")
        covers = card.locator(".remember-covers").inner_text()
        assert 'delete_file(path="notes.txt")' in covers
        assert "exactly these arguments" in covers and "only in this conversation" in covers
        assert "for 10 minutes" in covers
        shot(page, tmp_path, "remember-offered.png")
        assert effects.count("delete_file") == 0
        _remember(card, "10 minutes")
        page.get_by_text("Done: deleted notes.txt").wait_for()
        panel = _panel(page)
        panel.locator("li.grant").wait_for()
        assert panel.locator("li.grant").count() == 1
        assert panel.locator(".grant-call").inner_text() == 'delete_file(path="notes.txt")'
        assert panel.locator(".grant-scope").inner_text() == "In this conversation."
        assert re.match(r"Expires in (9|10) min \d+ s \(at ", panel.locator(".expiry").inner_text())
        shot(page, tmp_path, "remembered.png")

        # The same call again in this conversation: it runs, and no card asks.
        say(page, "tidy again")
        page.get_by_text("Done: deleted notes.txt").nth(1).wait_for()
        assert effects.count("delete_file") == 2
        assert page.evaluate("window.cardsShown") == 1
        assert len(app.resumes()) == 1

        # Revoked from the panel: the next identical call asks again.
        panel.get_by_role("button", name="Revoke").click()
        panel.get_by_text("Revoked: that call asks again.").wait_for()
        assert panel.locator("li.grant").count() == 0
        shot(page, tmp_path, "revoked.png")
        say(page, "tidy once more")
        card = _card(page)
        assert page.evaluate("window.cardsShown") == 2
        assert effects.count("delete_file") == 2
        card.get_by_role("button", name="Approve delete_file", exact=True).click()
        page.get_by_text("Done: deleted notes.txt").nth(2).wait_for()
    assert effects.count("delete_file") == 3
    payloads = [[e["payload"] for e in r] for r in app.resumes()]
    assert payloads == [
        [{"approved": True, "remember": {"scope": "thread", "seconds": 600}}],
        [{"approved": True}],
    ]
    # The panel asked for this conversation's grants only, and revoked the one it listed.
    thread = app.posts[0]["threadId"]
    asked = [p for p in app.posts if "threadId" in p and "messages" not in p]
    assert {p["threadId"] for p in asked} == {thread}
    assert [p for p in asked if "revoke" in p] == [{"threadId": thread, "revoke": ANY}]


def test_a_tool_without_allow_remember_never_offers_it_and_a_forced_remember_is_refused(
    tmp_path: Path,
) -> None:
    effects = SideEffects()
    app = _app(effects, allow_remember=False)
    with _asked(tmp_path, app) as (page, card):
        assert card.locator("fieldset.remember").count() == 0
        assert card.get_by_text("don't ask again").count() == 0
        # A page made to send remember anyway: its resume carries it, the server refuses it.
        page.evaluate(
            """() => {
              const send = window.fetch;
              window.fetch = (url, init) => {
                if (init && typeof init.body === "string" && init.body.includes('"resume"')) {
                  const body = JSON.parse(init.body);
                  const remember = { scope: "thread", seconds: 600 };
                  for (const entry of body.resume) entry.payload = { ...entry.payload, remember };
                  init = { ...init, body: JSON.stringify(body) };
                }
                return send(url, init);
              };
            }"""
        )
        card.get_by_role("button", name="Approve delete_file", exact=True).click()
        error = page.get_by_role("alert").filter(has_text="RESUME_INVALID_PAYLOAD")
        error.wait_for()
        assert "The server refused an answer as invalid." in error.inner_text()
        shot(page, tmp_path, "forced-remember-refused.png")
        assert _panel(page).count() == 0
    assert effects.count("delete_file") == 0
    (resume,) = app.resumes()
    assert resume[0]["payload"] == {
        "approved": True,
        "remember": {"scope": "thread", "seconds": 600},
    }


def test_a_grant_s_call_is_shown_escaped_in_the_panel_as_the_card_showed_it(
    tmp_path: Path,
) -> None:
    hostile = f"{VALUE}\u202efdp.exe\x1b[8m"
    effects = SideEffects()
    with serve(_app(effects, hostile)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "tidy up")
        card = _card(page)
        shown = card.locator("pre.call").inner_text()
        assert shown.startswith(f'delete_file(path="notes.txt{SHOWN}\\u202efdp.exe')
        assert shown in card.locator(".remember-covers").inner_text()
        _remember(card, "1 hour")
        page.locator(".tool .result").wait_for()
        panel = _panel(page)
        panel.locator("li.grant").wait_for()
        assert panel.locator(".grant-call").inner_text() == shown
        shot(page, tmp_path, "remembered-hostile-call.png")
        assert_nothing_raw(page, HIDDEN + "\u202e\x1b")
        # A reload lists it again, the same way.
        ready(page, url)
        _panel(page).locator("li.grant").wait_for()
        assert _panel(page).locator(".grant-call").inner_text() == shown
        assert_nothing_raw(page, HIDDEN + "\u202e\x1b")
    assert effects.runs["delete_file"] == [{"path": hostile}]


@pytest.mark.parametrize(
    ("cap", "offered", "seconds"),
    [
        (timedelta(minutes=30), ["10 minutes"], 600),
        (timedelta(minutes=5), ["5 minutes"], 300),
    ],
)
def test_the_durations_offered_stay_within_the_server_s_cap(
    tmp_path: Path, cap: timedelta, offered: list[str], seconds: int
) -> None:
    effects = SideEffects()
    app = _app(effects, max_remember=cap)
    with _asked(tmp_path, app) as (page, card):
        assert _durations(card) == offered
        _remember(card, offered[0])
        page.get_by_text("Done: deleted notes.txt").wait_for()
        _panel(page).locator("li.grant").wait_for()
    assert effects.count("delete_file") == 1
    assert app.resumes()[0][0]["payload"]["remember"] == {"scope": "thread", "seconds": seconds}


def _unreadable_remember(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A pause whose approval offers ``remember`` with no maximum the page can read."""
    ids = {"threadId": data["threadId"], "runId": data["runId"]}
    call = 'delete_file(path="notes.txt")'
    interrupt = {
        "id": "i1",
        "reason": "tool_approval",
        "message": "Approve delete_file?",
        "toolCallId": "c1",
        "responseSchema": {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "remember": {
                    "type": "object",
                    "properties": {"scope": {"enum": ["thread"]}, "seconds": {"type": "number"}},
                },
            },
            "required": ["approved"],
        },
        "metadata": {
            "agui_chat": {
                "shown": {
                    "title": {
                        "text": "Approve delete_file?",
                        "full": "Approve delete_file?",
                        "omitted": 0,
                    },
                    "call": {"text": call, "full": call, "omitted": 0},
                    "tool": {"text": "delete_file", "full": "delete_file", "omitted": 0},
                }
            }
        },
    }
    return [
        {"type": "RUN_STARTED", **ids},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "delete_file"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": json.dumps({"path": "notes.txt"})},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {
            "type": "RUN_FINISHED",
            **ids,
            "outcome": {"type": "interrupt", "interrupts": [interrupt]},
        },
    ]


def test_a_remember_the_page_cannot_read_is_not_offered(tmp_path: Path) -> None:
    with _asked(tmp_path, ScriptedStreamServer(_unreadable_remember), "tidy up") as (_, card):
        card.get_by_role("button", name="Approve delete_file", exact=True).wait_for()
        assert card.locator("fieldset.remember").count() == 0
        assert card.get_by_text("don't ask again").count() == 0
