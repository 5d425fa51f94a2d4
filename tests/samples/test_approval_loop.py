"""samples/approval_loop.py: the approval and the question are shown, and the tool runs once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "approval_loop.py"


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SAMPLE), *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_with_yes_the_call_is_approved_the_question_answered_and_the_tool_runs_once() -> None:
    out = _run("--yes")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    approval = next(i for i, line in enumerate(lines) if "approve delete_file" in line)
    ran = [i for i, line in enumerate(lines) if "[tool] delete_file ran: notes.txt deleted" in line]
    assert "(approved with --yes)" in lines[approval]
    assert len(ran) == 1 and ran[0] > approval
    assert "assistant> Done: deleted notes.txt." in lines
    assert any(
        "Which folder should I back up?" in line and "documents (answered with --yes)" in line
        for line in lines
    )
    assert "assistant> Done: backed up documents." in lines
    assert lines[-1] == "delete_file ran 1 time(s); files left: draft.md, todo.txt"


def test_answers_typed_on_stdin_reject_the_call_and_cancel_the_question() -> None:
    out = _run(stdin="delete draft.md\nn\nkeep it\nback up\n\nquit\n")
    assert out.returncode == 0, out.stderr
    assert "Done: Tool call invocation rejected. keep it" in out.stdout
    assert "Done: backup cancelled." in out.stdout
    assert "[tool]" not in out.stdout
    assert out.stdout.rstrip().endswith(
        "delete_file ran 0 time(s); files left: draft.md, notes.txt, todo.txt"
    )


def test_the_sample_asks_for_an_approval_as_the_agui_chat_command_does() -> None:
    from agui_chat._display import shown_call
    from agui_chat.cli._prompts import approval_prompt

    out = _run("--yes")
    asked = approval_prompt(shown_call("delete_file", {"path": "notes.txt"}), allow_edits=False)
    assert asked == 'approve delete_file(path="notes.txt")? [y]es / [n]o: '
    assert f"  {asked}y (approved with --yes)" in out.stdout.splitlines()
