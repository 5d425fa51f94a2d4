"""One trace across the AG-UI wire (uvicorn on 127.0.0.1, the real SDK): the client's run
span → the server's run span → model calls and tool executions, the approval's events, and
a link from the resumed run to the run that paused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    RunError,
    ServiceUnavailableError,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server

DEPLOYS: list[str] = []


@approval_required
@ai_function
def deploy(target: str) -> str:
    "Deploy to a target."
    DEPLOYS.append(target)
    return f"deployed {target}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    if messages[-1].role == "tool":
        return "Deployed."
    return [FunctionCallContent("call-1", "deploy", {"target": "prod"})]


@pytest.fixture
async def served() -> AsyncIterator[Any]:
    servers: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def serve(app: Any) -> str:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        for _ in range(500):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        assert server.started
        servers.append((server, task))
        return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/"

    yield serve
    for server, task in servers:
        server.should_exit = True
        await task


def _server(otel: Recorded, **kw: Any) -> AGUIServer:
    pipeline = (
        ChatClientBuilder(ScriptedChatClient(model))
        .use_function_invocation()
        .use_opentelemetry(**otel.providers, **kw)
        .build()
    )
    return agui_server(pipeline, tools=[deploy]).app


def _by_name(spans: list[ReadableSpan], name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name and s.kind is kind]


async def test_an_approval_round_trip_is_one_trace_with_a_link(
    global_otel: Recorded, served: Any
) -> None:
    url = await served(_server(global_otel))
    tracer = global_otel.tracer_provider.get_tracer("test")
    async with AGUIChatClient(url, timeout=10, max_retries=0) as client:
        with tracer.start_as_current_span("conversation") as root:
            history = [ChatMessage("user", "deploy prod")]
            paused = await client.get_response(history, ChatOptions())
            [request] = paused.input_requests
            history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
            done = await client.get_response(history, ChatOptions())
    assert done.text == "Deployed."
    assert DEPLOYS == ["prod"]

    spans = global_otel.spans()
    trace_id = root.get_span_context().trace_id
    assert {s.context.trace_id for s in spans if s.name != "conversation"} == {trace_id}
    client_runs = _by_name(spans, "agui.run", SpanKind.CLIENT)
    server_runs = _by_name(spans, "agui.run", SpanKind.SERVER)
    assert len(client_runs) == len(server_runs) == 2
    by_id = {s.context.span_id: s for s in spans}
    for client_run, server_run in zip(
        sorted(client_runs, key=lambda s: s.start_time or 0),
        sorted(server_runs, key=lambda s: s.start_time or 0),
        strict=True,
    ):
        assert (
            client_run.parent is not None
            and client_run.parent.span_id == root.get_span_context().span_id
        )
        assert (
            server_run.parent is not None
            and server_run.parent.span_id == client_run.context.span_id
        )
        assert server_run.parent.is_remote
        assert (server_run.attributes or {})["agui.run.id"] == (client_run.attributes or {})[
            "agui.run.id"
        ]
    first, second = sorted(server_runs, key=lambda s: s.start_time or 0)
    assert (first.attributes or {})["agui.run.outcome"] == "interrupt"
    assert (second.attributes or {})["agui.run.outcome"] == "success"
    outcomes = sorted((c.attributes or {})["agui.run.outcome"] for c in client_runs)
    assert outcomes == ["interrupt", "success"]

    # the model calls and the tool execution are children of the server runs
    chats = [s for s in spans if s.name == "chat scripted"]
    assert len(chats) == 2
    assert chats[0].parent is not None and chats[0].parent.span_id == first.context.span_id
    [tool] = [s for s in spans if s.name == "execute_tool deploy"]
    assert tool.parent is not None and by_id[tool.parent.span_id] is second
    assert (tool.attributes or {})["agui_chat.tool.outcome"] == "ran"

    # the run span stands for the request: the tool loop opens no span of its own under it
    assert [s for s in spans if s.name == "orchestrate_tools"] == []

    # the person's part, on the runs' spans
    assert [e.name for e in first.events] == ["agui_chat.approval.requested"]
    assert [e.name for e in second.events] == ["agui_chat.approval.approved"]
    approved = dict(second.events[0].attributes or {})
    assert approved["gen_ai.tool.call.id"] == "call-1"
    assert approved["agui_chat.approval.reason_given"] is False
    assert approved["agui_chat.decision.seconds"] >= 0

    # the resumed run links to the run that paused (the link came back in the interrupt id)
    [link] = second.links
    assert link.context.span_id == first.context.span_id
    assert link.context.trace_id == first.context.trace_id
    [point] = global_otel.points("agui_chat.approvals")
    assert point.attributes == {"agui_chat.decision": "approved"} and point.value == 1


async def test_a_failed_run_is_an_error_on_both_sides_with_its_code(
    global_otel: Recorded, served: Any
) -> None:
    def broken(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ServiceUnavailableError("model down", status_code=503)

    pipeline = (
        ChatClientBuilder(ScriptedChatClient(broken))
        .use_opentelemetry(**global_otel.providers)
        .build()
    )
    app = agui_server(pipeline).app
    url = await served(app)
    async with AGUIChatClient(url, timeout=10, max_retries=0) as client:
        with pytest.raises(RunError):
            await client.get_response("hello")
    spans = global_otel.spans()
    [server_run] = _by_name(spans, "agui.run", SpanKind.SERVER)
    [client_run] = _by_name(spans, "agui.run", SpanKind.CLIENT)
    for run in (server_run, client_run):
        a = dict(run.attributes or {})
        assert a["agui.run.outcome"] == "error", run.kind
        assert run.status.status_code is StatusCode.ERROR
    assert (server_run.attributes or {})["agui.run.error_code"] == "MODEL_ERROR"
    assert (server_run.attributes or {})["error.type"] == "MODEL_ERROR"
    [chat] = [s for s in spans if s.name.startswith("chat")]
    assert (chat.attributes or {})["error.type"] == "ServiceUnavailableError"
    assert chat.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize("capture", [False, True])
async def test_the_persons_events_in_process_are_those_over_ag_ui(
    global_otel: Recorded, served: Any, capture: bool
) -> None:
    """The same approval round trip over AG-UI and in process: the same events, with the
    same attribute names, only on different spans (the run's, the request's)."""

    async def round_trip(client: Any, options: ChatOptions) -> None:
        history = [ChatMessage("user", "deploy prod")]
        paused = await client.get_response(history, options)
        [request] = paused.input_requests
        history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
        assert (await client.get_response(history, options)).text == "Deployed."

    def events(spans: list[ReadableSpan]) -> list[tuple[str, list[str]]]:
        return [(e.name, sorted(e.attributes or {})) for s in spans for e in s.events]

    kw = {"capture_content": capture}
    url = await served(_server(global_otel, **kw))
    async with AGUIChatClient(url, timeout=10, max_retries=0) as client:
        await round_trip(client, ChatOptions())  # the server has the tool
    over_ag_ui = events(_by_name(global_otel.spans(), "agui.run", SpanKind.SERVER))
    global_otel.exporter.clear()
    pipeline = (
        ChatClientBuilder(ScriptedChatClient(model))
        .use_function_invocation()
        .use_opentelemetry(**global_otel.providers, **kw)
        .build()
    )
    await round_trip(pipeline, ChatOptions(tools=[deploy]))
    in_process = events(global_otel.spans("orchestrate_tools"))
    assert [name for name, _ in in_process] == [
        "agui_chat.approval.requested",
        "agui_chat.approval.approved",
    ]
    assert in_process == over_ag_ui
