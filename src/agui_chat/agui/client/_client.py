"""``AGUIChatClient``: any AG-UI 1.0 agent as a chat client, with human in the loop.

As in .NET's client, it is a sandwich: ``AGUIChatClient`` (thread id, resume checks,
response stamping) over a ``FunctionInvokingChatClient`` for the caller's own tools (left out
when there are none) over ``_RunClient`` (one HTTP run: ``RunAgentInput`` out, updates in).
"""

from __future__ import annotations

import functools
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from ..._client import BaseChatClient, ChatMessages
from ..._contents import FunctionCallContent
from ..._exceptions import AskAgainError, RunError, TransportError
from ..._hitl_contents import ToolApprovalRequestContent
from ..._messages import ChatMessage, as_messages
from ..._options import ChatOptions
from ..._responses import ChatResponse, ChatResponseUpdate
from ..._streams import close_stream
from ...middleware import FunctionInvokingChatClient
from ..wire._messages import STATE_KEY, THREAD_ID_KEY
from ..wire._tracing import RunSpan
from ._dialects import DialectReader, check_dialect, outgoing_resume
from ._pipeline import AGUIEventPipeline
from ._resume import resume_entries
from ._run_input import build_run_input, client_tool_names
from ._tracing import traced_stream
from ._transport import AGUITransport
from ._updates import UpdateMapper
from ._warnings import warn

_T = TypeVar("_T")
_K = TypeVar("_K")
_REMEMBERED_THREADS = 1024
#: The refusals of a resume whose answers the server will never use: the person must be
#: asked again (docs/errors.md); raised as ``AskAgainError``.
ASK_AGAIN = frozenset(
    {
        "RESUME_ALREADY_CONSUMED",
        "APPROVAL_STORE_RESET",
        "APPROVAL_STALE",
        "INTERRUPT_STALE",
        "APPROVAL_KEY_CHANGED",
        "INTERRUPT_KEY_CHANGED",
    }
)


