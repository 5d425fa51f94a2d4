"""OpenTelemetry for agui_chat: GenAI-convention spans and metrics for model calls, the tool
loop and the person's part in it. See ``docs/observability.md`` for every span, event,
attribute and metric.

``OpenTelemetryChatClient`` (or ``ChatClientBuilder(...).use_opentelemetry()``) and the tool
loop stand on ``opentelemetry-api`` alone, a base dependency; configure an SDK to record
anything. ``configure_export`` does that for the command line from the standard ``OTEL_*``
variables; it needs the SDK and the OTLP exporter (``pip install 'agui-chat[otel]'``).
"""

from ..middleware._chat_tracing import OpenTelemetryChatClient
from ._export import configure_export

__all__ = ["OpenTelemetryChatClient", "configure_export"]
