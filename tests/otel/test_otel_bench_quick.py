"""bench/otel.py still runs (its timings are not asserted: see bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "otel.py"


def test_the_tracing_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for key in ("o0", "o1", "o1'", "o2", "o3"):
        assert f"({key}) " in out.stdout, out.stdout
    # deterministic: with no SDK, use_opentelemetry() adds no call per streamed update
    line = next(x for x in out.stdout.splitlines() if x.startswith("(o1') "))
    without, with_otel = _two(line)
    assert with_otel == without, line


def _two(line: str) -> tuple[float, float]:
    numbers = [float(w.strip(",;")) for w in line.split() if w[:1].isdigit() and "." in w]
    return numbers[0], numbers[1]
