"""``LoggingChatClient``: log each request and its outcome with the stdlib ``logging``."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from .._client import ChatClient, ChatMessages
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._streams import close_stream
from ._delegating import DelegatingChatClient


class LoggingChatClient(DelegatingChatClient):
    """Logs each call to ``logger`` (default ``agui_chat``): at INFO counts, timings and
    finish reasons (never message text), at DEBUG the messages and response text too,
    failures at WARNING. Below INFO, calls and streams pass through untouched."""

    def __init__(self, inner_client: ChatClient, logger: logging.Logger | None = None) -> None:
        super().__init__(inner_client)
        self.logger = logger or logging.getLogger("agui_chat")

    def _log_request(self, kind: str, messages: ChatMessages) -> None:
        if self.logger.isEnabledFor(logging.DEBUG):
            msgs = as_messages(messages)
            texts = [(m.role.value, m.text) for m in msgs]
            self.logger.debug("%s: %d message(s): %s", kind, len(msgs), texts)
        else:
            count = 1 if isinstance(messages, str) else len(as_messages(messages))
            self.logger.info("%s: %d message(s)", kind, count)

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        if not self.logger.isEnabledFor(logging.INFO):
            return await self.inner_client.get_response(messages, options)
        self._log_request("get_response", messages)
        start = time.perf_counter()
        try:
            response = await self.inner_client.get_response(messages, options)
        except BaseException as exc:
            self.logger.warning("get_response failed: %s", type(exc).__name__)
            raise
        self.logger.info(
            "get_response completed in %.3fs, finish reason %s",
            time.perf_counter() - start,
            response.finish_reason,
        )
        self.logger.debug("get_response text: %r", response.text)
        return response

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        if not self.logger.isEnabledFor(logging.INFO):
            return self.inner_client.get_streaming_response(messages, options)
        self._log_request("get_streaming_response", messages)
        return self._logged_stream(messages, options)

    async def _logged_stream(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        start = time.perf_counter()
        count = 0
        finish = None
        stream = self.inner_client.get_streaming_response(messages, options)
        try:
            async for update in stream:
                count += 1
                finish = update.finish_reason or finish
                yield update
        except GeneratorExit:
            self.logger.info(
                "get_streaming_response stopped by the caller after %d update(s)", count
            )
            raise
        except BaseException as exc:
            self.logger.warning(
                "get_streaming_response failed after %d update(s): %s", count, type(exc).__name__
            )
            raise
        finally:
            await close_stream(stream)
        self.logger.info(
            "get_streaming_response completed in %.3fs: %d update(s), finish reason %s",
            time.perf_counter() - start,
            count,
            finish,
        )
