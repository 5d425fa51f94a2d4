"""The CLIENT span of each run ``AGUIChatClient`` makes (``agui/wire/_tracing.py``): the
current span's child, its trace context sent with the request, ending ``success``,
``interrupt``, ``error`` (with the ``RUN_ERROR`` code) or ``cancelled``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

from ..._contents import ErrorContent
from ..._responses import ChatResponseUpdate
from ..._role_and_finish_reason import ChatFinishReason
from ..._streams import close_stream
from ..wire._tracing import RunSpan, start_run_span

Run = Callable[[RunSpan | None], AsyncIterator[ChatResponseUpdate]]
_OUTCOMES = {ChatFinishReason.INPUT_REQUIRED: "interrupt", ChatFinishReason.CANCELLED: "cancelled"}


def traced_stream(endpoint: str, run: Run) -> AsyncIterator[ChatResponseUpdate]:
    """``run(span)``'s stream, inside a CLIENT span when tracing is on (else untouched)."""
    parts = urlsplit(endpoint)
    attributes: dict[str, str | int] = {}
    if parts.hostname:
        attributes["server.address"] = parts.hostname
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
        if port:
            attributes["server.port"] = port
    span = start_run_span("client", None, None, attributes=attributes)
    if span is None:
        return run(None)
    return _follow(span, run(span))


async def _follow(
    span: RunSpan, stream: AsyncIterator[ChatResponseUpdate]
) -> AsyncIterator[ChatResponseUpdate]:
    outcome, code = "success", None
    try:
        with span.ended_if_it_fails(cancelled=GeneratorExit):
            async for update in stream:
                if update.finish_reason is not None:
                    outcome = _OUTCOMES.get(update.finish_reason, outcome)
                for content in update.contents:
                    if isinstance(content, ErrorContent):
                        outcome, code = "error", content.error_code
                yield update
    finally:
        await close_stream(stream)
    span.end(outcome, code)
