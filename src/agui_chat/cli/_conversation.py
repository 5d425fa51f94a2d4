"""One conversation turn in the terminal: stream the reply, and answer any pause."""

from __future__ import annotations

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
from .._values import ChatFinishReason, ChatRole
from ._prompts import Terminal, answer_requests

__all__ = ["Transcript", "take_turn"]


class Transcript:
    """What a conversation showed, for the demo's end-of-run check."""

    def __init__(self) -> None:
        self.tool_results: list[str] = []
        self.requests_answered = 0
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
                self.line(f"error: {content.message}")
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
) -> ChatResponse:
    """Send ``user_text``, print the streamed reply, and answer pauses until the run ends.

    ``history`` is extended in place with everything the turn adds; ``echo`` prints the
    user's line first (the demo does; at an interactive prompt the person typed it).
    """
    history.append(ChatMessage(ChatRole.USER, user_text))
    if echo:
        term.say(f"\nyou> {user_text}")
    while True:
        printer = _Printer(term, transcript)
        updates: list[ChatResponseUpdate] = []
        async for update in client.get_streaming_response(history, options):
            printer.update(update)
            updates.append(update)
        printer.end()
        response = ChatResponse.from_updates(updates)
        history.extend(response.messages)
        requests = response.input_requests
        if response.finish_reason != ChatFinishReason.INPUT_REQUIRED or not requests:
            return response
        answers = answer_requests(requests, term)
        transcript.requests_answered += len(answers)
        history.append(ChatMessage(ChatRole.USER, answers))
