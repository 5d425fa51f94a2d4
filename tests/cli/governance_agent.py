"""A live AG-UI agent for the governance commands' tests (``audit``, ``grants``, and the chat's
"don't ask again"): an ``AGUIServer`` under uvicorn on 127.0.0.1 with two gated tools that
count their runs, ``delete_file`` (an approval cannot be remembered) and ``write_note``
(``allow_remember=True``), over the approval store a test names, and who sent a request read
from its ``X-User`` header (so the trail has an approver and a requester).

The scripted model calls ``delete_file`` for "clean PATH" and ``write_note`` for "note PATH";
"note evil" writes to :data:`EVIL_PATH`, whose control and bidirectional characters must
never reach a terminal raw."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from live_agent import counted_delete_file, serving
from starlette.requests import Request

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    Principal,
    ToolApprovalRequestContent,
    approval_required,
)
from agui_chat.agui import AGUIServer
from agui_chat.stores import ApprovalStore, InMemoryApprovalStore, store_from_url
from agui_chat.testing import ScriptedChatClient

#: A path with a right-to-left override, an escape sequence and a zero-width space.
EVIL_PATH = "notes/\u202etxt.exe\x1b[2J\u200b"
#: Each of its hidden characters as the display escapes it.
EVIL_ESCAPED = ("\\u202e", "\\x1b", "\\u200b")
RAW = ("\u202e", "\x1b", "\u200b")


class GovernedAgent:
    """The runs of the two tools, in order."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.notes: list[str] = []

        delete_file = counted_delete_file(self.deleted)

        @approval_required(allow_remember=True)
        def write_note(path: str) -> str:
            """Write a note.

            Args:
                path: Where the note goes.
            """
            self.notes.append(path)
            return f"wrote {path}"

        self.tools = [delete_file, write_note]
        self.model = ScriptedChatClient(_reply)


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    last = messages[-1]
    if last.role == "tool":
        return "Done: " + "; ".join(
            str(c.result) for c in last.contents if isinstance(c, FunctionResultContent)
        )
    words = last.text.split()
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    if len(words) == 2 and words[0] == "clean":
        return [FunctionCallContent(call_id, "delete_file", {"path": words[1]})]
    if len(words) == 2 and words[0] == "note":
        path = EVIL_PATH if words[1] == "evil" else words[1]
        return [FunctionCallContent(call_id, "write_note", {"path": path})]
    return "Say 'clean PATH' or 'note PATH'."


def _from_header(request: Request) -> Principal | None:
    user = request.headers.get("x-user")
    return Principal(user) if user else None


def governed_server(agent: GovernedAgent, store: ApprovalStore | str, **options: Any) -> AGUIServer:
    """The AG-UI server hosting ``agent`` over ``store``."""
    return AGUIServer(
        agent.model,
        tools=agent.tools,
        signing_key=secrets.token_bytes(32),  # its own: no other server shares it
        approval_store=store,
        identify=_from_header,
        **options,
    )


@contextmanager
def governed_agent(
    store: ApprovalStore | str | None = None, *, max_remember: timedelta | None = None
) -> Iterator[tuple[str, GovernedAgent, AGUIServer]]:
    """Serve a fresh agent over ``store`` (default: a fresh in-memory one) on 127.0.0.1;
    yields its URL, the agent and the server. Always stopped."""
    agent = GovernedAgent()
    options = {} if max_remember is None else {"max_remember": max_remember}
    app = governed_server(agent, InMemoryApprovalStore() if store is None else store, **options)
    with serving(app) as url:
        yield url, agent, app


class Conversation:
    """One conversation with ``app`` in this process, through ``AGUIChatClient`` (``async
    with``): :meth:`note` asks for ``note PATH`` and approves whatever is asked."""

    def __init__(self, app: AGUIServer, user: str = "alice") -> None:
        from agui_chat.agui import AGUIChatClient
        from agui_server import client_for

        self._http = client_for(app)
        self.client = AGUIChatClient(
            "http://localhost/", http_client=self._http, headers={"X-User": user}
        )
        self.history: list[ChatMessage] = []

    async def __aenter__(self) -> Conversation:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.aclose()
        await self._http.aclose()

    @property
    def thread(self) -> str:
        assert self.client.thread_id is not None
        return self.client.thread_id

    async def note(self, path: str, *, remember: bool = False) -> int:
        """One turn, ``note PATH``, each approval remembered in the conversation for 10
        minutes with ``remember``: how many times the person was asked."""
        self.history.append(ChatMessage("user", f"note {path}"))
        response = await self.client.get_response(self.history)
        self.history.extend(response.messages)
        asked = 0
        while response.input_requests:
            asked += len(response.input_requests)
            answers: list[AIContent] = [
                r.create_response(True, remember="thread", remember_for=600)
                if remember
                else r.create_response(True)
                for r in response.input_requests
                if isinstance(r, ToolApprovalRequestContent)
            ]
            self.history.append(ChatMessage("user", answers))
            response = await self.client.get_response(self.history)
            self.history.extend(response.messages)
        return asked


async def note_in_process(
    app: AGUIServer,
    path: str,
    *,
    remember: bool,
    user: str = "alice",
    times: int = 1,
) -> tuple[str, int]:
    """In this process: ask for ``note PATH`` ``times`` times in one conversation, the first
    approval remembered with ``remember``. The conversation's thread id, and how many times
    the person was asked."""
    async with Conversation(app, user) as conversation:
        asked = 0
        for turn in range(times):
            asked += await conversation.note(path, remember=remember and turn == 0)
        return conversation.thread, asked


def remembered_on(url: str, path: str, *, user: str = "alice", times: int = 1) -> tuple[str, int]:
    """A server in this process over the store at ``url``: ``user`` asks for ``note PATH``
    ``times`` times in a new conversation, the first approval remembered. The thread, and how
    many times the person was asked."""

    async def note() -> tuple[str, int]:
        store = store_from_url(url)
        try:
            app = governed_server(GovernedAgent(), store)
            return await note_in_process(app, path, remember=True, user=user, times=times)
        finally:
            await store.aclose()

    return asyncio.run(note())
