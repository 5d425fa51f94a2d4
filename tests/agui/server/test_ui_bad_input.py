"""The page when things go wrong, in a real Chromium: a stream it cannot read, a server that
is not AG-UI, a server that goes away and comes back, a run that fails; each is said in
words and the thread is kept (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from browser_support import RecordingModel, open_page, read_body, ready, replay, say, serve, shot

from agui_chat import ChatClientError
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server


def _server(model: Any) -> AGUIServer:
    return agui_server(model, ui=True).app


class _Breaker:
    """Serves ``app``, except that a POST whose last message says "break" gets a stream
    that starts a run and then sends an event that is not JSON."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        data = json.loads(body)
        if "break" not in str(data["messages"][-1].get("content")):
            await self.app(scope, replay(body, receive), send)
            return
        started = {"type": "RUN_STARTED", "threadId": data["threadId"], "runId": data["runId"]}
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        chunk = f"data: {json.dumps(started)}\n\ndata: {{not json at all\n\n".encode()
        await send({"type": "http.response.body", "body": chunk, "more_body": False})


class _NotAGUI:
    """GET is the page; POST answers an ordinary HTML page, as a misconfigured proxy would."""

    def __init__(self, page_server: AGUIServer) -> None:
        self.page_server = page_server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = [(b"content-type", b"text/html; charset=utf-8")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            html = b"<html><body><h1>Welcome to nginx!</h1></body></html>"
            await send({"type": "http.response.body", "body": html})
            return
        await self.page_server(scope, receive, send)


def _echo() -> Any:
    return RecordingModel({}).client


def test_an_unreadable_stream_shows_the_error_and_keeps_the_thread(tmp_path: Path) -> None:
    with serve(_Breaker(_server(_echo()))) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "hello")
        page.get_by_text("You said: hello").wait_for()
        say(page, "break it")
        alert = page.get_by_role("alert")
        alert.get_by_text("could not be read").wait_for()
        shot(page, tmp_path, "unreadable.png")
        assert page.get_by_text("You said: hello").is_visible()
        assert page.get_by_label("Message", exact=True).input_value() == "break it"
        ready(page, url)  # the kept thread survives a reload, without the broken run
        page.get_by_text("You said: hello").wait_for()
        assert page.locator("article.msg.user").count() == 1
        say(page, "hello again")
        page.get_by_text("You said: hello again").wait_for()


def test_a_server_that_is_not_ag_ui_is_reported_as_such(tmp_path: Path) -> None:
    with serve(_NotAGUI(_server(_echo()))) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "hello")
        alert = page.get_by_role("alert")
        alert.get_by_text("is not an AG-UI agent: it answered with an HTML page").wait_for()
        shot(page, tmp_path, "not-ag-ui.png")
        assert page.get_by_text("Welcome to nginx").count() == 0


def test_an_unreachable_server_says_so_and_the_page_reconnects(tmp_path: Path) -> None:
    app = _server(_echo())
    with open_page(tmp_path) as page:
        with serve(app) as url:
            ready(page, url)
            say(page, "hello")
            page.get_by_text("You said: hello").wait_for()
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        say(page, "are you there?")
        page.get_by_role("alert").get_by_text("cannot be reached").wait_for()
        page.get_by_text("Reconnecting to the agent server").wait_for()
        shot(page, tmp_path, "unreachable.png")
        assert page.get_by_text("You said: hello").is_visible()
        with serve(app, port=port):
            page.get_by_text("reachable again").wait_for()
            say(page, "are you there?")
            page.get_by_text("You said: are you there?").wait_for()
            shot(page, tmp_path, "reconnected.png")


def test_a_failed_run_is_said_in_words(tmp_path: Path) -> None:
    def failing(messages: Any, options: Any) -> Any:
        raise ChatClientError("upstream said: secret-token-123")

    with serve(_server(ScriptedChatClient(failing))) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "hello")
        alert = page.get_by_role("alert")
        alert.get_by_text("The model service failed. Try again in a moment.").wait_for()
        assert "MODEL_ERROR" in alert.inner_text()
        assert "secret-token-123" not in page.content()
        shot(page, tmp_path, "run-error.png")
        assert page.get_by_text("hello", exact=True).is_visible()
