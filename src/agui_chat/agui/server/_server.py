"""``AGUIServer``: any chat client as an AG-UI 1.0 endpoint (a plain ASGI application).

Each ``POST`` carries one ``RunAgentInput`` and is answered with the SSE stream of one run.
Approvals and questions pause the run as interrupts with signed ids, checked when the
answers come back. Authentication is the host application's (``_mount.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence, Set
from datetime import timedelta
from typing import Any

from ag_ui.core import RunAgentInput
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from ..._client import ChatClient
from ..._contents import FunctionResultContent
from ..._exceptions import (
    ApprovalStoreError,
    ApprovalStoreUnavailableError,
    ChatClientError,
    ConfigurationError,
    DuplicateToolError,
    ToolError,
)
from ..._messages import ChatMessage
from ..._options import ChatOptions
from ..._principal import Principal
from ..._streams import close_stream
from ..._tool_registry import ADDITIONAL_TOOLS, ToolRegistry, ToolSource
from ..._tools import AITool
from ...consent import _rules
from ...consent._grants import MAX_REMEMBER
from ...consent._oversight import Oversight, with_oversight
from ...consent._plan import leave_out, schedule, with_plan
from ...middleware import FunctionInvokingChatClient
from ...stores import ApprovalStore
from ._body import parse_json, read_body
from ._claims import CLAIM_LEASE, Claims, open_store
from ._client_results import check_client_results, remember_echo
from ._encode import RunEncoder, known_call_ids
from ._from_wire import (
    InputError,
    client_tools,
    forwarded_response_format,
    parse_run_input,
    to_chat_messages,
)
from ._grants_api import asks_for_grants, grants_response
from ._hosts import HostGuard
from ._identity import Identify, check_governance, identify
from ._interrupts import InterruptIssuer
from ._outbox import Outbox
from ._page_display import DISPLAY_QUERY, display_response
from ._peer_compat import (
    ISSUED_RESULT_RETENTION,
    OncePerThread,
    ResumeEchoLog,
    note_strict_pre_1_0,
    serves_pre_1_0,
    speaks_agent_framework,
)
from ._resume_check import (
    Answer,
    Answerer,
    ResumeRejected,
    answers_so_far,
    check_resume,
    resume_error,
    run_history,
    verify_resume,
)
from ._run_context import AGUIRunContext, activate
from ._signing import MAKE_A_KEY, InterruptSigner
from ._tracing import traced_run
from ._ui import page

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
    """An ASGI application that runs ``chat_client`` (in a ``FunctionInvokingChatClient``
    unless it has one: ``pipeline``) for AG-UI clients.

    - ``tools``: ``AITool``s and tool sources (an ``MCPToolset``), offered on every run; a
      source is read again as each run starts. A name used twice across ``tools`` and the
      tool loop's ``additional_tools`` is a ``DuplicateToolError`` here, or fails the run
      that finds it (``TOOL_ERROR``). A client tool named like a server tool is left out.
    - ``signing_key``: signs the interrupt ids (default ``AGUI_CHAT_SIGNING_KEY``; else a
      random key: pending approvals then die with the process).
    - ``approval_store``: where consumed answers are recorded, shared by every process
      holding the key: an ``ApprovalStore`` or a URL (``sqlite:///…``, ``redis://…``,
      ``memory://``). Required with a fixed key (``ConfigurationError``); pass
      ``InMemoryApprovalStore()`` explicitly for one process that never restarts.
    - ``audience``: what tokens are issued for; another audience's are refused. Default
      ``AGUI_CHAT_AUDIENCE``, else :func:`default_audience` of the tools the sources have
      now (give it when they are not open yet) and of the path each request came to (its
      mount path), so agents mounted side by side refuse each other's tokens.
    - ``approval_ttl``: how long an approval or question may be answered (``None``: no limit).
    - ``claim_lease``: how long a claim holds unless its run renews it (every third of it);
      past it a claim whose tool never started is free again, a started one is lost
      (docs/stores.md). ``approval_store``'s epoch goes into every token (docs/stores.md).
    - ``max_body_bytes`` (413 past it), ``body_timeout`` (seconds, 408 after),
      ``keepalive_seconds`` (an SSE comment after this long without an event).
    - ``function_invocation``: settings for the ``FunctionInvokingChatClient`` the server
      adds (``ConfigurationError`` when the pipeline has one).
    - ``ui``: also serve a browser page on ``GET`` (``_ui.py``); its interrupts then carry
      the consent engine's display of each call and question (``metadata.agui_chat.shown``).
    - ``allowed_hosts``: the ``Host`` names (and so the ``Origin``s) answered, each ``name``
      (any port) or ``name:port``; any other, on any route, is a 403 and runs nothing (DNS
      rebinding). ``None`` (the default): the loopback names ``localhost``, ``127.0.0.1``
      and ``::1`` only, however the server is bound; a server reached under another name (a
      LAN address, a proxy's public name) lists it; ``["*"]`` answers any (only behind
      something that checks the name itself).
    - ``identify``: ``identify(request) -> Principal | None`` (sync or async), who sent a
      request; by default Starlette's authentication (``scope["user"]`` when authenticated,
      ``scope["auth"].scopes`` as roles). The requester is bound into each approval's signed
      id, the answerer read from the request that carries the answer (never the payload), and
      the consent engine checks them against ``approval_required(approvers=...,
      distinct_approver=...)``. ``require_identity=True`` refuses an answer from nobody.
    - ``max_remember``: how long a remembered approval (a grant) may last at most; a longer
      ``remember`` is capped (docs/governance.md).
    - ``strict_pre_1_0_clients``: rule ``strict-pre-1.0-client`` (docs/interop.md): outcomes
      a client pinned to ``@ag-ui/core`` 0.0.x takes (CopilotKit 1.74): no
      ``pendingToolCallIds``, no cancelled outcome. ``None`` (the default): for a request
      that names no ``protocolVersion`` (a 1.0 client names it); ``True``: for every
      request; ``False``: for none.
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
        allowed_hosts: Iterable[str] | None = None,
        strict_pre_1_0_clients: bool | None = None,
        identify: Identify | None = None,
        require_identity: bool = False,
        max_remember: timedelta = MAX_REMEMBER,
    ) -> None:
        self.allowed_hosts = HostGuard(allowed_hosts)
        self.identify, self.max_remember = check_governance(identify, max_remember)
        self.require_identity = bool(require_identity)
        self.tools = list(tools)
        if max_body_bytes <= 0 or keepalive_seconds <= 0 or body_timeout <= 0:
            raise ConfigurationError("max_body_bytes, body_timeout, keepalive_seconds must be > 0")
        if claim_lease.total_seconds() <= 0:
            raise ConfigurationError("claim_lease must be positive")
        _check_chat_client(chat_client)
        self.pipeline: ChatClient = chat_client
        invoker = chat_client.get_service(FunctionInvokingChatClient)
        if invoker is None:
            settings = dict(function_invocation or {})
            FunctionInvokingChatClient.check_settings(settings)
            self.pipeline = invoker = FunctionInvokingChatClient(chat_client, **settings)
        elif function_invocation is not None:
            raise ConfigurationError(
                "function_invocation settings apply only to the FunctionInvokingChatClient the "
                "server adds; this chat client already has one: configure that one instead"
            )
        self._invoker = invoker
        self._tool_names = list(self._server_tools()[0].by_name)
        key = signing_key if signing_key is not None else os.environ.get(SIGNING_KEY_ENV) or None
        self.fixed_key = key is not None  # else approvals die with the process
        self.approval_store, self._owns_store = open_store(approval_store, fixed_key=self.fixed_key)
        self.governed = self.approval_store.keeps_governance  # an audit trail and grants
        given = audience or os.environ.get(AUDIENCE_ENV)
        self.audience = given or default_audience(self._tool_names)
        self._per_path: dict[str, InterruptSigner] | None = None if given else {}
        self.approval_ttl = approval_ttl
        self.claim_lease = claim_lease
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.keepalive_seconds = keepalive_seconds
        if key is not None:
            self._signer = InterruptSigner(key, audience=self.audience)
        else:
            _log.warning(
                "AGUIServer has no signing key (pass signing_key or set %s, at least 16 bytes; "
                "make one with %s): using a random one, so pending approvals will not survive a "
                "restart or span several workers",
                SIGNING_KEY_ENV,
                MAKE_A_KEY,
            )
            self._signer = InterruptSigner.ephemeral(audience=self.audience)
        if given:
            _note_audience(self, self._signer)
        self._epoch_retry_at = float("-inf")
        self._echo_log = ResumeEchoLog()
        self.strict_pre_1_0_clients = note_strict_pre_1_0(strict_pre_1_0_clients)
        self._pre_1_0_threads = OncePerThread()
        self.ui = bool(ui)
        if self.ui:
            page()  # a page missing from the installation fails here, not on the first GET

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, functools.partial(self._load_epoch, starting=True))
            if self._owns_store:
                await self.approval_store.aclose()
            return
        if scope["type"] != "http":
            raise RuntimeError(f"AGUIServer serves HTTP only, not {scope['type']!r}")
        if refused := self.allowed_hosts.refusal(scope):
            _log.warning("refused a %s request: %s", scope["method"], refused)
            await self.allowed_hosts.refuse(refused, scope, receive, send)
            return
        if self.ui and scope["method"] in ("GET", "HEAD"):
            await page()(scope, receive, send)
            return
        try:
            request = Request(scope, receive)
            if self.ui and scope.get("query_string") == DISPLAY_QUERY:
                shown = await display_response(
                    request, max_bytes=self.max_body_bytes, timeout=self.body_timeout
                )
                await shown(scope, receive, send)
                return
            if asks_for_grants(scope.get("query_string", b"")):
                listed = await grants_response(
                    request,
                    store=self.approval_store,
                    audience=self._signer_for(scope).audience or self.audience,
                    principal=await identify(request, self.identify),
                    max_bytes=self.max_body_bytes,
                    timeout=self.body_timeout,
                )
                await listed(scope, receive, send)
                return
            run = await self._accept(request)
        except InputError as exc:
            headers = {"Allow": "POST"} if exc.status == 405 else None
            response = JSONResponse(exc.body(), status_code=exc.status, headers=headers)
            await response(scope, receive, send)
            return
        await self._stream(run, receive, send)

    async def _load_epoch(self, *, starting: bool = False) -> None:
        """Read the store's epoch (it goes into every token), at most every 10 seconds while
        the store cannot be reached, saying so with the store's (redacted) name. A store that
        refuses this server (``ApprovalStoreMisconfiguredError``: permissions, a Redis that may
        lose keys under ``strict``) fails the server's ``starting`` up: a deployment error is
        said at deployment. One that is down lets the server start: its pauses carry the time
        they were issued, and their answers run once the store is back with its records."""
        now = asyncio.get_running_loop().time()
        store = self.approval_store
        if store.known_epoch is not None or now < self._epoch_retry_at:
            return
        self._epoch_retry_at = now + 10
        try:
            await store.epoch()
        except ApprovalStoreUnavailableError as exc:
            _log.warning(
                "the approval store %r cannot be reached (%s); pauses are still offered, and "
                "their answers run once it is back",
                store,
                exc,
            )
        except ApprovalStoreError as exc:
            if starting:
                raise
            _log.error("the approval store %r refuses this server: %s", store, exc)

    async def _accept(self, request: Request) -> _Run:
        """The request as a run; every refusal is an ``InputError`` (no stream)."""
        if request.method != "POST":
            raise InputError(405, "METHOD_NOT_ALLOWED", "send a POST with a RunAgentInput")
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            raise InputError(
                415, "UNSUPPORTED_MEDIA_TYPE", "send the RunAgentInput as application/json"
            )
        body = await read_body(request, max_bytes=self.max_body_bytes, timeout=self.body_timeout)
        data = parse_json(body)
        remembers_results = isinstance(data, dict) and speaks_agent_framework(data)
        run_input = parse_run_input(data)
        principal = await identify(request, self.identify)
        return _Run(self, request.scope, run_input, remembers_results, principal)

    def _signer_for(self, scope: Scope) -> InterruptSigner:
        """The signer of the audience a request is served under: the configured one, or the
        default audience of the path it came to (``root_path`` and ``path``, whichever way
        the host splits them)."""
        if self._per_path is None:
            return self._signer
        root, path = scope.get("root_path", ""), scope.get("path", "")
        where = (path if path.startswith(root) else root + path).rstrip("/") or "/"
        signer = self._per_path.get(where)
        if signer is None:
            signer = self._signer.with_audience(default_audience(self._tool_names, where))
            if len(self._per_path) < _MAX_PATHS:  # a client inventing paths adds nothing
                self._per_path[where] = signer
                _note_audience(self, signer)
        return signer

    def _server_tools(self) -> tuple[ToolRegistry, list[AITool]]:
        """The server's tools as they are now: the registry of the tool loop's
        ``additional_tools`` and ``tools``, and those of ``tools`` (the ones advertised)."""
        registry = ToolRegistry()
        registry.add(self._invoker.additional_tools, ADDITIONAL_TOOLS)
        return registry, registry.add(self.tools, "AGUIServer(tools=...)")

    async def _stream(self, run: _Run, receive: Receive, send: Send) -> None:
        """Write the run's events as they come, keep-alive comments while it is quiet; a
        client that goes away cancels the run."""
        outbox = run.outbox
        if not run.input.resume and run.failure is None:  # a resume checks them with its answers
            try:
                run.messages = await run.check_results(run.messages)
            except ResumeRejected as exc:
                run.failure = exc  # refused before the run: RUN_ERROR alone
        # A new run (no resume to check, no failure) starts at once: its head and RUN_STARTED
        # go out before the pipeline does any work (the first byte is the run's, not the model's).
        started = not run.input.resume and run.failure is None
        paused = [a.claims.traceparent for a in run.answers if a.claims.traceparent is not None]
        work = traced_run(self._produce(run), run.input, run.encoder, run.headers, paused)
        producer = asyncio.ensure_future(work)
        disconnected = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            if started:
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                await send(_body(run.encoder.start()))
            else:
                # The head waits for the first event (a refusal's Retry-After goes in it).
                await outbox.wait_ready(disconnected, self.keepalive_seconds)
                headers = list(_SSE_HEADERS)
                if run.retry_after is not None:
                    headers.append((b"retry-after", str(run.retry_after).encode()))
                await send({"type": "http.response.start", "status": 200, "headers": headers})
            while not disconnected.done():
                if not await outbox.wait_ready(disconnected, self.keepalive_seconds):
                    if not disconnected.done():
                        await send(_body(_KEEPALIVE))
                    continue
                chunk, finished = outbox.drain()
                if chunk:
                    await send(_body(chunk))
                if finished:
                    await send(_body(b"", more=False))
                    return
        except OSError:
            pass
        finally:
            producer.cancel()
            disconnected.cancel()
            await asyncio.gather(producer, disconnected, return_exceptions=True)
        _log.info("client left run %s; cancelling it", run.input.run_id)

    async def _produce(self, run: _Run) -> None:
        """Run the pipeline into the outbox; a failure ends the run with ``RUN_ERROR``, and a
        refused resume is a stream of ``RUN_ERROR`` alone (agui-wire §5.4)."""
        encoder, outbox = run.encoder, run.outbox
        finished = False
        try:
            activate(run.context)
            await self._load_epoch()
            if run.failure is not None:
                raise run.failure
            messages, options = run.messages, run.options
            if run.input.resume:
                resumed = await self._resume(run)
                if resumed is None:
                    finished = True
                    return
                messages, options = resumed
            claims = run.claims
            stream = self.pipeline.get_streaming_response(messages, options)
            try:
                async for update in stream:
                    data = encoder.update(update)
                    if data:
                        await outbox.put(data)
                    if claims is not None and claims.claimed:
                        await self._keep_results(update.contents, claims, run)
            finally:
                await close_stream(stream)
            outbox.push(encoder.finish())
            finished = True
        except ResumeRejected as exc:
            what = "the resume of run" if run.input.resume else "run"
            _log.warning("refused %s %s: %s", what, run.input.run_id, exc)
            run.retry_after = exc.retry_after
            outbox.push(encoder.error(exc.message, exc.code, exc.retry_after))
        except Exception as exc:
            failed = f"run {run.input.run_id} of thread {run.input.thread_id} failed: {exc}"
            _log.error(failed, exc_info=not isinstance(exc, ChatClientError))  # a model: 1 line
            outbox.push(encoder.error(*_safe_error(exc)))
        finally:
            if run.claims is not None:
                await run.claims.settle(finished=finished)
            outbox.close()

    async def _resume(self, run: _Run) -> tuple[list[Any], ChatOptions] | None:
        """Check the resume's answers (verified once, as the run was accepted), claim them,
        and plan once: the history and options (carrying the plan, its tool-start guard the
        claims) the pipeline runs with; ``None`` when every answer only replays a result."""
        encoder, outbox = run.encoder, run.outbox
        answerer = Answerer(
            run.principal, run.input.thread_id, self.require_identity, self.governed
        )
        checked = await check_resume(
            run.answers, run.messages, run.functions, run.check_results, answerer
        )
        lease = self.claim_lease
        if checked.echoed:
            self._echo_log.note(run.input.thread_id, ", ".join(sorted(checked.echoed)))
        run.echoed = checked.echoed
        claims = run.claims = await Claims.take(self.approval_store, checked.answers, lease)
        outbox.push(encoder.start())  # a new run's RUN_STARTED went out with the head
        for answer, result in claims.replayed:
            if answer.claims.call_id is not None:
                outbox.push(encoder.replayed_result(answer.claims.call_id, result))
        if not claims.fresh:
            outbox.push(encoder.finish())
            return None
        replayed = {a.claims.call_id for a, _ in claims.replayed if a.claims.call_id}
        leave_out(checked.pairs, checked.pending, replayed)
        messages = run_history(checked.messages, checked.calls, claims.fresh, claims.replayed)
        plan = schedule(checked.pairs, checked.pending, messages)
        plan.guard = claims
        if run.oversight is not None:
            claims.oversee(run.oversight, plan.verdicts, self._invoker.telemetry)
        # What binds a tool that asks again to its call (the issuer signs them in)
        encoder.calls.update((s.call.call_id, s.call) for s in plan.to_run)
        encoder.answers = answers_so_far(claims.fresh)
        # the verified calls (the tool loop returns them) are the client's already
        encoder.known_calls = known_call_ids(messages) | set(checked.pairs.verified)
        return messages, with_plan(run.options, plan)

    async def _keep_results(self, contents: Iterable[Any], claims: Claims, run: _Run) -> None:
        """Record the result of each claimed call for a replay (finished even if the client
        leaves meanwhile), that it was issued (``agent-framework-unsealed-results``), and that
        the text the client wrote beside its answer stands for it (``copilotkit-resume-echo``)."""
        thread_id, signer, store = run.input.thread_id, run.signer, run.store
        for content in contents:
            if isinstance(content, FunctionResultContent) and content.call_id in claims.claimed:
                call_id = content.call_id
                result = run.encoder.results[call_id]
                until = _rules.clock() + ISSUED_RESULT_RETENTION.total_seconds()
                also: list[Awaitable[object]] = [
                    remember_echo(
                        store, signer.echo_key(thread_id, call_id, echo), result, expires_at=until
                    )
                    for echo in run.echoed.get(call_id, ())
                ]
                if run.remembers_results:
                    issued = signer.issued_result_key(thread_id, call_id, result)
                    also.append(store.claim(issued, expires_at=until))
                failed = content.exception is not None
                await claims.keep_result(call_id, result, *also, failed=failed)


