"""The SERVER span of each run ``AGUIServer`` serves: it continues the client's trace
context, is current while the pipeline runs, links to the runs a resume answers (from the
verified interrupt ids) and ends with the run's outcome and ``RUN_ERROR`` code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from ag_ui.core import RunAgentInput

from ..wire._tracing import start_run_span

if TYPE_CHECKING:
    from ._encode import RunEncoder

_EXPIRED = ("APPROVAL_EXPIRED", "INTERRUPT_EXPIRED", "APPROVAL_STALE", "INTERRUPT_STALE")


async def traced_run(
    work: Awaitable[None],
    run_input: RunAgentInput,
    encoder: RunEncoder,
    headers: Iterable[tuple[bytes, bytes]],
    paused: Iterable[str] = (),
) -> None:
    """Await ``work`` (the run) inside its span, when tracing is on; ``paused``: the spans
    of the runs the resume answers (from its verified interrupt ids)."""
    links = list(dict.fromkeys(paused))
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
