"""CI proves bench/stores.py still runs (its timings are not asserted: see bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "stores.py"


def test_the_store_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for figure in ("(claim)", "(resume)", "sqlite (NORMAL)", "memory"):
        assert figure in out.stdout, out.stdout
