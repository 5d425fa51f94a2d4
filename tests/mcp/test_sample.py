"""samples/mcp_filesystem.py, run as a person would: approving writes haiku.txt, rejecting
leaves the folder as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_rejected_in_the_terminal_nothing_is_written() -> None:
    out = _run(stdin="n not now\n")
    assert out.returncode == 0, out.stderr
    assert "Tool call invocation rejected. not now" in out.stdout
    assert out.stdout.rstrip().endswith("files: notes.txt")


def test_with_yes_it_approves_without_asking() -> None:
    out = _run("--yes")
    assert out.returncode == 0, out.stderr
    assert "(approved with --yes)" in out.stdout
    assert out.stdout.rstrip().endswith("files: haiku.txt, notes.txt")
