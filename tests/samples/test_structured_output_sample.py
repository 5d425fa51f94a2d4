"""samples/structured_output.py offline: the prose reply fails validation, the errors go back
once, and the repaired JSON prints as typed cities; the sample shows each reply and the repair
it sent (issue 25). (tests/openai/test_aimock_demo.py runs
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
        "reply 1: Paris (2.1 million), Marseille (870,000) and Lyon (520,000).",
        "repair sent: Your reply does not match the required JSON schema:",
        "    - (root): the reply is not JSON (Expecting value: line 1 column 1 (char 0))",
        "    Reply again with only the corrected JSON.",
        'reply 2: {"cities": [{"name": "Paris", "population": 2102650}, {"name": "Marseille", '
        '"population": 873076}, {"name": "Lyon", "population": 522250}]}',
        "valid after 2 replies:",
        "Paris: 2,102,650 people",
        "Marseille: 873,076 people",
        "Lyon: 522,250 people",
    ]
