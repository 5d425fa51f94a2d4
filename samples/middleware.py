"""Composing delegating middleware: logging, retry, option defaults and a custom one.

A custom middleware is a ``DelegatingChatClient`` subclass that overrides what it changes —
here one that redacts e-mail addresses before they reach the model. ``ChatClientBuilder``
stacks them; the first one added is the outermost. The "model" fails once with a transient
error to show the retry middleware at work. Offline; run it with ``python samples/middleware.py``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Sequence

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    DelegatingChatClient,
    ServiceUnavailableError,
)
from agui_chat.testing import ScriptedChatClient

#: What a chat client accepts as ``messages``: one user message as text, or messages.
Messages = str | ChatMessage | Sequence[ChatMessage]

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


class RedactingChatClient(DelegatingChatClient):
    """Replaces e-mail addresses in user messages with ``[email]`` before the model sees them."""

    def _redact(self, messages: Messages) -> list[ChatMessage]:
        if isinstance(messages, str):
            messages = [ChatMessage("user", messages)]
        elif isinstance(messages, ChatMessage):
            messages = [messages]
        return [
            ChatMessage(m.role, EMAIL.sub("[email]", m.text)) if m.role == "user" else m
            for m in messages
        ]

    async def _get_response(self, messages: Messages, options: ChatOptions | None) -> ChatResponse:
        # The hook under get_response, which adds response_format= / retries= on top.
        return await self.inner_client.get_response(self._redact(messages), options)

    def get_streaming_response(
        self, messages: Messages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner_client.get_streaming_response(self._redact(messages), options)


def flaky_model() -> ScriptedChatClient:
    """Fails with a transient error on the first call, then echoes what it was told."""
    calls = {"n": 0}

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ServiceUnavailableError("model overloaded", status_code=503, retry_after=0.01)
        temperature = options.temperature if options else None
        return f"(temperature {temperature}) You said: {messages[-1].text}"

    return ScriptedChatClient(reply)


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format="  log: %(name)s: %(message)s")

    def defaults(options: ChatOptions) -> None:
        if options.temperature is None:
            options.temperature = 0.2

    client = (
        ChatClientBuilder(flaky_model())
        .use_logging()  # outermost: sees every call once
        .use_retry(max_attempts=3, initial_delay=0.01)
        .configure_options(defaults)
        .use(RedactingChatClient)  # innermost: right before the model
        .build()
    )
    response = await client.get_response("Write to jane.doe@example.com about the launch.")
    print(response.text)


if __name__ == "__main__":
    asyncio.run(main())
