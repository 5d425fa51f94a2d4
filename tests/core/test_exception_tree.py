"""The exception tree drawn in ``agui_chat._exceptions``'s docstring is the real one: every
error we export is drawn, under its real parent, and "(transient)" marks exactly the
``TransientError`` ones."""

from __future__ import annotations

import re

import pytest

import agui_chat
from agui_chat import AGUIChatError, TransientError, _exceptions

_LINE = re.compile(r"^(?P<indent>[\s│├└─]*?)(?P<name>[A-Z]\w+)(?P<note>.*)$")


def _drawn_tree() -> dict[str, tuple[str | None, str]]:
    """Each drawn class name -> (its drawn parent, the note after it)."""
    doc = _exceptions.__doc__ or ""
    drawn: dict[str, tuple[str | None, str]] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        if not line.startswith("    ") or not line.strip():
            continue
        match = _LINE.match(line[4:])
        if match is None:
            continue
        depth = len(match.group("indent"))
        name = match.group("name")
        while stack and stack[-1][0] >= depth:
            stack.pop()
        drawn[name] = (stack[-1][1] if stack else None, match.group("note"))
        stack.append((depth, name))
    return drawn


EXPORTED_ERRORS = sorted(
    name
    for name in agui_chat.__all__
    if isinstance(getattr(agui_chat, name), type)
    and issubclass(getattr(agui_chat, name), AGUIChatError)
)


def test_the_docstring_draws_a_tree() -> None:
    drawn = _drawn_tree()
    assert drawn["AGUIChatError"][0] is None
    assert drawn["ToolArgumentsError"][0] == "ToolError"


@pytest.mark.parametrize("name", EXPORTED_ERRORS)
def test_every_exported_error_is_drawn(name: str) -> None:
    assert name in _drawn_tree()


@pytest.mark.parametrize("name", EXPORTED_ERRORS)
def test_each_error_is_drawn_under_its_real_parent(name: str) -> None:
    parent, _ = _drawn_tree()[name]
    cls = getattr(agui_chat, name)
    if name in ("AGUIChatError", "TransientError"):
        assert parent is None
        return
    assert parent is not None
    assert getattr(agui_chat, parent) in cls.__bases__


@pytest.mark.parametrize("name", EXPORTED_ERRORS)
def test_transient_is_drawn_exactly_on_the_transient_errors(name: str) -> None:
    _, note = _drawn_tree()[name]
    cls = getattr(agui_chat, name)
    if name == "TransientError":
        return
    assert ("(transient" in note) == issubclass(cls, TransientError), note


def test_every_drawn_name_is_a_real_exported_error() -> None:
    for name in _drawn_tree():
        assert name in EXPORTED_ERRORS, name
