"""One live connection to an MCP server, owned by a task of its own.

The SDK's transports are anyio task groups, which must be entered and left by the same task.
A connection therefore runs in a task that opens the transport and the ``ClientSession``,
hands the session over, and waits to be told to close; re-opening a connection after the
server died is starting a new task. What the server wrote to stderr is kept in a temporary
file, so a failure can quote its tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from typing import IO, Any, TextIO, cast

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ElicitationFnT, MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .._exceptions import ToolError
from .._url_secrets import hide_in_logs, redact_url, userinfo_to_header

__all__ = ["Connection", "Target"]

_log = logging.getLogger("agui_chat.mcp")
_TAIL = 2000


class Target:
    """Where a server is: a command to start (stdio) or a URL (streamable HTTP)."""

    def __init__(
        self,
        command: Sequence[str] | None,
        url: str | None,
        headers: Mapping[str, str] | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> None:
        self.command = list(command) if command is not None else None
        # The URL's userinfo travels as the header httpx would make of it, so the
        # SDK's log lines and errors never hold the password.
        self.url: str | None = None
        self.headers = dict(headers) if headers is not None else None
        if url is not None:
            self.url, self.headers = userinfo_to_header(url, headers)
            hide_in_logs(self.url, "mcp.client.streamable_http")  # a key in its query
        self.env = dict(env) if env is not None else None
        self.cwd = cwd

    @property
    def label(self) -> str:
        """The command or URL, as a person would type it (a secret in the URL as ``***``)."""
        if self.command is not None:
            return shlex.join(self.command)
        return redact_url(self.url) if self.url is not None else "(session)"


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


class Connection:
    """A session with one server, alive until :meth:`close` or until the server goes away."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.session: ClientSession | None = None
        self.lost = False
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._errlog: IO[str] | None = None

    @property
    def alive(self) -> bool:
        return (
            self.session is not None
            and not self.lost
            and self._task is not None
            and not self._task.done()
        )

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (empty for HTTP servers)."""
        if self._errlog is None:
            return ""
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            text = self._errlog.read()
        except (OSError, ValueError):
            return ""
        return text[-_TAIL:].strip()

    async def open(
        self,
        *,
        elicitation_callback: ElicitationFnT,
        message_handler: MessageHandlerFnT,
        timeout: float,
    ) -> ClientSession:
        """Start the server (or connect to it) and initialise the session; ``ToolError``
        naming the command or URL, and the server's stderr tail, if that fails."""
        if self.target.command is not None:
            # Closed in close(), which every path out of open() reaches.
            self._errlog = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace"
            )
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(
            self._run(ready, elicitation_callback, message_handler),
            name=f"mcp connection {self.target.label}",
        )
        try:
            self.session = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except asyncio.TimeoutError:
            await self._stop_task()
            failure = self._failure(f"no answer to 'initialize' within {timeout:g} s")
            await self.close()
            raise failure from None
        except asyncio.CancelledError:
            await self.close()
            raise
        except Exception as exc:
            await self._stop_task()
            failure = self._failure(str(_leaf(exc)) or type(_leaf(exc)).__name__)
            await self.close()
            raise failure from exc
        return self.session

    def _failure(self, why: str) -> ToolError:
        if self.target.command is not None:
            tail = self.stderr_tail()
            where = f"cannot start the MCP server {self.target.label!r}"
            told = f"; its stderr ended with:\n{tail}" if tail else "; it wrote nothing to stderr"
            return ToolError(f"{where}: {why}{told}")
        return ToolError(
            f"cannot connect to the MCP server at {self.target.label}: {why} "
            "(check the URL, that the server runs, and the headers it needs)"
        )

    def failure(self, why: str) -> ToolError:
        """A ``ToolError`` for a session that broke after it was open."""
        tail = self.stderr_tail()
        told = f"; its stderr ended with:\n{tail}" if tail else ""
        return ToolError(f"the MCP server {self.target.label!r} {why}{told}")

    async def _run(
        self,
        ready: asyncio.Future[ClientSession],
        elicitation_callback: ElicitationFnT,
        message_handler: MessageHandlerFnT,
    ) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams: Any
                if self.target.command is not None:
                    params = StdioServerParameters(
                        command=self.target.command[0],
                        args=self.target.command[1:],
                        env=self.target.env,
                        cwd=self.target.cwd,
                    )
                    assert self._errlog is not None
                    streams = await stack.enter_async_context(
                        stdio_client(params, errlog=cast(TextIO, self._errlog))
                    )
                else:
                    assert self.target.url is not None
                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers=self.target.headers)
                    )
                    streams = await stack.enter_async_context(
                        streamable_http_client(self.target.url, http_client=http)
                    )
                read, write = streams[0], streams[1]
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        elicitation_callback=elicitation_callback,
                        message_handler=message_handler,
                    )
                )
                await session.initialize()
                ready.set_result(session)
                await self._stop.wait()
        except BaseException as exc:
            self.lost = True
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            elif not isinstance(exc, asyncio.CancelledError):
                _log.warning("MCP server %s: the connection ended: %s", self.target.label, exc)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self.lost = True

    async def close(self) -> None:
        """Close the session and stop the server (or end the HTTP session)."""
        await self._stop_task()
        if self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._errlog = None
        self.session = None

    async def _stop_task(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (asyncio.TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
