"""``samples/tour.py``'s output is its own, as a terminal shows it (standard output and error
together): no warning about a missing signing key, or anything else, among its lines. The
sample gives its one-process server a key made at start and an in-memory store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tour_prints_its_lines_and_nothing_else() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGUI_"))}
    out = subprocess.run(
        [sys.executable, str(ROOT / "samples" / "tour.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # interleaved, as on a terminal
        text=True,
        timeout=90,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert lines[:5] == [
        "in-process: Done: deleted draft.txt.",
        "in-process: Done: deployed web #7.",
        "over AG-UI: Done: deleted draft.txt.",
        "over AG-UI: Done: deployed web #7.",
        "delete_file ran 2 time(s)",
    ]
    assert len(lines) == 6 and lines[5].startswith("the AG-UI history: "), lines
