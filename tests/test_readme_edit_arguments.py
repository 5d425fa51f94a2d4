"""The README's "Editing a call before it runs" runs as printed: the request shows the call
the model proposed (``request.tool_call``), the person approves it with other arguments
(``create_response(True, edited_arguments=...)``), and the tool runs with those."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_edited_call_is_the_one_that_runs(tmp_path: Path) -> None:
    section = README.read_text().split("## Editing a call before it runs", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    assert "edited_arguments=edited" in block.group(1) and "request.tool_call" in block.group(1)
    script = tmp_path / "edit.py"
    script.write_text(block.group(1))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.splitlines() == [
        "send_email {'to': 'all@example.com', 'body': 'Hi'}",  # as the model proposed it
        "sent to team@example.com: Hi",  # as the person edited it
    ]
