"""Fixtures: the real OpenTelemetry SDK with in-memory exporters, for every test here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_support import Recorded


@pytest.fixture
def global_otel(otel: Recorded, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """``otel``'s providers as the global ones for one test (AGUIServer and AGUIChatClient
    trace through the global API). The API lets a process set them only once, so this sets
    its private globals, and puts them back after the test."""
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import _internal as metrics_internal

    monkeypatch.setattr(trace, "_TRACER_PROVIDER", otel.tracer_provider)
    monkeypatch.setattr(metrics_internal, "_METER_PROVIDER", otel.meter_provider)
    assert trace.get_tracer_provider() is otel.tracer_provider
    assert metrics.get_meter_provider() is otel.meter_provider
    return otel


@pytest.fixture
def otel() -> Iterator[Recorded]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Recorded(exporter, reader, tracer_provider, meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()
