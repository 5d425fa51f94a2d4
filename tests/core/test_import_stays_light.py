"""``import agui_chat`` defers every heavy import to its first use (jsonschema, pydantic,
tenacity and the adapters' dependencies), and ``bench/import_time.py`` still runs and reports
the time next to ``import httpx`` (the figure itself is the benchmark's, never asserted
here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "jsonschema", "pydantic", "pydantic_core", "tenacity", "httpx", "starlette", "uvicorn", "openai"
)  # fmt: skip


def test_import_agui_chat_imports_none_of_the_heavy_modules() -> None:
    code = f"import sys, agui_chat; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_what_was_deferred_still_works_on_first_use() -> None:
    code = (
        "from agui_chat import ai_function\n"
        "from agui_chat._schema import schema_errors\n"
        "def f(x: int) -> int:\n"
        "    '''Double.\n\n    Args:\n        x: A number.\n    '''\n"
        "    return 2 * x\n"
        "tool = ai_function(f)\n"
        "print(tool.validate_arguments({'x': '3'}), schema_errors(1, {'type': 'string'}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "{'x': 3} [\"(root): 1 is not of type 'string'\"]"


def test_the_import_time_benchmark_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "import_time.py"), "--pairs", "1"],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    lines = out.stdout.splitlines()
    assert lines[0].startswith("import agui_chat: median ")
    assert lines[2].startswith("ratio agui_chat / httpx: ")
    assert lines[3].startswith("import agui_chat.agui: median ")
    assert lines[4].startswith("import agui_chat.mcp over import mcp: median ")
    assert lines[5].endswith("(none imported)")
