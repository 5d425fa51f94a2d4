"""The CopilotKit lane's set-up: the page (tests/interop/copilotkit/app.jsx, bundled with the
pinned npm packages by mk/copilotkit.mk into the cache), served with an ``AGUIServer`` from
one origin of 127.0.0.1 (the page posts to ``/agent``: no CORS), and Debian's Chromium
driven by Playwright, as the page's own browser tests do."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
)
from agui_chat.testing import ScriptedChatClient
from real_components import CACHE, missing, require

HERE = Path(__file__).parent / "copilotkit"
#: What the cached page is keyed by (mk/copilotkit.mk hashes the same files, in this order).
KEYED = ("npm/package.json", "npm/package-lock.json", "app.jsx", "build.mjs")
INSTALL = "run `make test-deps` (mk/copilotkit.mk installs CopilotKit and bundles the page)"
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
#: How long a browser step may wait (ms); generous, the machine is shared.
WAIT_MS = 30_000


def page_dir() -> Path:
    """The bundled page in the cache, or skip/fail naming how to make it."""
    digest = hashlib.sha256(b"".join((HERE / f).read_bytes() for f in KEYED)).hexdigest()[:12]
    home = CACHE / "npm" / f"copilotkit-{digest}"
    if not (home / ".installed").exists():
        missing(f"CopilotKit 1.74 and the lane's page ({HERE}) in {home}", INSTALL)
    return home / "page"


class LaneModel:
    """A scripted model: "delete" calls ``delete_file``, "deploy" calls ``deploy``,
    "confirm" calls the page's frontend tool ``confirm_action``; after a tool result it says
    ``Tool said: <result>``, except that "then confirm" asks for ``confirm_action`` once the
    first call's result is in. ``seen`` is every history it got."""

    def __init__(self) -> None:
        self.seen: list[list[ChatMessage]] = []
        self.client = ScriptedChatClient(self._reply, model_id="copilotkit-lane")
        self._n = 0

    def results(self) -> list[str]:
        """The results the model was given for the calls it made, in order, once each."""
        found: dict[str, str] = {}
        for messages in self.seen:
            for m in messages:
                for c in m.contents:
                    if isinstance(c, FunctionResultContent):
                        found.setdefault(c.call_id, str(c.result))
        return list(found.values())

    def _reply(self, messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        self.seen.append(list(messages))
        last = messages[-1]
        results = [c for c in last.contents if isinstance(c, FunctionResultContent)]
        if results:
            asked = next(m.text for m in reversed(messages) if m.role == "user")
            confirmed = any(
                isinstance(c, FunctionCallContent) and c.name == "confirm_action"
                for m in messages
                for c in m.contents
            )
            if "then confirm" in asked and not confirmed:
                self._n += 1
                action = {"action": "restart the web service"}
                return [FunctionCallContent(f"call_{self._n}", "confirm_action", action)]
            return "Tool said: " + "; ".join(str(r.result) for r in results)
        for word, name, arguments in (
            ("delete", "delete_file", {"path": "reports/q3.txt"}),
            ("deploy", "deploy", {"service": "web"}),
            ("confirm", "confirm_action", {"action": "restart the web service"}),
        ):
            if word in last.text:
                self._n += 1
                return [FunctionCallContent(f"call_{self._n}", name, arguments)]
        return f"You said: {last.text}"


class Site:
    """The page's files on ``GET``, the agent (recording each body) on ``POST /agent``."""

    def __init__(self, agent: Any, page: Path) -> None:
        self.agent, self.page = agent, page
        self.posts: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "POST" and scope["path"] == "/agent":
            body, more = b"", True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            self.posts.append(json.loads(body))
            given = False

            async def again() -> Any:
                nonlocal given
                if not given:
                    given = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.agent(scope, again, send)
            return
        name = {"/": "index.html", "/app.js": "app.js"}.get(scope["path"])
        if name is None:
            await _respond(send, 404, b"not found", b"text/plain")
            return
        kind = b"text/html" if name.endswith(".html") else b"text/javascript"
        await _respond(send, 200, (self.page / name).read_bytes(), kind)

    def resumes(self) -> list[list[dict[str, Any]]]:
        return [p["resume"] for p in self.posts if p.get("resume")]


async def _respond(send: Any, status: int, body: bytes, kind: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def browser_page(tmp_path: Path) -> Iterator[Any]:
    """A page of Debian's Chromium (a fresh profile); JavaScript errors the page raises are
    kept in ``page.errors``."""
    executable = require("chromium", "apt-get install chromium (`make test` installs it as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright (Python)", "pip install -e '.[dev]' (make test does it)")
        raise
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=executable,
            headless=True,
            args=LAUNCH_ARGS,
            viewport={"width": 1000, "height": 900},
        )
        try:
            context.set_default_timeout(WAIT_MS)
            page = context.pages[0] if context.pages else context.new_page()
            page.errors = []
            page.on("pageerror", lambda error: page.errors.append(str(error)))
            yield page
            page.screenshot(path=str(tmp_path / "final.png"), full_page=True)
        finally:
            context.close()
