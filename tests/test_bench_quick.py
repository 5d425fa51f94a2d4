"""CI proves the benchmarks still run (their timings are not asserted: see bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "run.py"


def test_every_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for key in "abcdefs":
        assert f"({key}) " in out.stdout, out.stdout