class AGUIChatClient(BaseChatClient):
    """A chat client for an AG-UI 1.0 agent at ``endpoint`` (HTTP POST + server-sent events).

    Each request sends the whole conversation and yields one update per AG-UI event (the
    event as ``raw_representation``); the caller's own tools (``ChatOptions.tools``) run
    locally, at most ``max_iterations`` round trips per request. Response messages carry
    ``additional_properties["agui_thread_id"]`` (the last one ``"agui_state"``), read back by
    the next request; ``ChatOptions(conversation_id=...)`` chooses the thread.

    A paused run ends with ``finish_reason`` ``INPUT_REQUIRED`` and request contents; the
    next call sends ``resume`` for every pending request, refusing first an answer set that
    misses one (``UnansweredRequestError``), names an unknown one (``UnknownResponseError``),
    answers one twice (``DuplicateResponseError``), resolves an expired one
    (``ExpiredRequestError``) or fails its schema (``InvalidResponseError``).

    Raises ``HTTPStatusError`` subclasses, ``ProtocolError``, ``TruncatedStreamError``, and
    ``RunError`` when the last run ended with ``RUN_ERROR`` (unless
    ``raise_on_run_error=False``): ``AskAgainError`` when the server will never use the
    answers sent (ask the person again). Transient failures before the first event are
    retried up to ``max_retries`` times, and so are refused answers the server asks to be
    sent again after a wait (its store down, the answers being run, a dead worker's claim
    waiting out its lease), honouring the wait; ``ResumeRetryError`` once they are spent.
    Warnings go to the ``agui_chat.agui`` logger and ``on_warning``.
    ``peer_max_version``, ``accept_foreign_thread_ids`` and ``dialect``: see
    ``docs/interop.md``. ``peer_capabilities``: the peer's AG-UI ``AgentCapabilities`` (a
    JSON object, as the application retrieved them: AG-UI leaves retrieval to each server);
    its ``humanInTheLoop.approveWithEdits`` lets the person edit approvals whose interrupt
    carries no ``responseSchema`` (otherwise only a schema naming ``editedArgs`` does). A
    given ``http_client`` is left open.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = 60.0,
        max_retries: int = 3,
        max_iterations: int = 40,
        on_warning: Callable[[str], None] | None = None,
        peer_max_version: str | None = None,
        raise_on_run_error: bool = True,
        accept_foreign_thread_ids: bool = False,
        dialect: str | Iterable[str] | None = None,
        peer_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self._transport = AGUITransport(endpoint, http_client, headers, timeout, max_retries)
        self.on_warning = on_warning
        self.peer_max_version = peer_max_version
        self.raise_on_run_error = bool(raise_on_run_error)
        self.accept_foreign_thread_ids = bool(accept_foreign_thread_ids)
        self.peer_capabilities = peer_capabilities
        self._dialects = check_dialect(dialect)
        self._dialects_used: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._states: OrderedDict[str, Any] = OrderedDict()
        self._last_thread_id: str | None = None
        self._run_client = _RunClient(self)
        self._tool_loop = FunctionInvokingChatClient(
            self._run_client, max_iterations=max_iterations
        )

    @property
    def endpoint(self) -> str:
        """The AG-UI endpoint requests are POSTed to."""
        return self._transport.endpoint

    @property
    def http_client(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` requests go through."""
        return self._transport.http_client

    @property
    def thread_id(self) -> str | None:
        """The AG-UI thread of the latest request, or ``None`` before the first one."""
        return self._last_thread_id

    @property
    def state(self) -> Any:
        """The shared state of the latest thread, as the latest run left it."""
        return None if self._last_thread_id is None else self.state_of(self._last_thread_id)

    def state_of(self, thread_id: str) -> Any:
        """The shared state of ``thread_id`` as its latest run left it (``None``: not run)."""
        return self._states.get(thread_id)

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        history = as_messages(messages)
        return self._stream(history, self._options_for(history, options))

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        history = as_messages(messages)
        run_options = self._options_for(history, options)
        response = await ChatResponse.from_update_stream(self._stream(history, run_options))
        _stamp_response(response, run_options.additional_properties[THREAD_ID_KEY], self)
        return response

    def get_service(self, kind: type[_T]) -> _T | None:
        found = super().get_service(kind)
        return self._tool_loop.get_service(kind) if found is None else found

    async def aclose(self) -> None:
        """Close the http client if this client created it."""
        await self._transport.aclose()

    def _options_for(self, history: list[ChatMessage], options: ChatOptions | None) -> ChatOptions:
        # conversation_id cleared, so that the tool loop keeps sending the whole history
        run_options = options.clone() if options is not None else ChatOptions()
        thread_id = _thread_for(history, run_options)
        run_options.conversation_id = None
        run_options.additional_properties[THREAD_ID_KEY] = thread_id
        self._last_thread_id = thread_id
        return run_options

    def _stream(
        self, history: list[ChatMessage], options: ChatOptions
    ) -> AsyncIterator[ChatResponseUpdate]:
        if client_tool_names(options):
            return self._with_tools(history, options)
        return self._run_client.get_streaming_response(history, options)

    async def _with_tools(
        self, history: list[ChatMessage], options: ChatOptions
    ) -> AsyncIterator[ChatResponseUpdate]:
        # Check the answers to the server's requests before the tool loop runs anything.
        resume_entries(history)
        stream = self._tool_loop.get_streaming_response(history, options)
        try:
            async for update in stream:
                yield update
        finally:
            await close_stream(stream)

    def _dialect_used(self, thread_id: str, dialect: str, what: str) -> None:
        """Say, the first time on ``thread_id``, that ``dialect`` is in use."""
        if (thread_id, dialect) not in self._dialects_used:
            _remember(self._dialects_used, (thread_id, dialect), None)
            warn(self.on_warning, f"thread {thread_id!r}: {what}")


