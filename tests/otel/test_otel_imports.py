"""DESIGN §1 for telemetry: the tool loop and ``use_opentelemetry()`` stand on
``opentelemetry-api`` (a base dependency) below the adapters, so nothing is loaded by name,
no module of ``otel/`` or of the tracing takes part in an import cycle (not even a lazy
import), and ``agui_chat.otel`` is the one public home of ``OpenTelemetryChatClient``."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import agui_chat
import agui_chat.otel
from agui_chat import ChatClientBuilder
from agui_chat.testing import ScriptedChatClient

PACKAGE = Path(agui_chat.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = ["agui_chat", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Every module of the package and the modules of ours it imports, anywhere in it (in a
    function too); ``from pkg import name`` counts as importing ``pkg`` and, when it is a
    module, ``pkg.name``."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    target = f"{base}.{node.module}" if node.module else base
                else:
                    target = node.module or ""
                # ``from pkg import mod`` runs ``pkg``'s ``__init__`` as well: both count.
                edges.add(target)
                edges |= {f"{target}.{a.name}" for a in node.names}
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def _cycles_through(graph: dict[str, set[str]], members: set[str]) -> list[list[str]]:
    """The import cycles (as paths) that pass through any of ``members``."""
    found: list[list[str]] = []
    for start in sorted(members):
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    found.append([*path, start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_no_import_cycle_runs_through_otel_or_the_tracing() -> None:
    graph = _graph()
    members = {
        m
        for m in graph
        if m.startswith("agui_chat.otel") or m.endswith(("_tracing", "_otel_content", "_builder"))
    }
    assert "agui_chat.middleware._tool_tracing" in members
    assert "agui_chat.otel._export" in members
    assert _cycles_through(graph, members) == []


def test_the_cycle_finder_sees_a_lazy_import_and_a_package_import() -> None:
    """The finder itself: ``from . import x`` inside a function of a module the package's
    ``__init__`` imports is a cycle."""
    graph = {"p": {"p._a"}, "p._a": {"p"}, "p._b": set()}
    assert _cycles_through(graph, {"p._a"}) == [["p._a", "p", "p._a"]]
    assert _cycles_through(graph, {"p._b"}) == []


def _loader(func: ast.expr) -> bool:
    """Whether ``func`` names a function that imports a module given by name."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__", "find_spec")


def test_use_opentelemetry_builds_the_public_class_and_loads_nothing_by_name() -> None:
    built = ChatClientBuilder(ScriptedChatClient(lambda m, o: "hi")).use_opentelemetry().build()
    assert type(built) is agui_chat.otel.OpenTelemetryChatClient
    assert agui_chat.otel.__all__ == ["OpenTelemetryChatClient", "configure_export"]
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and _loader(node.func):
                named = node.args[0]
                ours = isinstance(named, ast.Constant) and str(named.value).startswith(
                    ("agui_chat", ".")
                )
                # A package's lazy PEP 562 exports of its own submodules are allowed (§1).
                ours = ours and not (path.name == "__init__.py" and named.value.startswith("."))  # type: ignore[attr-defined]
                assert not ours, f"{path.name} loads {named.value!r} by name"  # type: ignore[attr-defined]
    assert importlib.util.find_spec("agui_chat._telemetry") is None
    assert not hasattr(agui_chat, "OpenTelemetryHooks")


def test_the_metrics_api_is_imported_on_first_use_not_with_the_package() -> None:
    """DESIGN §6: ``opentelemetry.metrics`` is about half of what the API adds to the import
    time, and only an answer or a request needs it (tests/otel/test_otel_tool_loop.py shows
    the metrics recorded then)."""
    code = (
        "import sys, agui_chat, agui_chat.agui\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.metrics')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
