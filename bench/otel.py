"""What tracing costs (DESIGN §6: tracing off costs nothing measurable per update).

Measured side by side in one run, alternating the two of each pair, median of per-pair
ratios (see bench/README.md):

- (o0) the same pipeline against an identical one: the noise of the measurement;
- (o1) the pipeline of bench (d) (logging + function invocation + retry) with
  ``use_opentelemetry()`` inside the loop and the API's no-op providers (no SDK), against the
  same pipeline without it, streaming N updates: budget 1.03x;
- (o1') the same, counted deterministically: Python function calls per streamed update;
- (o2) the same with the SDK on (a tracer provider with an in-memory exporter, a meter
  provider with an in-memory reader): reported;
- (o3) per call: 2,000 one-update calls through the same two pipelines, SDK on vs off, as
  microseconds per call (a chat span, its metrics and the stream's span context): reported.

``python bench/otel.py`` (about a minute); ``--quick`` runs tiny sizes (CI runs it through
tests/otel/test_otel_bench_quick.py; timings are not asserted).
"""

from __future__ import annotations

import asyncio
import cProfile
import logging
import pstats
import sys
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from run import paired  # the pair timer every benchmark here shares

from agui_chat import ChatClientBuilder, ChatOptions, ai_function
from agui_chat.testing import ScriptedChatClient

BUDGET = 1.03


@ai_function
def lookup(query: str) -> str:
    """A tool the model could call (it does not, here)."""
    return query


async def drain(client: Any, options: ChatOptions) -> int:
    count = 0
    async for _ in client.get_streaming_response("go", options):
        count += 1
    return count


async def calls_of(client: Any, options: ChatOptions) -> int:
    """How many Python function calls one streamed request makes (cProfile's count)."""
    profile = cProfile.Profile()
    profile.enable()
    await drain(client, options)
    profile.disable()
    return sum(row[1] for row in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]


def pipeline(model: Any, **otel: Any) -> Any:
    builder = ChatClientBuilder(model).use_logging().use_function_invocation().use_retry()
    if otel.pop("on", False):
        builder = builder.use_opentelemetry(**otel)
    return builder.build()


def sdk() -> dict[str, Any]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return {
        "tracer_provider": tracer_provider,
        "meter_provider": MeterProvider(metric_readers=[reader]),
        "exporter": exporter,
    }


async def main(quick: bool) -> int:
    logging.getLogger("agui_chat").setLevel(logging.WARNING)
    n, runs, calls = (200, 3, 20) if quick else (20_000, 21, 2_000)
    options = ChatOptions(tools=[lookup])
    reply = " ".join(f"tok{i}" for i in range(n))
    model = ScriptedChatClient(lambda messages, options: reply)
    plain = pipeline(model)
    noop = pipeline(model, on=True)
    recorded = sdk()
    exporter = recorded.pop("exporter")
    traced = pipeline(model, on=True, **recorded)

    twin = pipeline(model)
    ours, floor, ratio = await paired(
        lambda: drain(plain, options), lambda: drain(twin, options), runs
    )
    print(f"(o0) noise: the same pipeline twice, {n} streamed updates: ratio {ratio:.3f}x")
    ours, floor, ratio = await paired(
        lambda: drain(plain, options), lambda: drain(noop, options), runs
    )
    verdict = "within budget" if ratio <= BUDGET else "OVER BUDGET"
    print(
        f"(o1) use_opentelemetry() with no SDK, {n} streamed updates: ours {ours:.4f}s, "
        f"without {floor:.4f}s, ratio {ratio:.3f}x (budget {BUDGET}x) {verdict}; "
        f"{(ours - floor) / n * 1e9:+.0f} ns/update"
    )
    longer = ScriptedChatClient(lambda messages, options: reply + " " + reply)
    slopes = []
    for on in (False, True):
        short_calls = await calls_of(pipeline(model, on=on), options)
        long_calls = await calls_of(pipeline(longer, on=on), options)
        slopes.append(((long_calls - short_calls) / n, short_calls))
    (base_slope, base_calls), (noop_slope, noop_calls) = slopes
    print(
        f"(o1') Python calls per streamed update (deterministic): without {base_slope:.2f}, "
        f"with use_opentelemetry() and no SDK {noop_slope:.2f}; per request "
        f"{noop_calls - base_calls:+d} calls"
    )
    ours, floor, ratio = await paired(
        lambda: drain(plain, options), lambda: drain(traced, options), runs
    )
    print(
        f"(o2) SDK on (in-memory exporter and reader), {n} streamed updates: ours {ours:.4f}s, "
        f"without {floor:.4f}s, ratio {ratio:.3f}x; {(ours - floor) / n * 1e9:+.0f} ns/update"
    )
    exporter.clear()

    one = ScriptedChatClient(lambda messages, options: "ok")
    plain_one, traced_one = pipeline(one), pipeline(one, on=True, **_sdk_only())

    async def many(client: Any) -> None:
        for _ in range(calls):
            await drain(client, options)

    ours, floor, ratio = await paired(
        lambda: many(plain_one), lambda: many(traced_one), max(3, runs // 3)
    )
    print(
        f"(o3) SDK on, {calls} one-update calls: ours {ours / calls * 1e6:.1f} µs/call, "
        f"without {floor / calls * 1e6:.1f} µs/call, +{(ours - floor) / calls * 1e6:.1f} µs "
        f"per call (a span, two histograms), ratio {ratio:.2f}x"
    )
    return 0


def _sdk_only() -> dict[str, Any]:
    recorded = sdk()
    recorded.pop("exporter")
    return recorded


if __name__ == "__main__":
    sys.exit(asyncio.run(main("--quick" in sys.argv[1:])))
