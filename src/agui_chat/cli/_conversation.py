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


def _render(update: ChatResponseUpdate, term: Terminal, transcript: Transcript) -> None:
    for content in update.contents:
        if isinstance(content, TextContent):
            term.say(content.text, end="")
            transcript.text += content.text
        elif isinstance(content, TextReasoningContent) and content.text:
            term.say(f"\n  (thinking) {content.text}")
        elif isinstance(content, FunctionCallContent):
            args = json.dumps(content.arguments or {}, ensure_ascii=False)
            term.say(f"\n  -> {content.name}({args})")
        elif isinstance(content, FunctionResultContent):
            term.say(f"  <- {content.result}")
            transcript.tool_results.append(str(content.result))
        elif isinstance(content, ErrorContent):
            term.say(f"\n  error: {content.message}")
    event = update.raw_representation
    if isinstance(event, dict) and event.get("type") in ("STATE_SNAPSHOT", "STATE_DELTA"):
        state = (update.additional_properties or {}).get("agui_state")
        term.say(f"\n  state: {json.dumps(state, ensure_ascii=False)}")


async def take_turn(
    client: ChatClient,
    history: list[ChatMessage],
    user_text: str,
    term: Terminal,
    transcript: Transcript,
    options: ChatOptions | None = None,
) -> ChatResponse:
    """Send ``user_text``, print the streamed reply, and answer pauses until the run ends.

    ``history`` is extended in place with everything the turn adds.
    """
    history.append(ChatMessage(ChatRole.USER, user_text))
    term.say(f"\nyou> {user_text}")
    while True:
        term.say("agent> ", end="")
        updates: list[ChatResponseUpdate] = []
        async for update in client.get_streaming_response(history, options):
            _render(update, term, transcript)
            updates.append(update)
        term.say()
        response = ChatResponse.from_updates(updates)
        history.extend(response.messages)
        requests = response.input_requests
        if response.finish_reason != ChatFinishReason.INPUT_REQUIRED or not requests:
            return response
        answers = answer_requests(requests, term)
        transcript.requests_answered += len(answers)
        history.append(ChatMessage(ChatRole.USER, answers))
