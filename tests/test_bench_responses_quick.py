"""CI proves bench/responses.py still runs (its timings are not asserted: see bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "responses.py"


def test_the_openai_adapter_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(r) OpenAIResponsesChatClient" in out.stdout
    assert "(r2) OpenAIChatClient" in out.stdout
