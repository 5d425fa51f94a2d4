"""``AGUIServer``: host any chat client as an AG-UI 1.0 endpoint.

It is a plain ASGI application. Each ``POST`` carries one ``RunAgentInput``; the answer is
an SSE stream of AG-UI events for one run. The chat client runs with function invocation
(the server adds a ``FunctionInvokingChatClient`` unless the pipeline has one), offering
the server's tools and, declaration-only, the client's. Approvals and questions pause the
run as AG-UI interrupts whose ids are signed tokens, checked when the answers come back.

Authentication is the host application's: put a Starlette middleware in front, or mount
the server in a FastAPI app behind a dependency (see ``samples/fastapi_server.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from ag_ui.core import RunAgentInput
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from ..._client import ChatClient
from ..._contents import FunctionCallContent, FunctionResultContent
from ..._exceptions import ApprovalStoreError, ChatClientError, DuplicateToolError, ToolError
from ..._hitl_contents import (
    InputRequestContent,
)
from ..._messages import ChatMessage
from ..._options import ChatOptions
from ..._streams import close_stream
from ..._tool_registry import ToolRegistry, ToolSource, check_tools
from ..._tool_start import on_tool_start
from ..._tools import AITool
from ...middleware import FunctionInvokingChatClient
from ...middleware._pairs import VerifiedPair, resume_with
from ...middleware._turns import ADDITIONAL_TOOLS
from ...stores import ApprovalStore
from ..wire._messages import forwarded_response_format
from ._body import MAX_JSON_DEPTH, parse_json, read_body
from ._claims import ClaimGuard, open_store
from ._encode import RunEncoder, known_call_ids
from ._from_wire import InputError, client_tools, parse_run_input, to_chat_messages
from ._interrupts import InterruptIssuer
from ._resume_check import CLAIM_LEASE, RESUME_ERRORS, CheckedResume, ResumeRejected, check_resume
from ._run_context import AGUIRunContext, activate
from ._signing import InterruptSigner
from ._tracing import traced_run
from ._ui import page

__all__ = ["AUDIENCE_ENV", "MAX_JSON_DEPTH", "SIGNING_KEY_ENV", "AGUIServer", "default_audience"]

_log = logging.getLogger("agui_chat.server")

#: The environment variable the signing key is read from when none is given.
SIGNING_KEY_ENV = "AGUI_CHAT_SIGNING_KEY"
#: The environment variable the audience is read from when none is given.
AUDIENCE_ENV = "AGUI_CHAT_AUDIENCE"

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_KEEPALIVE = b": keepalive\n\n"


class AGUIServer:
    """An ASGI application that runs ``chat_client`` for AG-UI clients.

    - ``tools``: the server's tools, offered to the model on every run: ``AITool``s and
      tool sources (an ``MCPToolset`` given as it is). A source is read again when each run
      starts, so a tool its server changed (MCP ``tools/list_changed``) is gated as it is
      now from the next run on, and a tool it dropped is not found. A name may be used once
      across ``tools`` and the tool loop's ``additional_tools``: a clash is a
      ``DuplicateToolError`` naming both sources, here if it is there from the start, else
      the run that finds it fails (``RUN_ERROR`` ``TOOL_ERROR``). A client-side tool of a
      request named like a server tool is left out (the server's tool wins).
    - ``signing_key``: the key approval and question tokens are signed with (default: the
      ``AGUI_CHAT_SIGNING_KEY`` environment variable; without either, a random key, and
      pending approvals will not survive a restart or span several workers).
    - ``approval_store``: where consumed approvals are recorded, shared by every process
      that holds the key: an ``ApprovalStore`` or a URL (``"sqlite:///approvals.db"``,
      ``"redis://host:6379/0"``, ``"memory://"``). Required with a fixed signing key (a
      per-process store would let a restart or a second worker accept an approval again);
      pass ``InMemoryApprovalStore()`` explicitly for one process that never restarts. With
      an ephemeral key the default is in memory.
    - ``audience``: the name tokens are issued for; a token of another audience (another
      agent that shares the key) is refused. Default: ``AGUI_CHAT_AUDIENCE``, else derived
      from the names of the server's tools (see :func:`default_audience`), computed once,
      here, from the tools the sources have now: a source that changes later does not change
      the audience (tokens issued a moment ago stay valid). Give ``audience=`` when the
      tool sources are not open yet.
    - ``approval_ttl``: how long an approval or question may be answered (``None``: no limit).
    - ``claim_lease``: how long a claimed answer whose tool has not started holds (a process
      that died before starting the tool leaves it to lapse, not lost).
    - ``max_body_bytes``: the largest request body accepted (413 beyond it).
    - ``body_timeout``: seconds the whole request body may take to arrive (408 after).
    - ``keepalive_seconds``: an SSE comment is sent after this long without an event.
    - ``function_invocation``: settings for the ``FunctionInvokingChatClient`` the server adds
      (e.g. ``{"max_iterations": 10}``); not allowed when the pipeline already has one.
    - ``ui``: also serve a browser page on ``GET`` (the conversation, approval and question
      cards; see ``_ui.py``); ``POST`` stays the AG-UI endpoint. Off by default.

    ``pipeline`` is the chat client each run goes through (``chat_client``, wrapped if needed).
    """

    def __init__(
        self,
        chat_client: ChatClient,
        *,
        tools: Iterable[AITool | ToolSource] = (),
        signing_key: bytes | str | None = None,
        approval_store: ApprovalStore | str | None = None,
        audience: str | None = None,
        approval_ttl: timedelta | None = timedelta(hours=1),
        claim_lease: timedelta = CLAIM_LEASE,
        max_body_bytes: int = 1_000_000,
        body_timeout: float = 5.0,
        keepalive_seconds: float = 15.0,
        function_invocation: Mapping[str, Any] | None = None,
        ui: bool = False,
    ) -> None:
        if not isinstance(chat_client, ChatClient):
            raise TypeError(f"chat_client must be a ChatClient, got {type(chat_client).__name__}")
        self.tools = check_tools(tools, "tools")
        if max_body_bytes <= 0 or keepalive_seconds <= 0 or body_timeout <= 0:
            raise ValueError("max_body_bytes, body_timeout and keepalive_seconds must be positive")
        if claim_lease.total_seconds() <= 0:
            raise ValueError("claim_lease must be positive")
        invoker = chat_client.get_service(FunctionInvokingChatClient)
        if invoker is None:
            settings = dict(function_invocation or {})
            FunctionInvokingChatClient.check_settings(settings)
            invoker = FunctionInvokingChatClient(chat_client, **settings)
            self.pipeline: ChatClient = invoker
        elif function_invocation is not None:
            raise ValueError(
                "function_invocation settings apply only to the FunctionInvokingChatClient the "
                "server adds; this chat client already has one: configure that one instead"
            )
        else:
            self.pipeline = chat_client
        self._invoker = invoker
        # Two tools of one name among the server's (and its tool loop's) tools are refused
        # here; a tool source that changes into a clash later fails the run that sees it.
        names = self._server_tools()[0].by_name
        key = signing_key if signing_key is not None else os.environ.get(SIGNING_KEY_ENV) or None
        self.approval_store, self._owns_store = open_store(
            approval_store, fixed_key=key is not None
        )
        self.audience = audience or os.environ.get(AUDIENCE_ENV) or default_audience(names)
        self.approval_ttl = approval_ttl
        self.claim_lease = claim_lease
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.keepalive_seconds = keepalive_seconds
        self._signer = _signer(key, self.audience)
        self.ui = bool(ui)
        if self.ui:
            page()  # a page missing from the installation fails here, not on the first GET

    # -- ASGI ----------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            if self._owns_store:
                await self.approval_store.aclose()
            return
        if scope["type"] != "http":
            raise RuntimeError(f"AGUIServer serves HTTP only, not {scope['type']!r}")
        if self.ui and scope["method"] in ("GET", "HEAD"):
            await page()(scope, receive, send)
            return
        try:
            run = await self._accept(Request(scope, receive))
        except InputError as exc:
            headers = {"Allow": "POST"} if exc.status == 405 else None
            response = JSONResponse(exc.body(), status_code=exc.status, headers=headers)
            await response(scope, receive, send)
            return
        run.headers = scope.get("headers") or []
        await self._stream(run, receive, send)

    # -- input -----------------------------------------------------------------------------
    async def _accept(self, request: Request) -> _Run:
        """Read and check the request; every refusal is an ``InputError`` (no stream)."""
        if request.method != "POST":
            raise InputError(405, "METHOD_NOT_ALLOWED", "send a POST with a RunAgentInput")
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            raise InputError(
                415, "UNSUPPORTED_MEDIA_TYPE", "send the RunAgentInput as application/json"
            )
        body = await read_body(request, max_bytes=self.max_body_bytes, timeout=self.body_timeout)
        data = parse_json(body)
        run_input = parse_run_input(data)
        failure: DuplicateToolError | None = None
        try:
            registry, offered = self._server_tools()
        except DuplicateToolError as exc:
            # A tool source changed into a clash: this run fails (RUN_ERROR) before the
            # model is asked; no tool of the clashing name can run.
            registry, offered, failure = ToolRegistry(), [], exc
        functions = registry.by_name
        declared = client_tools(run_input.tools, functions)
        options = ChatOptions(
            tools=[*offered, *declared] or None,
            instructions=_context_instructions(run_input),
            # A client asking for structured output forwards its format (docs/structured.md).
            response_format=forwarded_response_format(run_input.forwarded_props),
            additional_properties={"agui_input": run_input},
        )
        return _Run(
            self,
            run_input,
            to_chat_messages(run_input),
            options,
            frozenset(t.name for t in declared),
            functions,
            failure,
        )

    def _server_tools(self) -> tuple[ToolRegistry, list[AITool]]:
        """The server's tools as they are now (each tool source read again): the registry
        of the tool loop's ``additional_tools`` and ``tools``, and the tools the model is
        told about (those of ``tools``: the loop's own run but are not advertised);
        ``DuplicateToolError`` naming both sources of a name used twice."""
        registry = ToolRegistry()
        registry.add(self._invoker.additional_tools, ADDITIONAL_TOOLS)
        return registry, registry.add(self.tools, "AGUIServer(tools=...)")

    # -- the stream --------------------------------------------------------------------------
    async def _stream(self, run: _Run, receive: Receive, send: Send) -> None:
        """Write the run's events as they come, with keep-alive comments while it is quiet;
        a client that goes away cancels the run."""
        outbox = run.outbox
        work = traced_run(self._produce(run), run.input, run.encoder, run.headers, self._signer)
        producer = asyncio.ensure_future(work)
        disconnected = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            while not disconnected.done():
                if not outbox.ready:
                    waiter = asyncio.ensure_future(outbox.wait())
                    done, _ = await asyncio.wait(
                        {waiter, disconnected},
                        timeout=self.keepalive_seconds,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if waiter not in done:
                        waiter.cancel()
                        if disconnected not in done:
                            await send(_body(_KEEPALIVE))
                        continue
                chunk, finished = outbox.drain()
                if chunk:
                    await send(_body(chunk))
                if finished:
                    await send(_body(b"", more=False))
                    return
            _log.info("client left run %s; cancelling it", run.input.run_id)
        except OSError:
            _log.info("client left run %s; cancelling it", run.input.run_id)
        finally:
            producer.cancel()
            disconnected.cancel()
            await asyncio.gather(producer, disconnected, return_exceptions=True)

    async def _produce(self, run: _Run) -> None:
        """Run the pipeline and feed the outbox; any failure ends the run with RUN_ERROR.

        A resume is checked before the run starts: one the server refuses gets a stream
        that opens with ``RUN_ERROR`` and holds nothing else (agui-wire §5.4: the input is
        rejected; no run exists)."""
        encoder, outbox = run.encoder, run.outbox
        guard: ClaimGuard | None = None

        async def starting(call: FunctionCallContent) -> None:
            if guard is not None:
                await guard.starting(call)

        try:
            with activate(run.context), on_tool_start(starting):
                if run.failure is not None:
                    raise run.failure
                messages, claimed = run.messages, {}
                pairs: list[VerifiedPair] = []
                checked = await self._check_resume(run) if run.input.resume else None
                outbox.push(encoder.start())
                if checked is not None:
                    for call_id, result in checked.replayed:
                        outbox.push(encoder.replayed_result(call_id, result))
                    if not checked.needs_model:
                        outbox.push(encoder.finish())
                        return
                    messages, claimed = checked.messages, checked.claimed
                    pairs = checked.pairs
                    guard = ClaimGuard(self.approval_store, checked.owner, claimed, checked.unbound)
                    # The calls of the verified answers (the tool loop returns them again)
                    # are the client's already: never re-emitted.
                    encoder.known_calls = known_call_ids(messages) | {p.call.call_id for p in pairs}
                # The tool loop resumes with the pairs verified from the signed ids.
                with resume_with(pairs):
                    stream = self.pipeline.get_streaming_response(messages, run.options)
                    try:
                        async for update in stream:
                            data = encoder.update(update)
                            if data:
                                await outbox.put(data)
                            if claimed:
                                await self._keep_results(update.contents, claimed, encoder)
                    finally:
                        await close_stream(stream)
                outbox.push(encoder.finish())
        except ResumeRejected as exc:
            _log.warning("refused the resume of run %s: %s", run.input.run_id, exc)
            outbox.push(encoder.error(exc.message, exc.code))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.exception("run %s of thread %s failed", run.input.run_id, run.input.thread_id)
            outbox.push(encoder.error(*_safe_error(exc)))
        finally:
            if guard is not None:
                # A claim whose tool never started (a later refusal, a failure, the client
                # gone) is released: the person's answer may be sent again.
                await guard.release_unstarted()
            outbox.close()

    async def _check_resume(self, run: _Run) -> CheckedResume:
        """Verify the resume (``ResumeRejected`` if anything is wrong) and tell the encoder
        the calls it rebuilt. Nothing is emitted: the caller starts the run, then emits the
        results kept for replayed answers."""
        checked = await check_resume(
            run.input,
            run.messages,
            signer=self._signer,
            store=self.approval_store,
            functions=run.functions,
            lease=self.claim_lease,
        )
        run.encoder.calls.update(checked.calls)
        run.answers = checked.answers
        return checked

    async def _keep_results(
        self, contents: Iterable[Any], claimed: Mapping[str, str], encoder: RunEncoder
    ) -> None:
        """Record the result of each claimed call, so a replay can re-emit it. The tool has
        run: the record is finished even if the client leaves meanwhile."""
        for content in contents:
            if isinstance(content, FunctionResultContent) and content.call_id in claimed:
                result = encoder.results[content.call_id]
                record = self.approval_store.record_result(claimed[content.call_id], result)
                try:
                    await asyncio.shield(record)
                except ApprovalStoreError:
                    # The tool ran: its claim stays, so nothing runs it again; only the
                    # replay of its result is lost.
                    _log.exception("could not keep the result of call %s", content.call_id)


class _Run:
    """One request being served: its input, converted messages and options, the encoder,
    the outbox the stream drains and the context tools see."""

    def __init__(
        self,
        server: AGUIServer,
        run_input: RunAgentInput,
        messages: list[ChatMessage],
        options: ChatOptions,
        client_tool_names: frozenset[str],
        functions: dict[str, AITool],
        failure: DuplicateToolError | None,
    ) -> None:
        self.input = run_input
        self.functions = functions  # the server's tools as this run found them
        self.failure = failure
        self.messages = messages
        self.options = options
        self.answers: dict[str, list[list[Any]]] = {}
        self.headers: list[tuple[bytes, bytes]] = []  # the request's, for its trace context
        self.outbox = _Outbox()
        issuer = InterruptIssuer(
            server._signer,
            run_input.thread_id,
            ttl=server.approval_ttl,
            functions=functions,
        )
        self.encoder = RunEncoder(
            run_input.thread_id,
            run_input.run_id,
            issue_interrupts=lambda requests: self._issue(issuer, requests),
            client_tools=client_tool_names,
            parent_run_id=run_input.parent_run_id,
        )
        self.context = AGUIRunContext(
            run_input, lambda event: self.outbox.push(self.encoder.event(event))
        )

    def _issue(
        self, issuer: InterruptIssuer, requests: Iterable[InputRequestContent]
    ) -> list[dict[str, Any]]:
        return issuer.issue(list(requests), self.encoder.calls, self.answers)


class _Outbox:
    """Encoded events waiting to be written. The run pushes, the response loop drains
    everything waiting in one write; past ``HIGH_WATER`` pieces or ``HIGH_WATER_BYTES``
    bytes the run waits for a drain (so a slow reader holds a bounded amount of memory
    however large the events are)."""

    HIGH_WATER = 512
    HIGH_WATER_BYTES = 1 << 20

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self.closed = False

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def push(self, data: bytes) -> None:
        if data:
            self._parts.append(data)
            self._size += len(data)
            self._ready.set()

    async def put(self, data: bytes) -> None:
        self.push(data)
        if len(self._parts) >= self.HIGH_WATER or self._size >= self.HIGH_WATER_BYTES:
            self._room.clear()
            await self._room.wait()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def wait(self) -> None:
        await self._ready.wait()

    def drain(self) -> tuple[bytes, bool]:
        """Everything waiting, and whether the run has ended (nothing more will come)."""
        data = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        if not self.closed:
            self._ready.clear()
        self._room.set()
        return data, self.closed


# -- helpers -----------------------------------------------------------------------------------


def default_audience(functions: Iterable[str]) -> str:
    """The audience a server has when none is configured: the sorted names of the tools it
    runs. Stable across restarts, workers and deployments of the same agent; two agents
    with different tool sets never accept each other's tokens. Agents that share a tool set
    and a signing key must be told apart with ``audience=`` (or ``AGUI_CHAT_AUDIENCE``)."""
    return "tools:" + ",".join(sorted(functions))


def _signer(key: bytes | str | None, audience: str) -> InterruptSigner:
    if key is not None:
        return InterruptSigner(key, audience=audience)
    _log.warning(
        "AGUIServer has no signing key (pass signing_key or set %s): using a random one, so "
        "pending approvals will not survive a restart or span several workers",
        SIGNING_KEY_ENV,
    )
    return InterruptSigner.ephemeral(audience=audience)


def _context_instructions(run_input: RunAgentInput) -> str | None:
    """The client's ``context`` entries as instructions for the model (the spec asks the
    producer to put them in front of the model)."""
    if not run_input.context:
        return None
    lines = [f"- {c.description}: {c.value}" for c in run_input.context]
    return "Context from the application:\n" + "\n".join(lines)


def _body(data: bytes, *, more: bool = True) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _safe_error(exc: Exception) -> tuple[str, str]:
    """A message and code for ``RUN_ERROR`` that reveal nothing of the exception."""
    for kind, code, message in RESUME_ERRORS:
        if isinstance(exc, kind):
            return message, code
    if isinstance(exc, ChatClientError):
        return "The model service failed.", "MODEL_ERROR"
    if isinstance(exc, ToolError):
        return "A tool could not be run.", "TOOL_ERROR"
    return "An internal error occurred while running the agent.", "AGENT_ERROR"
