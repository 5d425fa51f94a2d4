"""CI proves bench/peers.py still runs against the real peers (its timings are not asserted:
see bench/README.md), and that every server ran each approved call exactly once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from real_components import missing

BENCH = Path(__file__).resolve().parents[1] / "bench" / "peers.py"


def test_the_peer_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    left_out = [
        line.split(":", 1)[1].strip() for line in out.stdout.splitlines() if "left out:" in line
    ]
    if left_out:
        missing("; ".join(left_out), "run `make test-deps` (mk/interop.mk and mk/redis.mk)")
    for figure in ("(first byte)", "(round trip)", "floor", "pydantic_ai", "agent_framework"):
        assert figure in out.stdout, out.stdout
    assert "agui_chat (sqlite)" in out.stdout and "agui_chat (redis)" in out.stdout
