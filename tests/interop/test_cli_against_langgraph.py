"""``agui-chat chat URL`` against ag-ui-langgraph's default configuration (the real peer):
the LangGraph pause is shown as an approval, and what is typed is what runs there;
``--dialect agui`` reads the same pause as a plain finish."""

from __future__ import annotations

import os
import subprocess
import sys

from interop_support import PeerServer


def chat(url: str, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "agui_chat", "chat", url, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_an_approval_typed_in_the_terminal_runs_once_on_the_langgraph_peer(
    langgraph_server: PeerServer,
) -> None:
    out = chat(langgraph_server.url("/graph"), "delete lg-cli.txt\na\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    # The graph's interrupt carries no responseSchema offering editedArgs: no [e]dit.
    assert 'approve delete_file(path="lg-cli.txt")? [y]es / [n]o:' in out.stdout
    assert "Tool said: deleted lg-cli.txt" in out.stdout
    assert "dialect 'langgraph'" in out.stderr
    assert langgraph_server.runs("delete_file", path="lg-cli.txt") == 1


def test_dialect_agui_shows_no_approval_and_runs_nothing(langgraph_server: PeerServer) -> None:
    out = chat(langgraph_server.url("/graph"), "delete lg-cli-agui.txt\n\n", "--dialect", "agui")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "approve delete_file" not in out.stdout
    assert langgraph_server.runs("delete_file", path="lg-cli-agui.txt") == 0
