"""What the page shows, in a real Chromium: text streaming in as it arrives, reasoning
collapsed, tool calls as cards; and model output (tool arguments, messages, schema
descriptions, interrupt messages) always rendered as text, never as HTML (issue 20)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from browser_support import RecordingModel, open_page, ready, say, serve, shot

from agui_chat import (
    ChatMessage,
    ChatOptions,
    ChatResponseUpdate,
    TextContent,
    TextReasoningContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server

XSS = "<img src=x onerror=window.__xss=1>"


def _server(model: Any, tools: list[Any] = ()) -> AGUIServer:  # type: ignore[assignment]
    return agui_server(model, tools=tools, ui=True).app


class _HeldModel(ScriptedChatClient):
    """Streams reasoning and the first words, then holds until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__(lambda messages, options: "unused")
        self.release = threading.Event()

    async def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        yield ChatResponseUpdate("assistant", [TextReasoningContent("weighing it up")])
        yield ChatResponseUpdate("assistant", [TextContent("Hello ")], message_id="m1")
        await asyncio.to_thread(self.release.wait, 30)
        yield ChatResponseUpdate("assistant", [TextContent("world")], message_id="m1")


def test_text_streams_in_and_reasoning_is_collapsed(tmp_path: Path) -> None:
    model = _HeldModel()
    try:
        with serve(_server(model)) as url, open_page(tmp_path) as page:
            ready(page, url)
            say(page, "hi")
            page.get_by_text("Hello", exact=True).wait_for()  # before the run has ended
            assert page.get_by_role("button", name="Stop").is_visible()
            reasoning = page.locator("details.reasoning")
            assert reasoning.count() == 1
            assert reasoning.evaluate("d => d.open") is False
            assert not page.get_by_text("weighing it up").is_visible()
            shot(page, tmp_path, "streaming.png")
            model.release.set()
            page.get_by_text("Hello world").wait_for()
            page.get_by_text("Reasoning").click()
            assert page.get_by_text("weighing it up").is_visible()
            assert page.get_by_role("button", name="Stop").is_hidden()
    finally:
        model.release.set()


def test_tool_calls_are_cards_with_their_arguments_and_results(tmp_path: Path) -> None:
    @ai_function
    def lookup(city: str) -> str:
        """Weather."""
        return f"sunny in {city}"

    model = RecordingModel({"weather": [("lookup", {"city": "Lyon"})]})
    with serve(_server(model.client, [lookup])) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "weather?")
        page.get_by_text("Done: sunny in Lyon").wait_for()
        card = page.get_by_role("region", name="Tool call lookup")
        # Shown once, in the consent engine's words: the call as it ran, then its result.
        assert card.locator(".args").inner_text() == 'lookup(city="Lyon")'
        assert card.locator(".result").inner_text() == "sunny in Lyon"
        assert card.locator(".tool-status").inner_text() == "Ran."
        shot(page, tmp_path, "tool-card.png")


def test_model_output_is_rendered_as_text_never_as_html(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "title": XSS,
        "properties": {
            "choice": {"enum": [XSS, "plain"], "description": XSS, "title": XSS},
            "why": {"type": "string", "description": XSS},
        },
        "required": ["choice"],
    }

    @approval_required
    @ai_function
    def remove(path: str) -> str:
        """Remove."""
        return f"removed {path}"

    @ai_function
    def ask(topic: str) -> str:
        """Ask."""
        answer = request_input(f"Pick one {XSS}", response_schema=schema)
        return f"picked {answer.payload}"

    def reply(messages: list[ChatMessage], options: Any) -> Any:
        from agui_chat import FunctionCallContent, FunctionResultContent

        last = messages[-1]
        if any(isinstance(c, FunctionResultContent) for c in last.contents):
            return f"Finished {XSS}"
        return [
            TextContent(f"Echo: {last.text}"),
            FunctionCallContent("c1", "remove", {"path": XSS}),
            FunctionCallContent("c2", "ask", {"topic": XSS}),
        ]

    server = _server(ScriptedChatClient(reply), [remove, ask])
    with serve(server) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, f"hello {XSS}")
        page.locator("section.card").nth(1).wait_for()
        page.get_by_text(f"Echo: hello {XSS}").wait_for()
        approval = page.locator("section.card.approval")
        assert XSS in approval.locator(".call").inner_text()
        question = page.locator("section.card.question")
        assert question.get_by_text(f"Pick one {XSS}").is_visible()
        assert question.get_by_text(XSS, exact=True).first.is_visible()  # a description
        shot(page, tmp_path, "escaped.png")
        assert page.locator("img").count() == 0
        approval.get_by_role("button", name="Approve remove").click()
        question.get_by_label(f"{XSS} (required)").select_option(label=XSS)
        question.get_by_role("button", name="Send answer").click()
        page.get_by_text(f"Finished {XSS}").wait_for()
        assert page.locator("img").count() == 0
        assert page.evaluate("window.__xss") is None
