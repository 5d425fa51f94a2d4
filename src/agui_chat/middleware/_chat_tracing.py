"""``OpenTelemetryChatClient`` (public home ``agui_chat.otel``): a span and metrics per model
call, GenAI conventions; without an SDK every call passes straight through."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .._client import ChatClient, ChatMessages
from .._contents import UsageContent
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._streams import close_stream
from .._usage import UsageDetails
from ._delegating import DelegatingChatClient
from ._otel_content import messages_json, to_json
from ._tool_tracing import ToolTracing, error_type, meter, metrics_enabled, tracer

_T = TypeVar("_T")

#: ``gen_ai.provider.name`` for the clients we know by class name (we may not import them).
_PROVIDERS = {
    "OpenAIChatClient": "openai",
    "OpenAIResponsesChatClient": "openai",
    "AGUIChatClient": "ag_ui",
    "ScriptedChatClient": "agui_chat.scripted",
}


class OpenTelemetryChatClient(DelegatingChatClient):
    """Traces every model call as a ``chat {model}`` CLIENT span and records the
    ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage`` histograms
    (Semantic Conventions v1.44.0, see ``docs/observability.md``). A tool loop above it
    traces its tools and the person's part with this client's providers and
    ``capture_content``. A streaming span ends when the stream ends, fails or is closed
    early (``agui_chat.stream.end`` says ``"completed"`` or ``"stopped"``).

    - ``provider_name``, ``model``, ``server_address``, ``server_port``: by default read from
      the innermost client (``model``, ``base_url`` or ``endpoint``).
    - ``capture_content``: record prompts, completions, tool arguments and results, the
      person's reasons and answers (off by default: they may hold personal data).
    - ``tracer_provider`` / ``meter_provider``: default the global ones.
    """

    def __init__(
        self,
        inner_client: ChatClient,
        *,
        provider_name: str | None = None,
        model: str | None = None,
        server_address: str | None = None,
        server_port: int | None = None,
        capture_content: bool = False,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        super().__init__(inner_client)
        leaf = _innermost(inner_client)
        found_address, found_port = _server_of(leaf)
        kind = type(leaf).__name__
        self.provider_name = provider_name or _PROVIDERS.get(kind, kind.lower())
        default_model = getattr(leaf, "model", None) or getattr(leaf, "model_id", None)
        self.model = model or (default_model if isinstance(default_model, str) else None)
        self.server_address = server_address or found_address
        self.server_port = server_port or (found_port if self.server_address else None)
        self.capture_content = capture_content
        self._tracer = tracer(tracer_provider)
        made = meter(meter_provider or metrics.get_meter_provider())
        self._own_meter = meter_provider is not None
        self._duration = made.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=[0.01 * 2**i for i in range(14)],
        )
        self._tokens = made.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=[4**i for i in range(14)],
        )
        self.tool_tracing = ToolTracing(
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
        )

    def get_service(self, kind: type[_T]) -> _T | None:
        if kind is ToolTracing:
            return self.tool_tracing  # type: ignore[return-value]
        return super().get_service(kind)

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        call = self._start(messages, options, streaming=False)
        if call is None:
            return await self.inner_client.get_response(messages, options)
        span, attributes, start = call
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False):
                response = await self.inner_client.get_response(messages, options)
        except BaseException as exc:
            self._fail(span, attributes, start, exc)
            raise
        self._finish(span, attributes, start, response)
        return response

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        call = self._start(messages, options, streaming=True)
        if call is None:  # nothing records: hand the stream over untouched
            return self.inner_client.get_streaming_response(messages, options)
        return self._traced_stream(messages, options, *call)

    async def _traced_stream(
        self,
        messages: ChatMessages,
        options: ChatOptions | None,
        span: Span,
        attributes: dict[str, Any],
        start: float,
    ) -> AsyncIterator[ChatResponseUpdate]:
        span_context = trace.set_span_in_context(span)
        token = otel_context.attach(span_context)
        try:
            stream = self.inner_client.get_streaming_response(messages, options)
        finally:
            otel_context.detach(token)
        kept: list[ChatResponseUpdate] | None = [] if self.capture_content else None
        response_id = model_id = finish = None
        usage: UsageDetails | None = None
        ended = "stopped"
        try:
            while True:
                token = otel_context.attach(span_context)
                try:
                    update = await anext(stream)
                except StopAsyncIteration:
                    break
                finally:
                    otel_context.detach(token)
                response_id = update.response_id or response_id
                model_id = update.model_id or model_id
                finish = update.finish_reason or finish
                for content in update.contents:
                    if content.__class__ is UsageContent:
                        usage = content.details if usage is None else usage + content.details
                if kept is not None:
                    kept.append(update)
                yield update
            ended = "completed"
        except GeneratorExit:
            raise
        except BaseException as exc:
            ended = "failed"
            self._fail(span, attributes, start, exc)
            raise
        finally:
            await close_stream(stream)
            if ended != "failed":
                span.set_attribute("agui_chat.stream.end", ended)
                if kept is not None:
                    response = ChatResponse.from_updates(kept)
                else:
                    response = ChatResponse(
                        response_id=response_id,
                        model_id=model_id,
                        finish_reason=finish,
                        usage=usage,
                    )
                self._finish(span, attributes, start, response)

    def _start(
        self, messages: ChatMessages, options: ChatOptions | None, *, streaming: bool
    ) -> tuple[Span, dict[str, Any], float] | None:
        """The span and metric attributes of a call; ``None`` when nothing would record."""
        model = (options.model_id if options is not None else None) or self.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider_name,
        }
        if model:
            attributes["gen_ai.request.model"] = model
        if self.server_address:
            attributes["server.address"] = self.server_address
            if self.server_port:
                attributes["server.port"] = self.server_port
        span_attributes = {**attributes, **_request_attributes(options)}
        if streaming:
            span_attributes["gen_ai.request.stream"] = True
        span = self._tracer.start_span(
            f"chat {model}" if model else "chat", kind=SpanKind.CLIENT, attributes=span_attributes
        )
        if not span.is_recording() and not (self._own_meter or metrics_enabled()):
            span.end()
            return None
        if self.capture_content and span.is_recording():
            span.set_attribute("gen_ai.input.messages", messages_json(as_messages(messages)))
            if options is not None and options.instructions:
                instructions = [{"type": "text", "content": options.instructions}]
                span.set_attribute("gen_ai.system_instructions", to_json(instructions))
        return span, attributes, time.perf_counter()

    def _finish(
        self, span: Span, attributes: dict[str, Any], start: float, response: ChatResponse
    ) -> None:
        reason = response.finish_reason
        finish = str(getattr(reason, "value", reason)) if reason is not None else None
        if response.model_id:
            attributes["gen_ai.response.model"] = response.model_id
        if span.is_recording():
            if response.response_id:
                span.set_attribute("gen_ai.response.id", response.response_id)
            if response.model_id:
                span.set_attribute("gen_ai.response.model", response.model_id)
            if finish is not None:
                span.set_attribute("gen_ai.response.finish_reasons", [finish])
            if self.capture_content:
                output = messages_json(response.messages, finish)
                span.set_attribute("gen_ai.output.messages", output)
        usage = response.usage
        if usage is not None:
            for kind, count, name in (
                ("input", usage.input_token_count, "gen_ai.usage.input_tokens"),
                ("output", usage.output_token_count, "gen_ai.usage.output_tokens"),
            ):
                if count is not None:
                    span.set_attribute(name, count)
                    self._tokens.record(count, {**attributes, "gen_ai.token.type": kind})
        self._duration.record(time.perf_counter() - start, attributes)
        span.end()

    def _fail(
        self, span: Span, attributes: dict[str, Any], start: float, exc: BaseException
    ) -> None:
        kind = attributes["error.type"] = error_type(exc)
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        if self.capture_content:
            span.record_exception(exc)
        self._duration.record(time.perf_counter() - start, attributes)
        span.end()


def _request_attributes(options: ChatOptions | None) -> dict[str, Any]:
    """The request parameters that were set."""
    if options is None:
        return {}
    out: dict[str, Any] = {
        name: value
        for name, value in (
            ("gen_ai.request.temperature", options.temperature),
            ("gen_ai.request.top_p", options.top_p),
            ("gen_ai.request.top_k", options.top_k),
            ("gen_ai.request.max_tokens", options.max_output_tokens),
            ("gen_ai.request.seed", options.seed),
            ("gen_ai.request.frequency_penalty", options.frequency_penalty),
            ("gen_ai.request.presence_penalty", options.presence_penalty),
            ("gen_ai.conversation.id", options.conversation_id),
        )
        if value is not None
    }
    if options.stop_sequences:
        out["gen_ai.request.stop_sequences"] = list(options.stop_sequences)
    if options.response_format is not None:
        out["gen_ai.output.type"] = "json"
    return out


def _innermost(client: ChatClient) -> ChatClient:
    while isinstance(client, DelegatingChatClient):
        client = client.inner_client
    return client


def _server_of(client: object) -> tuple[str | None, int | None]:
    """The host and port a client talks to (its ``endpoint``, or its SDK's ``base_url``)."""
    url: object = getattr(client, "endpoint", None)
    if url is None:
        url = getattr(getattr(client, "_client", None), "base_url", None)
    if url is None:
        return None, None
    try:
        parts = urlsplit(str(url))
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        return None, None
    return parts.hostname, port
