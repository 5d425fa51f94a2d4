"""A card whose run the person stopped says it was cancelled (issue 25 item 2), in a real
Chromium: Stop while a tool runs, on a first run and on the run an approval resumed. The
card neither vanishes, nor waits for an approval again, nor says it ran; what streamed
before the Stop is kept, and the conversation goes on."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from browser_support import RecordingModel, open_page, ready, say, serve, shot

from agui_chat import ai_function, approval_required
from agui_server import agui_server

STOPPED = "Cancelled: you stopped the run before its result came back."


class _Held:
    """Tools that block until ``release`` is set; ``started`` counts their starts."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started: list[str] = []

        @ai_function
        async def slow_lookup(q: str) -> str:
            """Look something up, slowly."""
            self.started.append(f"lookup {q}")
            await asyncio.to_thread(self.release.wait, 30)
            return f"found {q}"

        @approval_required
        @ai_function
        async def slow_delete(path: str) -> str:
            """Delete a file, slowly."""
            self.started.append(f"delete {path}")
            await asyncio.to_thread(self.release.wait, 30)
            return f"deleted {path}"

        self.tools = [slow_lookup, slow_delete]

    def __enter__(self) -> _Held:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release.set()  # before the server stops, whatever happened


def _app(held: _Held) -> Any:
    model = RecordingModel(
        {"look": [("slow_lookup", {"q": "x"})], "tidy": [("slow_delete", {"path": "a.txt"})]}
    )
    return agui_server(model.client, tools=held.tools, ui=True).app


def _stop_and_see_cancelled(page: Any) -> Any:
    page.locator(".tool[data-state=running]").wait_for()
    page.get_by_role("button", name="Stop").click()
    card = page.locator(".tool[data-state=cancelled]")
    card.wait_for()
    assert card.locator(".tool-status").inner_text() == STOPPED
    assert "You stopped the run." in page.get_by_role("status").first.inner_text()
    return card


def test_stop_while_a_tool_runs_says_its_card_was_cancelled(tmp_path: Path) -> None:
    held = _Held()
    with serve(_app(held)) as url, open_page(tmp_path) as page, held:
        ready(page, url)
        say(page, "look it up")
        card = _stop_and_see_cancelled(page)
        # What streamed is kept: the model's words and the call as it was made.
        page.get_by_text("Working on look.").wait_for()
        card.locator(".args").get_by_text('slow_lookup(q="x")').wait_for()
        assert page.get_by_role("alert").is_hidden()  # a stop is not an error
        shot(page, tmp_path, "stopped.png")
        held.release.set()
        say(page, "hello")
        page.get_by_text("You said: hello").wait_for()
        assert card.locator(".tool-status").inner_text() == STOPPED
    assert held.started == ["lookup x"]


def test_stop_after_an_approval_says_cancelled_and_asks_nothing_again(tmp_path: Path) -> None:
    held = _Held()
    with serve(_app(held)) as url, open_page(tmp_path) as page, held:
        ready(page, url)
        say(page, "tidy up")
        approval = page.get_by_role("group", name="Approve slow_delete?")
        approval.get_by_role("button", name="Approve slow_delete").click()
        _stop_and_see_cancelled(page)
        assert page.get_by_role("group", name="Approve slow_delete?").count() == 0
        assert page.locator(".tool[data-state=waiting], .tool[data-state=ran]").count() == 0
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        status = page.locator(".tool .tool-status")
        status.wait_for()
        assert status.inner_text() == STOPPED  # kept across a reload
        shot(page, tmp_path, "stopped-after-approval.png")
    assert held.started == ["delete a.txt"]
