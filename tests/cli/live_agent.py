"""A live AG-UI agent for the CLI tests: an ``AGUIServer`` under uvicorn on 127.0.0.1 (a
free port, in a background thread, so the test can drive the ``agui-chat`` command as a
blocking subprocess), with tools that count their runs and a model that records what it
received and reports its state on every turn."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    ChatResponseUpdate,
    DelegatingChatClient,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server

BUILD_SCHEMA = {
    "type": "object",
    "properties": {
        "build": {"type": "integer", "minimum": 1, "description": "Build number"},
        "note": {"type": "string", "description": "Release note"},
    },
    "required": ["build"],
}


def counted_delete_file(deleted: list[str]) -> Any:
    """A gated ``delete_file`` tool that appends each path it deletes to ``deleted``."""

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file to delete.
        """
        deleted.append(path)
        return f"deleted {path}"

    return delete_file


class Agent:
    """The tools' runs, the model's calls and the headers each request carried."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.deploy_runs: list[str] = []
        self.headers: list[dict[str, str]] = []

        delete_file = counted_delete_file(self.deleted)

        @ai_function
        def deploy(service: str) -> str:
            """Deploy a service, asking which build.

            Args:
                service: The service to deploy.
            """
            self.deploy_runs.append(service)
            answer = request_input(f"Which build of {service}?", response_schema=BUILD_SCHEMA)
            if answer.cancelled:
                return f"deployment of {service} cancelled"
            note = answer.payload.get("note")
            return f"deployed {service} build {answer.payload['build']}" + (
                f" ({note})" if note else ""
            )

        self.tools = [delete_file, deploy]
        self.model = ScriptedChatClient(_reply)
        #: Slow replies ("go slowly") whose stream the server cut because the client left.
        self.slow_streams_cut = 0

    def results_seen_by_model(self) -> list[Any]:
        """Every tool result the model received, in order, without repeats."""
        seen: list[Any] = []
        for messages, _ in self.model.calls:
            for m in messages:
                for c in m.contents:
                    if isinstance(c, FunctionResultContent) and c.result not in seen:
                        seen.append(c.result)
        return seen


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    last = messages[-1]
    if last.role == "tool":
        return "Done: " + "; ".join(
            str(c.result) for c in last.contents if isinstance(c, FunctionResultContent)
        )
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    if "clean" in last.text:
        return [
            TextContent("Deleting the draft. "),
            FunctionCallContent(call_id, "delete_file", {"path": "reports/draft.txt"}),
        ]
    if "deploy" in last.text:
        return [
            TextContent("Deploying. "),
            FunctionCallContent(call_id, "deploy", {"service": "web"}),
        ]
    return "Hello from the live agent."


class _WithState(DelegatingChatClient):
    """Reports the shared state (how many messages it was sent) before each turn; a prompt
    with "slowly" in it gets a long stream of ticks instead of the model's reply."""

    def __init__(self, agent: Agent) -> None:
        super().__init__(agent.model)
        self.agent = agent

    async def get_streaming_response(  # type: ignore[override]
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"messages_seen": len(messages)}}
        yield ChatResponseUpdate(raw_representation=snapshot)
        if "slowly" in messages[-1].text:
            finished = False
            try:  # about 20 s of ticks, unless the client leaves first
                for _ in range(400):
                    yield ChatResponseUpdate(role="assistant", contents=[TextContent("tick ")])
                    await asyncio.sleep(0.05)
                finished = True
            finally:
                if not finished:
                    self.agent.slow_streams_cut += 1
            return
        async for update in self.inner_client.get_streaming_response(messages, options):
            yield update


def _recording_headers(app: Any, agent: Agent) -> Any:
    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            agent.headers.append(
                {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            )
        await app(scope, receive, send)

    return asgi


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve any ASGI ``app`` with uvicorn on a free port of 127.0.0.1, in a background
    thread; yields its URL. Always stopped."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        for _ in range(1000):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def agent_server(agent: Agent, signing_key: bytes = b"k" * 32) -> AGUIServer:
    """The AG-UI server hosting ``agent``."""
    return agui_server(_WithState(agent), tools=agent.tools, signing_key=signing_key).app


@contextmanager
def live_agent() -> Iterator[tuple[str, Agent]]:
    """Serve a fresh ``Agent`` on 127.0.0.1; yields its URL and the agent. Always stopped."""
    agent = Agent()
    with serving(_recording_headers(agent_server(agent), agent)) as url:
        yield url, agent
