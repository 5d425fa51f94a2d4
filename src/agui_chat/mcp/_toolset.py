"""``MCPToolset``: the tools of an MCP server as ``AIFunction``s, with approvals and questions.

``async with MCPToolset(command=[...]) as toolset:`` starts the server (stdio), connects to
it (``url=``, streamable HTTP, ``headers=`` for auth) or adopts a ``session=``. The toolset
itself goes into ``AGUIServer(tools=[toolset])`` or ``additional_tools=[toolset]`` (a
``ToolSource``: its tools are read again for each run, so ``tools/list_changed`` is seen);
a copy of its ``tools`` can go into ``ChatOptions(tools=...)`` for one request.

Elicitation is a question for the person. When the server sends ``elicitation/create``
during a call, the call is answered with an error (the server's tool stops), and the tool
raises ``InputRequired``: the run pauses with an ``InterruptRequestContent`` carrying the
server's message and requested schema. On resume the tool is called again, and each
elicitation of that call is answered from the person's answer to that very question
(matched by its position, message and requested schema: one that differs is asked again,
see ``agui_chat._input``): a payload accepts (``content`` = payload), a cancelled answer declines
(or cancels, with ``on_cancelled="cancel"``). Like ``request_input``, the work the server's
tool did before eliciting is done again on the resumed call.

One call at a time runs on a connection: an elicitation names no call, so the toolset can
only tell whose question it is while a single call is in flight.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import mcp.types as types
from mcp import ClientSession
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError

from .._contents import FunctionResultContent
from .._exceptions import DuplicateToolError, ToolError
from .._input import InputRequired, request_input
from .._tools import AIFunction
from .._url_secrets import redact_url
from ..middleware import current_invocation
from ._connection import Connection, Target
from ._policy import ApprovalPolicy, check_policy, resolve_policy
from ._results import failure_result, to_result
from ._tool import MCPApprovalRequired, MCPTool, check_schema

__all__ = ["MCPToolset", "elicitation_callback"]

_log = logging.getLogger("agui_chat.mcp")
_PENDING = "The person has not answered yet; the client will call the tool again with the answer."


@dataclass
class _Call:
    """The call in flight on a connection: the context its answers are visible in, how
    many elicitations it made, and the question that paused it."""

    context: contextvars.Context
    tool: MCPTool
    count: int = 0
    question: InputRequired | None = None


_routes: weakref.WeakKeyDictionary[ClientSession, MCPToolset] = weakref.WeakKeyDictionary()


async def elicitation_callback(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """The ``elicitation_callback`` that turns a server's elicitation into a question.

    Toolsets pass it to the sessions they open; give it to a ``ClientSession`` you create
    yourself and hand to ``MCPToolset(session=...)``. An elicitation outside a tool call, or
    one asking the person to open a URL, is declined.
    """
    toolset = _routes.get(context.session)
    if toolset is None:
        return types.ElicitResult(action="decline")
    return toolset._elicit(params)


class MCPToolset:
    """The tools of one MCP server, for the tool loop (see the module docstring).

    - ``command`` (a list: program and arguments, started over stdio, with ``env`` and
      ``cwd``), ``url`` (streamable HTTP, with ``headers``) or ``session`` (an open
      ``ClientSession``; the toolset initialises it but does not close it): exactly one.
    - ``approval``: ``"auto"`` (default: follow the server's annotations, fail closed),
      ``"always"``, ``"never"``, a set of tool names to gate, a predicate
      ``(tool, arguments) -> bool``, or a mapping of tool names to those (``"*"`` for the
      rest). See ``agui_chat.mcp._policy`` and docs/mcp.md.
    - ``on_cancelled``: what a cancelled answer to an elicitation tells the server:
      ``"decline"`` (default) or ``"cancel"``.
    - ``connect_timeout``: seconds to wait for the server to start and initialise.
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        url: str | None = None,
        session: ClientSession | None = None,
        headers: Mapping[str, str] | None = None,
        approval: ApprovalPolicy = "auto",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_cancelled: Literal["decline", "cancel"] = "decline",
        connect_timeout: float = 30.0,
    ) -> None:
        given = [n for n, v in (("command", command), ("url", url), ("session", session)) if v]
        if len(given) != 1:
            raise ValueError(
                "pass exactly one of command=[...], url=... or session=..., "
                f"got {', '.join(given) or 'none'}"
            )
        if command is not None and (
            isinstance(command, str)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            raise TypeError(
                "command must be a list of strings: the program and its arguments "
                "(use shlex.split for a command line)"
            )
        if url is not None and (
            not isinstance(url, str) or not url.startswith(("http://", "https://"))
        ):
            shown = redact_url(url) if isinstance(url, str) else url
            raise ValueError(f"url must be an http:// or https:// URL, got {shown!r}")
        if headers is not None and url is None:
            raise ValueError("headers= only applies to url=")
        if session is not None and not isinstance(session, ClientSession):
            raise TypeError(f"session must be an mcp ClientSession, got {type(session).__name__}")
        if on_cancelled not in ("decline", "cancel"):
            raise ValueError(f"on_cancelled must be 'decline' or 'cancel', got {on_cancelled!r}")
        if not isinstance(connect_timeout, (int, float)) or connect_timeout <= 0:
            raise ValueError("connect_timeout must be a positive number of seconds")
        check_policy(approval)
        self.approval = approval
        self.on_cancelled: Literal["decline", "cancel"] = on_cancelled
        self.connect_timeout = float(connect_timeout)
        self._target = Target(command, url, headers, env, cwd)
        self._own_session = session
        self._connection: Connection | None = None
        self._lock = asyncio.Lock()
        self._active: _Call | None = None
        self._tools: list[AIFunction] = []
        self._refreshing: asyncio.Task[None] | None = None
        self.server_name = "mcp"
        self._open = False

    # -- lifecycle -----------------------------------------------------------------------
    async def __aenter__(self) -> MCPToolset:
        await self._connect()
        self._open = True
        try:
            await self.refresh()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the server (or close the connection); the tools can no longer be called."""
        self._open = False
        if self._refreshing is not None:
            self._refreshing.cancel()
            self._refreshing = None
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    @property
    def target(self) -> str:
        """The command or URL of the server, as a person would type it."""
        return self._target.label

    @property
    def tools(self) -> list[AIFunction]:
        """The server's tools (as last listed), gated by the approval policy. A toolset is a
        ``ToolSource``: give it to ``AGUIServer(tools=...)`` or ``additional_tools=`` as it
        is, and each run reads the tools as they are then (a copy of this list would miss a
        ``tools/list_changed``)."""
        return list(self._tools)

    async def _connect(self) -> ClientSession:
        if self._own_session is not None:
            session = self._own_session
            try:
                result = await session.initialize()
            except Exception as exc:
                raise ToolError(f"cannot initialise the MCP session: {exc}") from exc
        else:
            connection = Connection(self._target)
            session = await connection.open(
                elicitation_callback=elicitation_callback,
                message_handler=self._on_message,
                timeout=self.connect_timeout,
            )
            self._connection = connection
            result = session.initialize_result  # type: ignore[assignment]
        if result is not None and result.server_info is not None:
            self.server_name = result.server_info.name or self.server_name
        _routes[session] = self
        return session

    async def _session(self) -> ClientSession:
        """The open session, re-opened if the server went away."""
        if not self._open:
            raise ToolError(f"the MCP toolset for {self.target!r} is closed: use 'async with'")
        if self._own_session is not None:
            return self._own_session
        connection = self._connection
        if connection is not None and connection.alive:
            assert connection.session is not None
            return connection.session
        if connection is not None:
            _log.info("MCP server %s went away; re-opening the session", self.target)
            self._connection = None
            await connection.close()
        return await self._connect()

    # -- listing -------------------------------------------------------------------------
    async def refresh(self) -> list[AIFunction]:
        """List the server's tools again (done on the server's list-changed notice).

        Two tools whose names become one for the model (``write.file`` and ``write_file``)
        are a ``DuplicateToolError`` naming both, and the toolset offers no tools until the
        server lists a clean set."""
        session = await self._session()
        listed: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never stops paging is cut off
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        try:
            self._tools = self._build(listed)
        except DuplicateToolError:
            # Fail closed: no tool of this server may run under a name the person cannot
            # tell apart from another's; a clean list brings them back.
            self._tools = []
            raise
        return self.tools

    def _build(self, listed: Sequence[types.Tool]) -> list[AIFunction]:
        tools: list[AIFunction] = []
        seen: dict[str, str] = {}  # the name the model sees -> the server's name
        for tool in listed:
            try:
                validator = check_schema(tool)
                mcp_tool = MCPTool(self, tool, validator)
            except ToolError as exc:
                _log.warning("MCP server %s: skipping tool %r: %s", self.target, tool.name, exc)
                continue
            if mcp_tool.name in seen:
                raise DuplicateToolError(
                    f"the MCP server {self.target!r} lists tools {seen[mcp_tool.name]!r} and "
                    f"{tool.name!r}, which are both named {mcp_tool.name!r} for the model: "
                    "tool names must be unique",
                    name=mcp_tool.name,
                )
            seen[mcp_tool.name] = tool.name
            decision = resolve_policy(self.approval, tool)
            if decision is False:
                tools.append(mcp_tool)
            elif decision is True:
                tools.append(MCPApprovalRequired(mcp_tool))
            else:
                tools.append(MCPApprovalRequired(mcp_tool, when=decision))
        if isinstance(self.approval, (set, frozenset)):
            unknown = sorted(self.approval - {t.name for t in listed})
            if unknown:
                _log.warning("MCP server %s has no tool named %s (approval=)", self.target, unknown)
        return tools

    async def _on_message(self, message: IncomingMessage) -> None:
        if (
            isinstance(message, types.ToolListChangedNotification)
            and self._open
            and (self._refreshing is None or self._refreshing.done())
        ):
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh_quietly())

    async def _refresh_quietly(self) -> None:
        try:
            await self.refresh()
        except Exception as exc:
            _log.warning("MCP server %s: listing the tools again failed: %s", self.target, exc)

    # -- calls ---------------------------------------------------------------------------
    async def call(self, tool: MCPTool, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` with validated ``arguments``; the result as our contents."""
        invocation = current_invocation()
        call_id = invocation.call.call_id if invocation is not None else "call"
        label = f"{tool.mcp_tool.name!r} of {self.server_name!r}"
        async with self._lock:
            session = await self._session()
            state = _Call(contextvars.copy_context(), tool)
            self._active = state
            try:
                result = await session.call_tool(tool.mcp_tool.name, arguments)
            except MCPError as exc:
                if state.question is not None:
                    raise state.question from None
                return self._call_failed(call_id, label, exc)
            finally:
                self._active = None
        if state.question is not None:
            raise state.question
        return to_result(call_id, label, result)

    def _call_failed(self, call_id: str, label: str, exc: MCPError) -> FunctionResultContent:
        connection = self._connection
        if exc.error.code == types.CONNECTION_CLOSED or (
            connection is not None and not connection.alive
        ):
            if connection is not None:
                connection.lost = True
            why = connection.failure("closed the connection during the call") if connection else exc
            _log.warning("MCP tool %s: %s", label, why)
            return failure_result(
                call_id,
                f"the MCP server stopped during the call to {label}; it will be restarted "
                "for the next call",
                ToolError(str(why)),
            )
        _log.info("MCP tool %s: the server refused the call: %s", label, exc)
        return failure_result(
            call_id, f"the MCP server refused the call: {exc}", ToolError(str(exc))
        )

    def _elicit(self, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        state = self._active
        schema = getattr(params, "requested_schema", None)
        if state is None or not isinstance(params, types.ElicitRequestFormParams):
            _log.info("MCP server %s: declined an elicitation outside a form call", self.target)
            return types.ElicitResult(action="decline")
        if state.question is not None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=_PENDING)
        state.count += 1
        key = f"mcp elicitation {state.count}: {params.message}"
        try:
            answer = state.context.run(
                request_input, params.message, response_schema=schema, key=key
            )
        except InputRequired as question:
            state.question = InputRequired(
                question.message,
                response_schema=question.response_schema,
                key=question.key,
                metadata={"mcp_server": self.server_name, "mcp_tool": state.tool.mcp_tool.name},
            )
            return types.ErrorData(code=types.INVALID_REQUEST, message=_PENDING)
        if answer.cancelled:
            return types.ElicitResult(action=self.on_cancelled)
        if not isinstance(answer.payload, Mapping):
            return types.ElicitResult(action=self.on_cancelled)
        return types.ElicitResult(action="accept", content=dict(answer.payload))

    def __repr__(self) -> str:
        return f"MCPToolset({self.target!r}, server={self.server_name!r})"