class _RunClient(BaseChatClient):
    """One HTTP run per call: the innermost layer of ``AGUIChatClient``."""

    def __init__(self, owner: AGUIChatClient) -> None:
        self._owner = owner

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return traced_stream(self._owner.endpoint, lambda span: self._run(messages, options, span))

    async def _run(
        self, messages: ChatMessages, options: ChatOptions | None, span: RunSpan | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        owner = self._owner
        history = as_messages(messages)
        extra = options.additional_properties if options is not None else {}
        thread_id = _thread_for(history, options)
        run_id = f"run_{uuid.uuid4().hex}"
        dialect_used = functools.partial(owner._dialect_used, thread_id)
        answers = outgoing_resume(history, owner._dialects, dialect_used)
        state = _state_for(history, extra, owner.state_of(thread_id))
        pipeline = AGUIEventPipeline(
            thread_id=thread_id,
            peer_max_version=owner.peer_max_version,
            on_warning=owner.on_warning,
            accept_foreign_thread_ids=owner.accept_foreign_thread_ids,
        )
        run_input = build_run_input(
            history,
            options,
            thread_id=thread_id,
            run_id=run_id,
            state=state,
            resume=answers.resume,
            peer_max_version=owner.peer_max_version,
            warn=pipeline.warn,
        )
        answers.add_to(run_input)
        trace_headers = span.start(thread_id, run_id) if span is not None else None
        stream = await owner._transport.open(run_input, trace_headers)
        mapper = UpdateMapper(
            thread_id=thread_id,
            requested_run_id=stream.run_id,  # a retry sends a new run
            client_tools=client_tool_names(options),
            history_calls=_calls_in(history),
            state=state,
            sent_messages=run_input["messages"],
            on_warning=owner.on_warning,
            peer_capabilities=owner.peer_capabilities,
        )
        reader = DialectReader(
            owner._dialects, dialect_used, mapper.find_call, mapper.unanswered_calls
        )
        watched = reader.WATCHED
        feed = pipeline.feed
        update = mapper.update
        try:
            async for payloads in stream.payload_batches():
                for data in payloads:
                    for event in feed(data):
                        if event["type"] in watched:
                            yield reader.update(update(reader.event(event)))
                        else:
                            yield update(event)
        except TransportError as exc:
            if not pipeline.run_ended:
                raise
            pipeline.warn(f"the connection broke after the last run ended ({exc}); ignored")
        finally:
            await stream.response.aclose()
            _remember(owner._states, thread_id, mapper.state)
        if stream.decoder.finish():  # the body ended inside an SSE event
            pipeline.warn("the event stream ended inside an unfinished SSE event; it was discarded")
        pipeline.finish()
        error = mapper.last_error
        if error is not None and owner.raise_on_run_error:
            code = error.get("code")
            kind = AskAgainError if code in ASK_AGAIN else RunError
            raise kind(str(error["message"]), code=code)


def _thread_for(history: Sequence[ChatMessage], options: ChatOptions | None) -> str:
    """The caller's ``conversation_id`` or option, else the thread of the last message
    stamped with one, else a new one."""
    if options is not None:
        explicit = options.conversation_id or options.additional_properties.get(THREAD_ID_KEY)
        if isinstance(explicit, str) and explicit:
            return explicit
    for message in reversed(history):
        thread_id = (message.additional_properties or {}).get(THREAD_ID_KEY)
        if isinstance(thread_id, str) and thread_id:
            return thread_id
    return f"thread_{uuid.uuid4().hex}"


def _state_for(history: Sequence[ChatMessage], extra: Mapping[str, Any], remembered: Any) -> Any:
    """Given explicitly, else the one stamped on the last message that carries one, else the
    one last seen on the thread, else ``{}``."""
    if STATE_KEY in extra:
        return extra[STATE_KEY]
    for message in reversed(history):
        props = message.additional_properties
        if props and STATE_KEY in props:
            return props[STATE_KEY]
    return {} if remembered is None else remembered


def _stamp_response(response: ChatResponse, thread_id: str, owner: AGUIChatClient) -> None:
    """Every message gets the thread id, the last one the thread's final state."""
    response.conversation_id = None
    for message in response.messages:
        props = message.additional_properties
        if not props or THREAD_ID_KEY not in props:
            message.additional_properties = {**(props or {}), THREAD_ID_KEY: thread_id}
    if response.messages and thread_id in owner._states:
        last, state = response.messages[-1], owner._states[thread_id]
        last.additional_properties = {**(last.additional_properties or {}), STATE_KEY: state}


def _calls_in(history: Sequence[ChatMessage]) -> dict[str, FunctionCallContent]:
    """Every tool call in the conversation, by id (approvals may name earlier calls)."""
    calls: dict[str, FunctionCallContent] = {}
    for message in history:
        for content in message.contents:
            if isinstance(content, ToolApprovalRequestContent):
                content = content.tool_call
            if isinstance(content, FunctionCallContent):
                calls.setdefault(content.call_id, content)
    return calls


def _remember(memory: OrderedDict[_K, Any], key: _K, value: Any) -> None:
    memory[key] = value
    memory.move_to_end(key)
    while len(memory) > _REMEMBERED_THREADS:
        memory.popitem(last=False)
