"""With the base install (``opentelemetry-api``, no SDK): the package, the tool loop and the
AG-UI client and server work untraced, a pause is not stamped, ``agui_chat.otel`` and
``use_opentelemetry()`` work, and ``configure_export`` fails with one line naming the extra.
An expired answer is an event on the current span."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ExpiredRequestError,
    FunctionCallContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    ai_function,
    approval_required,
)
from agui_chat.testing import ScriptedChatClient


def test_with_the_api_alone_nothing_traces_and_the_export_names_the_extra() -> None:
    script = textwrap.dedent(
        """
        import sys
        for name in ("opentelemetry.sdk", "opentelemetry.exporter"):
            sys.modules[name] = None  # as if the [otel] extra were not installed
        import asyncio
        import httpx
        from agui_chat import (ChatClientBuilder, FunctionCallContent, ai_function,
                               approval_required, ChatOptions)
        from agui_chat.agui import AGUIChatClient, AGUIServer
        from agui_chat.testing import ScriptedChatClient

        @ai_function
        def add(a: int, b: int) -> int:
            "Add."
            return a + b

        @approval_required
        @ai_function
        def deploy() -> str:
            "Deploy."
            return "deployed"

        def model(messages, options):
            if messages[-1].role == "tool":
                return f"sum {messages[-1].contents[0].result}"
            return [FunctionCallContent("c1", "add", {"a": 2, "b": 3})]

        from agui_chat.stores import InMemoryApprovalStore

        server = AGUIServer(
            ScriptedChatClient(model),
            tools=[add],
            signing_key=b"k" * 32,
            approval_store=InMemoryApprovalStore(),
        )

        async def main():
            http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://localhost")
            async with AGUIChatClient("http://localhost/", http_client=http) as client:
                print((await client.get_response("add")).text)
            calls = ScriptedChatClient(lambda m, o: [FunctionCallContent("d1", "deploy", {})])
            traced = (
                ChatClientBuilder(calls)
                .use_function_invocation()
                .use_opentelemetry(capture_content=True)
                .build()
            )
            paused = await traced.get_response("go", ChatOptions(tools=[deploy]))
            [request] = paused.input_requests
            print(request.additional_properties)
        asyncio.run(main())
        from agui_chat.otel import OpenTelemetryChatClient, configure_export
        try:
            configure_export()
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        "sum 5",
        "None",  # no SDK: the request carries no time and no traceparent
        "exporting telemetry needs opentelemetry-sdk: pip install 'agui-chat[otel]'",
    ]


async def test_an_expired_answer_is_an_event(otel: Recorded) -> None:
    client = (
        ChatClientBuilder(ScriptedChatClient(lambda m, o: "never"))
        .use_function_invocation()
        .use_opentelemetry(**otel.providers)
        .build()
    )
    call = FunctionCallContent("c1", "deploy", {"target": "prod"})
    past = datetime.now(timezone.utc) - timedelta(minutes=1)
    request = ToolApprovalRequestContent("approval_c1", call, expires_at=past)
    history = [
        ChatMessage("user", "deploy"),
        ChatMessage("assistant", [request]),
        ChatMessage("user", [ToolApprovalResponseContent("approval_c1", True, call)]),
    ]

    @approval_required
    @ai_function
    def deploy(target: str) -> str:
        "Deploy."
        raise AssertionError("an expired approval must run nothing")

    tracer = otel.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("turn"), pytest.raises(ExpiredRequestError):
        await client.get_response(history, ChatOptions(tools=[deploy]))
    [turn] = otel.spans("turn")
    [span] = otel.spans("orchestrate_tools")  # the request's span, under the caller's
    assert span.parent is not None and span.parent.span_id == turn.context.span_id
    assert [(e.name, dict(e.attributes or {})) for e in span.events] == [
        ("agui_chat.request.expired", {"agui_chat.request.id": "approval_c1"})
    ]
    assert (span.attributes or {})["error.type"] == "ExpiredRequestError"
