"""The SERVER span of each run ``AGUIServer`` serves: it continues the client's trace
context, is current while the pipeline runs, links to the runs a resume answers (from the
verified interrupt ids) and ends with the run's outcome and ``RUN_ERROR`` code."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from ag_ui.core import RunAgentInput

from ..wire._tracing import start_run_span
from ._signing import InterruptSigner, TokenError

if TYPE_CHECKING:
    from ._encode import RunEncoder

_EXPIRED = ("APPROVAL_EXPIRED", "INTERRUPT_EXPIRED", "APPROVAL_STALE", "INTERRUPT_STALE")


async def traced_run(
    work: Awaitable[None],
    run_input: RunAgentInput,
    encoder: RunEncoder,
    headers: Iterable[tuple[bytes, bytes]],
    signer: InterruptSigner,
) -> None:
    """Await ``work`` (the run) inside its span, when tracing is on."""
    paused: dict[str | None, None] = {}  # the spans of the runs the resume answers, once each
    for entry in run_input.resume or []:
        with contextlib.suppress(TokenError):
            paused[signer.verify(entry.interrupt_id).traceparent] = None
    links = [traceparent for traceparent in paused if traceparent is not None]
    span = start_run_span(
        "server", run_input.thread_id, run_input.run_id, headers=headers, links=links
    )
    if span is None:
        await work
        return
    span.attach()
    try:
        with span.ended_if_it_fails(cancelled=asyncio.CancelledError):
            await work
    finally:
        span.detach()
    if encoder.error_code in _EXPIRED:
        span.event("agui_chat.request.expired", {"agui.run.error_code": encoder.error_code})
    span.end(encoder.outcome or "success", encoder.error_code)
