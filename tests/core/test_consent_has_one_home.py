"""Each consent decision has one home, the consent engine (``agui_chat/consent/``): no other
module of the package looks for an approval wrapper itself, spells a request id, or hands
the server's answers to the tool loop through a context variable. These read the source as
text and syntax, since the point is that a second copy does not exist at all."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agui_chat

PACKAGE = Path(agui_chat.__file__).resolve().parent
ENGINE = PACKAGE / "consent"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if ENGINE not in p.parents)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_the_engine_looks_for_an_approval_wrapper(module: Path) -> None:
    """``isinstance(tool, ApprovalRequiredAIFunction)`` missed a gate behind a wrapper; the
    engine's one lookup (``consent._rules.gate``) sees through every wrapper."""
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Call) and _names(node.func) & {"isinstance", "get_service"}:
            found = set().union(*(_names(a) for a in node.args))
            assert "ApprovalRequiredAIFunction" not in found, (
                f"{module.name}:{node.lineno} decides a gate itself; ask consent._rules.gate"
            )


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_the_engine_spells_a_request_id(module: Path) -> None:
    """One request-id scheme (``approval_request_id``, ``question_request_id``): the loop,
    the client and the server once had two."""
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                assert not head.value.startswith(
                    ("approval_", "approval:", "input_", "question:")
                ), f"{module.name}:{node.lineno} builds a request id; use consent._rules"


def test_the_only_context_variables_are_the_running_tools_and_runs() -> None:
    """The server hands its plan to the tool loop as a value in the options, never through
    a context variable: the ones left say which tool or run is current, and which answers
    ``request_input`` finds for the tool running now."""
    names = set()
    for module in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Call) and _names(node.func) == {"ContextVar"}:
                assert isinstance(node.args[0], ast.Constant)
                names.add(node.args[0].value)
    assert names == {
        "agui_chat_current_run",
        "agui_chat_current_invocation",
        "agui_chat_input_answers",
    }


def test_the_engine_stands_below_the_middleware_and_every_adapter() -> None:
    for module in sorted(ENGINE.glob("*.py")):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
                assert node.module.split(".")[0].startswith("_"), (
                    f"consent/{module.name} imports .{node.module}: the engine stands on the "
                    "core alone"
                )
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("agui_chat") for a in node.names)
