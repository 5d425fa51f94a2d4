"""Trace the demo end to end: print the OpenTelemetry trace of a conversation as a text tree.

The agent of ``agui-chat demo`` (its offline model and its two tools, one that needs an
approval and one that asks a question) runs behind an ``AGUIServer`` with
``use_opentelemetry()``, served by uvicorn on 127.0.0.1; an ``AGUIChatClient`` talks to it
over HTTP, approving every request and answering every question. The OpenTelemetry SDK
records the spans in memory (``--console`` also exports each one as JSON to stderr), and the
sample prints them as a tree: client run → server run → model call → tool execution, the
person's events on the runs, and each resumed run's link to the run that paused.

Run it: ``python samples/trace_demo.py`` (needs ``pip install 'agui-chat[otel,server]'``).
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from typing import Any

import uvicorn
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.cli._demo_agent import DEMO_PROMPTS, demo_model, demo_tools
from agui_chat.stores import InMemoryApprovalStore

#: The attributes the tree shows (never content: none is recorded without capture_content).
SHOWN = (
    "agui.run.id",
    "agui.run.outcome",
    "agui.run.error_code",
    "gen_ai.provider.name",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.call.id",
    "agui_chat.tool.outcome",
    "agui_chat.stream.end",
    "error.type",
)


async def converse(url: str) -> None:
    """The demo's two turns, approving and answering everything."""
    history: list[ChatMessage] = []
    async with AGUIChatClient(url, timeout=30) as client:
        for prompt in DEMO_PROMPTS:
            history.append(ChatMessage("user", prompt))
            response = await client.get_response(history)
            history += response.messages
            while response.input_requests:
                answers: list[Any] = []
                for request in response.input_requests:
                    if isinstance(request, ToolApprovalRequestContent):
                        answers.append(request.create_response(True))
                    elif isinstance(request, InterruptRequestContent):
                        answers.append(request.create_response({"build": 42}))
                history.append(ChatMessage("user", answers))
                response = await client.get_response(history)
                history += response.messages
            print(f"user> {prompt}\nassistant> {response.text}")


async def run_demo() -> None:
    model = ChatClientBuilder(demo_model()).use_opentelemetry().build()
    app = AGUIServer(
        model,
        tools=demo_tools(),
        signing_key=secrets.token_bytes(32),  # one process, one run of the sample
        approval_store=InMemoryApprovalStore(),
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    serving = asyncio.ensure_future(server.serve())
    try:
        for _ in range(500):
            if server.started or serving.done():
                break
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        with trace.get_tracer("trace_demo").start_as_current_span("demo conversation"):
            await converse(f"http://127.0.0.1:{port}/")
    finally:
        server.should_exit = True
        await serving


def _describe(span: ReadableSpan) -> str:
    attributes = span.attributes or {}
    shown = [f"{k}={_value(attributes[k])}" for k in SHOWN if k in attributes]
    kind = span.kind.name if span.kind is not None else "?"
    return f"{span.name} [{kind}]" + (f"  {' '.join(shown)}" if shown else "")


def _value(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def tree(spans: list[ReadableSpan]) -> list[str]:
    """The spans as indented lines, children under parents in start order."""
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    names = {span_id: _short(s) for span_id, s in by_id.items()}
    lines: list[str] = []

    def walk(span: ReadableSpan, depth: int) -> None:
        pad = "  " * depth
        lines.append(f"{pad}{_describe(span)}")
        for event in span.events:
            attributes = event.attributes or {}
            details = " ".join(
                f"{k}={attributes[k]}"
                for k in ("gen_ai.tool.call.id", "agui_chat.approval.reason_given")
                if k in attributes
            )
            lines.append(f"{pad}  · {event.name} {details}".rstrip())
        for link in span.links:
            target = names.get(link.context.span_id, f"{link.context.span_id:016x}")
            lines.append(f"{pad}  ↪ links to the paused run {target}")
        for child in sorted(children.get(span.context.span_id, []), key=_start):
            walk(child, depth + 1)

    for root in sorted(children.get(None, []), key=_start):
        walk(root, 0)
    return lines


def _start(span: ReadableSpan) -> int:
    return span.start_time or 0


def _short(span: ReadableSpan) -> str:
    run = (span.attributes or {}).get("agui.run.id")
    return f"{span.name} {run}" if run else span.name


def main() -> int:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if "--console" in sys.argv[1:]:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    trace.set_tracer_provider(provider)
    asyncio.run(run_demo())
    provider.shutdown()
    print()
    print("\n".join(tree(list(memory.get_finished_spans()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
