"""samples/structured_output.py offline: the prose reply fails validation, the errors go back
once, and the repaired JSON prints as typed cities. (tests/openai/test_aimock_demo.py runs
it against aimock with --base-url.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "structured_output.py"


def test_offline_the_reply_is_repaired_and_validated() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, str(SAMPLE)], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Paris: 2,102,650 people",
        "Marseille: 873,076 people",
        "Lyon: 522,250 people",
    ]
