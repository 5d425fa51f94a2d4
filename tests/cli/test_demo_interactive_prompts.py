"""``agui-chat demo`` at a terminal: the person answers the approval prompt (approve, reject
with a reason, or edit the arguments) and the question prompt built from the interrupt's
``responseSchema``, and what they typed is what ran. Runs the command's ``main`` in this
process with a stdin that says it is a terminal."""

from __future__ import annotations

import io
import sys

import pytest

from agui_chat.cli import main


class _Typed(io.StringIO):
    """What the person types, on a stdin that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


def demo(typed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdin", _Typed(typed))
    capsys.readouterr()
    status = main(["demo"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "[auto]" not in out
    return out


def test_rejecting_with_a_reason_and_answering_the_form(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = demo("r\nkeep the draft\n7\nhotfix\n", capsys, monkeypatch)
    assert "? [y]es / [n]o / [e]dit: " in out
    assert "Tool call invocation rejected. keep the draft" in out
    assert "deleted reports" not in out
    assert "Build number to deploy (integer, required) [42]: " in out
    assert "deployed web build 7 (hotfix)" in out
    assert "Round trip complete" in out


def test_editing_the_arguments_and_taking_the_schema_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = demo('e\n{"path": "reports/old.txt"}\ny\n\n\n', capsys, monkeypatch)
    # Not a terminal (nothing to pre-fill): the arguments to start from are shown above.
    assert '  now: {"path": "reports/q3-draft.txt"}\n  new arguments as JSON: ' in out
    assert "deleted reports/old.txt" in out
    assert "deployed web build 42" in out  # the schema's default, taken on an empty answer