class _Run:
    """One request being served (``InputError`` for input the pipeline cannot take)."""

    def __init__(
        self,
        server: AGUIServer,
        scope: Scope,
        run_input: RunAgentInput,
        remembers_results: bool,
        principal: Principal | None = None,
    ) -> None:
        self.input = run_input
        self.principal = principal  # who sent this request (never what a payload claims)
        self.failure: DuplicateToolError | ResumeRejected | None = None
        try:
            registry, offered = server._server_tools()
        except DuplicateToolError as exc:  # a tool source changed into a clash: RUN_ERROR
            registry, offered, self.failure = ToolRegistry(), [], exc
        self.functions = registry.by_name  # the server's tools as this run found them
        self.signer = server._signer_for(scope)
        self.answers: list[Answer] = []  # the resume's answers, each token verified once
        self.claims: Claims | None = None  # their claims, once taken
        if run_input.resume and self.failure is None:
            try:
                self.answers = verify_resume(run_input, self.signer)
            except ResumeRejected as exc:
                self.failure = exc
        declared = client_tools(run_input.tools, self.functions)
        context = [f"- {c.description}: {c.value}" for c in run_input.context or []]
        self.options = ChatOptions(
            tools=[*offered, *declared] or None,
            instructions="Context from the application:\n" + "\n".join(context)
            if context
            else None,
            response_format=forwarded_response_format(run_input.forwarded_props),
            additional_properties={"agui_input": run_input},
        )
        self.messages: Sequence[ChatMessage] = to_chat_messages(run_input)
        self.headers: list[tuple[bytes, bytes]] = scope.get("headers") or []  # trace context
        self.retry_after: int | None = None  # a refusal's wait, for the Retry-After header
        self.outbox = Outbox()
        self.store = server.approval_store
        #: Whether results issued in this run are remembered (``agent-framework-unsealed-results``).
        self.remembers_results = remembers_results
        #: The texts the client wrote beside its answers, by call id (``copilotkit-resume-echo``).
        self.echoed: dict[str, list[str]] = {}
        issuer = InterruptIssuer(
            self.signer,
            run_input.thread_id,
            server.approval_ttl,
            self.functions,
            display=server.ui,
            store_epoch=lambda: server.approval_store.known_epoch,
            requester=principal,
            remember_up_to=server.max_remember.total_seconds() if server.governed else None,
        )
        #: Where this run's gated calls are decided and recorded, handed to the tool loop.
        self.oversight = _oversight(server, self.signer, run_input, principal, self.options)
        self.encoder = RunEncoder(
            run_input,
            issuer,
            client_tools=frozenset(t.name for t in declared),
            pre_1_0=serves_pre_1_0(
                server.strict_pre_1_0_clients,
                run_input.protocol_version,
                run_input.thread_id,
                server._pre_1_0_threads,
            ),
        )
        self.context = AGUIRunContext(
            run_input, lambda event: self.outbox.push(self.encoder.event(event))
        )

    def check_results(
        self, messages: Sequence[ChatMessage], answered: Set[str] = frozenset()
    ) -> Awaitable[Sequence[ChatMessage]]:
        """``messages`` as the model may see them: a result in it that this server did not
        write refused, an echo of an answer replaced by its result (``answered``: the call ids
        the resume answers; ``_client_results``)."""
        return check_client_results(
            messages,
            self.input.thread_id,
            self.signer,
            self.functions,
            self.store,
            answered,
            agent_framework=self.remembers_results,
        )


