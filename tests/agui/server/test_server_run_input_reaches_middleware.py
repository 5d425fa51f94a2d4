"""Issue 5 item 2: the run's ``state``, ``context`` and ``forwardedProps`` are readable by any
middleware of the hosted pipeline (tools are covered in test_stream_events.py), whether it
sits below the function-invocation loop the server adds, or above one the pipeline brings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from server_support import run_input, scripted, text_of

from agui_chat import (
    ChatClient,
    ChatClientBuilder,
    ChatOptions,
    ChatResponseUpdate,
    DelegatingChatClient,
)
from agui_chat.agui import current_run
from agui_server import agui_server

BODY = run_input(
    state={"cart": ["tea"]},
    context=[{"description": "user name", "value": "Ana"}],
    forwardedProps={"locale": "pt"},
)
EXPECTED = {
    "thread": "t1",
    "run": "r1",
    "state": {"cart": ["tea"]},
    "context": [{"description": "user name", "value": "Ana"}],
    "props": {"locale": "pt"},
}


class ReadsTheRun(DelegatingChatClient):
    """A middleware that records what ``current_run()`` shows it on each call."""

    def __init__(self, inner: ChatClient, seen: list[dict[str, Any]]) -> None:
        super().__init__(inner)
        self.seen = seen

    async def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        run = current_run()
        assert run is not None, "a middleware of a hosted run must see the run"
        self.seen.append(
            {
                "thread": run.thread_id,
                "run": run.run_id,
                "state": run.state,
                "context": run.context,
                "props": run.forwarded_props,
            }
        )
        async for update in self.inner_client.get_streaming_response(messages, options):
            yield update


async def test_a_middleware_below_the_servers_tool_loop_reads_the_run_input() -> None:
    seen: list[dict[str, Any]] = []
    pipeline = ChatClientBuilder(scripted("hi")).use(lambda c: ReadsTheRun(c, seen)).build()

    events = await agui_server(pipeline).post(BODY)

    assert text_of(events) == "hi"
    assert seen == [EXPECTED]


async def test_a_middleware_above_the_pipelines_own_tool_loop_reads_the_run_input() -> None:
    seen: list[dict[str, Any]] = []
    pipeline = (
        ChatClientBuilder(scripted("hi"))
        .use(lambda c: ReadsTheRun(c, seen))
        .use_function_invocation()
        .build()
    )

    events = await agui_server(pipeline).post(BODY)

    assert text_of(events) == "hi"
    assert seen == [EXPECTED]
