"""DESIGN §1: imports only point down. The core and the middleware import no adapter and no
adapter's dependency (so the retry middleware can only know transient errors by our own
types), and ``import agui_chat`` with the tool loop works without any of them installed."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agui_chat

PACKAGE = Path(agui_chat.__file__).resolve().parent
# ``__main__.py`` is the command's entry point, not part of the core.
CORE_AND_MIDDLEWARE = sorted(
    [p for p in PACKAGE.glob("_*.py") if p.name != "__main__.py"]
    + list((PACKAGE / "middleware").glob("*.py")),
    key=str,
)
FORBIDDEN = ("httpx", "httpx_sse", "openai", "starlette", "uvicorn", "fastapi", "ag_ui")
ADAPTERS = ("agui", "openai", "cli", "testing")


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every import in ``path`` as (level, absolute-or-relative module name)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


@pytest.mark.parametrize(
    "module", CORE_AND_MIDDLEWARE, ids=lambda p: p.relative_to(PACKAGE).as_posix()
)
def test_core_and_middleware_import_no_adapter_and_no_adapter_dependency(module: Path) -> None:
    in_middleware = module.parent.name == "middleware"
    for level, name in _imports(module):
        top = name.split(".")[0]
        if level == 0:
            assert top not in FORBIDDEN, f"{module.name} imports {name}"
            assert not any(name.startswith(f"agui_chat.{a}") for a in ADAPTERS), name
        else:
            # Relative imports: from the package (level 1 in the core, 2 in middleware).
            root_level = 2 if in_middleware else 1
            if level == root_level:
                assert top not in ADAPTERS, f"{module.name} imports .{name}"


def test_the_package_and_the_tool_loop_work_without_any_adapter_dependency() -> None:
    script = textwrap.dedent(
        f"""
        import sys
        for name in {FORBIDDEN!r}:
            sys.modules[name] = None  # as if it were not installed
        import asyncio
        from agui_chat import (ChatOptions, FunctionCallContent, FunctionInvokingChatClient,
                               ChatClientBuilder, ai_function)
        from agui_chat.testing import ScriptedChatClient

        @ai_function
        def add(a: int, b: int) -> int:
            "Add two numbers."
            return a + b

        def model(messages, options):
            if messages[-1].role == "tool":
                return f"sum {{messages[-1].contents[0].result}}"
            return [FunctionCallContent("c1", "add", {{"a": 2, "b": 3}})]

        client = ChatClientBuilder(ScriptedChatClient(model)).use_logging()\\
            .use_function_invocation().use_retry().build()
        print(asyncio.run(client.get_response("add", ChatOptions(tools=[add]))).text)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sum 5"
