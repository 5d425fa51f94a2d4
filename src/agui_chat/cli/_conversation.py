"""One conversation turn in the terminal: stream the reply, and answer any pause.

The streaming runs through :meth:`CtrlC.run`: Ctrl-C cancels it, which closes the stream
(the server sees the client leave) and raises ``Interrupted`` for the caller to drop the
turn. A stream that shows nothing for a second says it is still connecting.
"""

from __future__ import annotations

import asyncio
import json

from .._client import ChatClient
from .._contents import (
    ErrorContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
)
from .._messages import ChatMessage
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from ._prompts import Terminal, answer_requests

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


class _Printer:
    """Prints one streamed reply: text inline after ``agent>``, everything else on its own
    indented line."""

    def __init__(self, term: Terminal, transcript: Transcript) -> None:
        self.term = term
        self.transcript = transcript
        self.in_text = False

    def line(self, text: str) -> None:
        if self.in_text:
            self.term.say()
            self.in_text = False
        self.term.say(f"  {text}")

    def text(self, text: str) -> None:
        if not self.in_text:
            self.term.say("agent> ", end="")
            self.in_text = True
        self.term.say(text, end="")
        self.transcript.text += text

    def update(self, update: ChatResponseUpdate) -> None:
        for content in update.contents:
            if isinstance(content, TextContent):
                self.text(content.text)
            elif isinstance(content, TextReasoningContent) and content.text:
                self.line(f"(thinking) {content.text}")
            elif isinstance(content, FunctionCallContent):
                args = json.dumps(content.arguments or {}, ensure_ascii=False)
                self.line(f"-> {content.name}({args})")
            elif isinstance(content, FunctionResultContent):
                self.line(f"<- {content.result}")
                self.transcript.tool_results.append(str(content.result))
            elif isinstance(content, ErrorContent):
                pass  # raised as RunError at the end of the stream, and reported once then
        event = update.raw_representation
        if isinstance(event, dict) and event.get("type") in ("STATE_SNAPSHOT", "STATE_DELTA"):
            state = (update.additional_properties or {}).get("agui_state")
            self.line(f"state: {json.dumps(state, ensure_ascii=False)}")

    def end(self) -> None:
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
    stream = client.get_streaming_response(history, options)
    try:
        async for update in stream:
            notice.cancel()
            printer.update(update)
            updates.append(update)
    finally:
        notice.cancel()
        printer.end()
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    return ChatResponse.from_updates(updates)
