"""CI proves bench/structured.py still runs (its timings are not asserted: see bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "structured.py"


def test_the_structured_output_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for figure in ("(structured) small", "(structured) nested"):
        assert figure in out.stdout, out.stdout
