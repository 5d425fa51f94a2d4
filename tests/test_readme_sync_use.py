"""The README's "Synchronous code" section runs as printed, from plain synchronous code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

SETUP = """\
from agui_chat.testing import ScriptedChatClient
client = ScriptedChatClient(lambda messages, options: f"echo {messages[-1].text}")
"""


def test_readme_sync_snippet_runs_without_an_event_loop(tmp_path: Path) -> None:
    section = README.read_text().split("## Synchronous code", 1)[1]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet is not None
    assert "SyncChatClient" in snippet.group(1)
    script = tmp_path / "sync_loop.py"
    script.write_text(SETUP + snippet.group(1))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout == "echo Hello\necho Tell me more"
