"""One conversation turn in the terminal: stream the reply, and answer any pause.

The streaming runs through :meth:`CtrlC.run`: Ctrl-C cancels it, which closes the stream
(the server sees the client leave) and raises ``Interrupted`` for the caller to drop the
turn. A stream that shows nothing for a second says it is still connecting.

Everything printed went through the display function (:mod:`agui_chat._display`), whole: the
model's text keeps its lines (indented under ``agent>``, so no line of it passes for a prompt),
anything else is one escaped line. A call that waits for approval is shown once, by its prompt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Container

from .._client import ChatClient
from .._contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
)
from .._display import shown_call, visible
from .._hitl_contents import ToolApprovalRequestContent
from .._messages import ChatMessage
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from ._prompts import Terminal, answer_requests, one_line

#: How long a turn waits for its first update before saying it is still connecting.
CONNECTING_AFTER = 1.0

__all__ = ["Transcript", "take_turn"]


class Transcript:
    """What a conversation showed, for the demo's end-of-run check."""

    def __init__(self) -> None:
        self.tool_results: list[str] = []
        self.requests_answered = 0
        #: Requests declined because the person gave no answer (end of input, Ctrl-C).
        self.requests_unanswered = 0
        self.text = ""


def _printed(content: AIContent) -> bool:
    """Whether the printer shows ``content`` (an error is raised as ``RunError`` at the end of
    the stream and reported once then)."""
    if isinstance(content, (TextContent, TextReasoningContent)):
        return bool(content.text)
    return isinstance(content, FunctionResultContent)


class _Printer:
    """Prints one streamed reply: text inline after ``agent>``, everything else on its own
    indented line. A call is held back until something else is printed or the reply ends,
    so one that ends up waiting for approval is shown by its prompt alone."""

    def __init__(self, term: Terminal, transcript: Transcript) -> None:
        self.term = term
        self.transcript = transcript
        self.in_text = False
        self.calls: list[FunctionCallContent] = []

    def flush(self, asked: Container[str] = ()) -> None:
        """Print the calls held back, except those waiting for approval (``asked``)."""
        calls, self.calls = self.calls, []
        for call in calls:
            if call.call_id not in asked:
                self.line(f"-> {shown_call(call.name, call.arguments).full}")

    def line(self, text: str) -> None:
        if self.in_text:
            self.term.say()
            self.in_text = False
        self.term.say(f"  {text}")

    def text(self, text: str) -> None:
        if not self.in_text:
            self.term.say("agent> ", end="")
            self.in_text = True
        self.term.say(visible(text, multiline=True).replace("\n", "\n       "), end="")
        self.transcript.text += text

    def update(self, update: ChatResponseUpdate) -> None:
        for content in update.contents:
            if isinstance(content, FunctionCallContent):
                self.calls.append(content)
            elif _printed(content):
                self.flush()
                self.content(content)
        event = update.raw_representation
        if isinstance(event, dict) and event.get("type") in ("STATE_SNAPSHOT", "STATE_DELTA"):
            state = (update.additional_properties or {}).get("agui_state")
            self.line(f"state: {one_line(json.dumps(state, ensure_ascii=False))}")

    def content(self, content: AIContent) -> None:
        if isinstance(content, TextContent):
            self.text(content.text)
        elif isinstance(content, TextReasoningContent):
            self.line(f"(thinking) {one_line(content.text)}")
        elif isinstance(content, FunctionResultContent):
            self.line(f"<- {one_line(content.result)}")
            self.transcript.tool_results.append(str(content.result))

    def end(self, asked: Container[str] = ()) -> None:
        self.flush(asked)
        if self.in_text:
            self.term.say()
            self.in_text = False


async def take_turn(
    client: ChatClient,
    history: list[ChatMessage],
    user_text: str,
    term: Terminal,
    transcript: Transcript,
    options: ChatOptions | None = None,
    *,
    echo: bool = True,
    address: str = "the server",
) -> ChatResponse:
    """Send ``user_text``, print the streamed reply, and answer pauses until the run ends.

    ``history`` is extended in place with everything the turn adds; ``echo`` prints the
    user's line first (the demo does; at an interactive prompt the person typed it).
    Raises ``Interrupted`` when Ctrl-C cancelled the streaming (the caller drops the turn).
    """
    history.append(ChatMessage(ChatRole.USER, user_text))
    if echo:
        term.say(f"\nyou> {user_text}")
    while True:
        printer = _Printer(term, transcript)
        response = await term.ctrl_c.run(_stream(client, history, options, printer, address))
        history.extend(response.messages)
        requests = response.input_requests
        if response.finish_reason != ChatFinishReason.INPUT_REQUIRED or not requests:
            return response
        answers, given = await answer_requests(requests, term)
        if given:
            transcript.requests_answered += len(answers)
        else:
            transcript.requests_unanswered += len(answers)
        history.append(ChatMessage(ChatRole.USER, answers))


async def _stream(
    client: ChatClient,
    history: list[ChatMessage],
    options: ChatOptions | None,
    printer: _Printer,
    address: str,
) -> ChatResponse:
    """One request's streamed reply, printed as it comes."""
    loop = asyncio.get_running_loop()
    notice = loop.call_later(CONNECTING_AFTER, lambda: printer.line(f"connecting to {address}…"))
    updates: list[ChatResponseUpdate] = []
    asked: set[str] = set()
    stream = client.get_streaming_response(history, options)
    try:
        async for update in stream:
            notice.cancel()
            printer.update(update)
            updates.append(update)
        response = ChatResponse.from_updates(updates)
        asked = {
            r.tool_call.call_id
            for r in response.input_requests
            if isinstance(r, ToolApprovalRequestContent)
        }
        return response
    finally:
        notice.cancel()
        printer.end(asked)
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
