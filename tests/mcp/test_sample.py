"""samples/mcp_filesystem.py, run as a person would: approving writes haiku.txt, rejecting
leaves the folder as it was."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import npm_server

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mcp_filesystem.py"


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    server = str(npm_server("server-filesystem"))
    return subprocess.run(
        [sys.executable, str(SAMPLE), "--server", server, *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_approved_in_the_terminal_the_file_is_written() -> None:
    out = _run(stdin="y\n")
    assert out.returncode == 0, out.stderr
    assert "[list] [FILE] notes.txt" in out.stdout  # read-only: ran without asking
    assert "Approve write_file (MCP server 'secure-filesystem-server')?" in out.stdout
    assert "Successfully wrote to" in out.stdout
    assert out.stdout.rstrip().endswith("files: haiku.txt, notes.txt")


def test_rejected_in_the_terminal_nothing_is_written_and_the_reason_is_verbatim() -> None:
    """Issue 25: "no, not now" reached the model as "O, not now"; the words go as typed."""
    out = _run(stdin="no, not now\n")
    assert out.returncode == 0, out.stderr
    assert "Tool call invocation rejected. no, not now\n" in out.stdout
    assert out.stdout.rstrip().endswith("files: notes.txt")


@pytest.mark.parametrize("answer", ["n", "", "no"])
def test_a_bare_no_rejects_without_a_reason(answer: str) -> None:
    out = _run(stdin=f"{answer}\n")
    assert out.returncode == 0, out.stderr
    assert "Tool call invocation rejected.\n" in out.stdout
    assert out.stdout.rstrip().endswith("files: notes.txt")


def test_long_content_is_cut_saying_so_and_shown_whole_on_asking() -> None:
    """Issue 25: long content was cut to 37 characters and "..." without a word; now the
    cut is marked (how much is left out) and ``all`` shows the whole call before deciding."""
    content = "x" * 3000 + "THE-END"
    out = _run("--content", content, stdin="all\nn\n")
    assert out.returncode == 0, out.stderr
    shown, _, rest = out.stdout.partition("[y]es / [n]o / type a reason to reject / [all] of it?")
    assert "THE-END" not in shown  # the first display is cut ...
    assert re.search(r"… \[\d+ more characters\]", shown)  # ... and says so
    assert f'"content": "{content}"' in rest or f'content="{content}"' in rest  # whole, on asking
    assert out.stdout.rstrip().endswith("files: notes.txt")


def test_with_yes_it_approves_without_asking() -> None:
    out = _run("--yes")
    assert out.returncode == 0, out.stderr
    assert "(approved with --yes)" in out.stdout
    assert out.stdout.rstrip().endswith("files: haiku.txt, notes.txt")
