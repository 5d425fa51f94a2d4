"""The README's ten-line chat loop runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_chat_loop_runs_and_prints_the_answer(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    loop = next(b for b in blocks if "asyncio.run(chat(" in b)
    script = tmp_path / "loop.py"
    script.write_text(loop)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "It is 12:34."
