"""Helpers for the browser tests of the page ``AGUIServer(ui=True)`` serves: uvicorn on
127.0.0.1 in a thread, Debian's Chromium driven by Playwright for Python (through
``executable_path``: no browser download), and a scripted model that records what it got."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
)
from agui_chat.testing import ScriptedChatClient
from live_uvicorn import serve
from real_components import missing, require

__all__ = [
    "LAUNCH_ARGS",
    "Recorder",
    "RecordingModel",
    "ScriptedStreamServer",
    "assert_nothing_raw",
    "open_page",
    "ready",
    "say",
    "serve",
]

#: How Chromium is started: headless, no sandbox (root in CI), and nothing that would reach
#: the network by itself.
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_HINT = "apt-get install chromium (`make test` installs it when run as root)"
#: How long a browser step may wait for the page (ms); generous, the machine is shared.
WAIT_MS = 20_000


@contextmanager
def open_page(
    tmp_path: Path,
    *,
    width: int = 900,
    height: int = 800,
    args: tuple[str, ...] = (),
    **options: Any,
) -> Iterator[Any]:
    """A page of a Chromium with a fresh profile under ``tmp_path`` (``args``: more
    command-line switches; ``options``: more of Playwright's context options, such as
    ``timezone_id``); any JavaScript error the page raises fails the test."""
    executable = require("chromium", CHROMIUM_HINT)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright (Python)", "pip install -e '.[dev]' (make test does it)")
        raise
    errors: list[str] = []
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=executable,
            headless=True,
            args=[*LAUNCH_ARGS, *args],
            viewport={"width": width, "height": height},
            **options,
        )
        try:
            context.set_default_timeout(WAIT_MS)
            page = context.pages[0] if context.pages else context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            yield page
            page.screenshot(path=str(tmp_path / "final.png"), full_page=True)
        finally:
            context.close()
    assert not errors, f"the page raised: {errors}"


def ready(page: Any, url: str) -> None:
    """Open the page at ``url`` and wait until its script has started."""
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")


def say(page: Any, text: str) -> None:
    """Type a message into the page and send it."""
    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


class RecordingModel:
    """A scripted model: ``calls`` maps a word of the user's message to the tool calls to
    make (name, arguments); a tool result gets ``"Done: <results>"``. ``seen`` is every
    list of messages it was called with."""

    def __init__(self, calls: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
        self.calls = calls
        self.seen: list[list[ChatMessage]] = []
        self.client = ScriptedChatClient(self._reply, model_id="ui-test")
        self._n = 0

    def results(self) -> list[str]:
        """Every tool result the model was given, as text."""
        return [
            str(c.result)
            for messages in self.seen
            for m in messages
            for c in m.contents
            if isinstance(c, FunctionResultContent)
        ]

    def _reply(self, messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        self.seen.append(list(messages))
        last = messages[-1]
        results = [c for c in last.contents if isinstance(c, FunctionResultContent)]
        if results:
            return "Done: " + "; ".join(str(r.result) for r in results)
        for word, calls in self.calls.items():
            if word in last.text:
                contents: list[Any] = [TextContent(f"Working on {word}. ")]
                for name, arguments in calls:
                    self._n += 1
                    contents.append(FunctionCallContent(f"call_{self._n}", name, arguments))
                return contents
        return f"You said: {last.text}"


class Recorder:
    """An ASGI wrapper that keeps the JSON body of every POST (what the page sent)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[dict[str, Any]] = []

    def resumes(self) -> list[list[dict[str, Any]]]:
        """The ``resume`` list of every POST that carried one."""
        return [p["resume"] for p in self.posts if p.get("resume")]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        self.posts.append(json.loads(body))
        await self.app(scope, replay(body, receive), send)


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI request."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return bytes(body)


def replay(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that gives ``body`` once, then whatever ``receive`` gives."""
    given = False

    async def again() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


class ScriptedStreamServer:
    """A hostile AG-UI server for the page: the page and its display requests from a real
    ``AGUIServer(ui=True)``; every run answered with the events ``stream(run_input)`` gives,
    whatever they hold."""

    def __init__(self, stream: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> None:
        from agui_server import agui_server

        self.page = agui_server(RecordingModel({}).client, ui=True).app
        self.stream = stream

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["query_string"]:
            await self.page(scope, receive, send)
            return
        body = await read_body(receive)
        data = json.loads(body)
        if not data.get("messages"):
            await self.page(scope, replay(body, receive), send)
            return
        events = self.stream(data)
        stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": stream})


def assert_nothing_raw(page: Any, chars: str) -> None:
    """None of ``chars`` is in the page's text as it is (each must be shown escaped)."""
    text = page.locator("body").inner_text()
    for char in chars:
        assert char not in text, f"U+{ord(char):04X} reached the page raw"


def shot(page: Any, folder: Path, name: str) -> None:
    """A full-page screenshot ``name`` in the test's temporary folder (the composer, which
    sticks to the bottom of the window, is put back in the flow for it)."""
    footer = "document.querySelector('footer').style.position"
    page.evaluate(f"{footer} = 'static'")
    page.screenshot(path=str(folder / name), full_page=True)
    page.evaluate(f"{footer} = ''")
