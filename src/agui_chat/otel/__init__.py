"""OpenTelemetry for agui_chat: GenAI-convention spans and metrics for model calls, the tool
loop and the person's part in it (``pip install 'agui-chat[otel]'``).

``OpenTelemetryChatClient`` (or ``ChatClientBuilder(...).use_opentelemetry()``) stands on
``opentelemetry-api`` alone; configure an SDK to record anything (``configure_export`` does
that for the command line from the standard ``OTEL_*`` variables). See
``docs/observability.md`` for every span, event, attribute and metric.
"""

try:
    import opentelemetry.trace  # noqa: F401
except ImportError:  # pragma: no cover - depends on the install
    raise ImportError(
        "agui_chat.otel needs opentelemetry-api: pip install 'agui-chat[otel]'"
    ) from None

from ._chat import OpenTelemetryChatClient
from ._export import configure_export
from ._hooks import OpenTelemetryHooks

__all__ = ["OpenTelemetryChatClient", "OpenTelemetryHooks", "configure_export"]
