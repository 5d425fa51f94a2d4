"""``configure_export``: the SDK set up from the standard ``OTEL_*`` variables (for the
command line's ``--otel``; applications usually configure their own SDK).

- ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER``: ``console`` or ``otlp`` (default:
  ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or a signal's own endpoint) is set, else
  ``console``); ``none`` turns a signal off;
- ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ...: read by the OTLP
  (HTTP/protobuf) exporters themselves;
- ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``: the resource (default service name
  ``agui-chat``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

from .._extras import needs_extra

__all__ = ["configure_export"]


def _choice(signal: str) -> str:
    given = os.environ.get(f"OTEL_{signal}_EXPORTER", "").strip().lower()
    if given:
        return given.split(",")[0].strip()
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
        f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT"
    )
    return "otlp" if endpoint else "console"


def configure_export(*, out: TextIO | None = None) -> Callable[[], None]:
    """Install an SDK tracer and meter provider as the global ones, exporting as the
    environment says; returns a function that flushes and shuts them down (call it at exit).
    ``out`` is where the console exporters write (default standard error)."""
    with needs_extra(
        "otel", by="exporting telemetry", module="opentelemetry.sdk", package="opentelemetry-sdk"
    ):
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import (
            ConsoleMetricExporter,
            MetricReader,
            PeriodicExportingMetricReader,
        )
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
    stream = out or sys.stderr
    os.environ.setdefault("OTEL_SERVICE_NAME", "agui-chat")
    resource = Resource.create()
    tracer_provider = TracerProvider(resource=resource)
    traces = _choice("TRACES")
    if traces != "none":
        if traces == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:  # each span as it ends: what a person watching the console expects
            exporter = ConsoleSpanExporter(out=stream)
            tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    readers: list[MetricReader] = []
    if _choice("METRICS") == "otlp":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
    elif _choice("METRICS") != "none":
        readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=stream)))
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)

    def shutdown() -> None:
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return shutdown