def _oversight(
    server: AGUIServer,
    signer: InterruptSigner,
    run_input: RunAgentInput,
    who: Principal | None,
    options: ChatOptions,
) -> Oversight | None:
    """Where a run's gated calls are decided and recorded, handed to the tool loop with
    ``options`` (``None``: its store keeps no governance records)."""
    if not server.governed:
        return None
    audience = signer.audience or server.audience
    thread, run = run_input.thread_id, run_input.run_id
    oversight = Oversight(server.approval_store, audience, thread, run, who, server.max_remember)
    with_oversight(options, oversight)
    return oversight


def _check_chat_client(chat_client: object) -> None:
    """``ConfigurationError`` unless ``chat_client`` is a ``ChatClient``: a plain function (a
    stand-in model, as the samples write one) is refused here, saying how to wrap it, rather
    than failing later on a missing method."""
    is_class = isinstance(chat_client, type)  # a class has the methods too
    if not is_class and isinstance(chat_client, ChatClient):
        return
    if not is_class and callable(chat_client):
        name = getattr(chat_client, "__name__", "")
        name = name if name.isidentifier() else "model"  # a lambda is "<lambda>"
        raise ConfigurationError(
            f"AGUIServer needs a ChatClient, not the function {name!r}: wrap it, "
            f"AGUIServer(ScriptedChatClient({name})), with ScriptedChatClient from "
            f"agui_chat.testing (it calls {name}(messages, options) for each reply)"
        )
    what = (
        f"the class {chat_client.__name__}"
        if isinstance(chat_client, type)
        else f"an instance of {type(chat_client).__name__}"
    )
    raise ConfigurationError(
        f"AGUIServer needs a ChatClient (get_response, get_streaming_response, get_service), "
        f"not {what}: pass an instance of one, such as OpenAIChatClient(model), or "
        "ScriptedChatClient(function) from agui_chat.testing"
    )


def default_audience(functions: Iterable[str], path: str = "/") -> str:
    """The audience a server has when none is configured: the sorted names of its tools and
    the path it is mounted at (stable across restarts and workers; agents that share a tool
    set, a path and a key must be told apart with ``audience=``)."""
    tools = "tools:" + ",".join(sorted(functions))
    return tools if path == "/" else f"{tools}@{path}"


#: How many paths' audiences a server keeps (more are derived again on each request).
_MAX_PATHS = 64
#: The server that first issued tokens for each (key, audience) in this process.
_ISSUERS: weakref.WeakValueDictionary[tuple[str, str], AGUIServer] = weakref.WeakValueDictionary()


def _note_audience(server: AGUIServer, signer: InterruptSigner) -> None:
    """Warn when another live server of this process has the same key and audience: each
    would then accept the other's tokens."""
    slot = (signer.key_id, str(signer.audience))
    other = _ISSUERS.setdefault(slot, server)
    if other is not server:
        _log.warning(
            "two AGUIServers in this process share a signing key and the audience %r: each "
            "accepts the other's approvals; give each its own audience=",
            signer.audience,
        )


def _body(data: bytes, *, more: bool = True) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _lifespan(receive: Receive, send: Send, startup: Callable[[], Awaitable[None]]) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await startup()
            except ApprovalStoreError as exc:  # a store that refuses this server
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _safe_error(exc: Exception) -> tuple[str, str]:
    """A message and code for ``RUN_ERROR`` that reveal nothing of the exception."""
    if found := resume_error(exc):
        return found[1], found[0]
    if isinstance(exc, ChatClientError):
        return "The model service failed.", "MODEL_ERROR"
    if isinstance(exc, ToolError):
        return "A tool could not be run.", "TOOL_ERROR"
    return "An internal error occurred while running the agent.", "AGENT_ERROR"
