"""The agui-chat command: the demo round trip, help, and one-line errors."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def run(*args: str, stdin: str = "", timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "agui_chat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_demo_completes_the_round_trip_offline_with_yes() -> None:
    out = run("demo", "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "offline demo model" in text
    assert (
        'approve delete_file(path="reports/q3-draft.txt")? [y]es / [n]o / [e]dit: y  [auto]' in text
    )
    assert "deleted reports/q3-draft.txt" in text
    assert "question: Which build of web should I deploy?" in text
    assert "deployed web build 42" in text
    assert "Round trip complete" in text


def test_demo_on_an_empty_piped_stdin_answers_nothing_itself_and_deletes_nothing() -> None:
    out = run("demo", stdin="")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "[auto]" not in out.stdout
    assert "end of input: rejected delete_file (no answer from the person)" in out.stdout
    assert "deleted reports" not in out.stdout
    assert "a prompt got no answer, so nothing was approved" in out.stdout


def test_demo_reads_its_answers_from_a_piped_stdin() -> None:
    out = run("demo", stdin="y\n7\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "deleted reports/q3-draft.txt" in out.stdout
    assert "deployed web build 7" in out.stdout


@pytest.mark.parametrize("command", ["demo", "serve", "chat"])
def test_each_command_has_complete_help(command: str) -> None:
    out = run(command, "--help")
    assert out.returncode == 0
    assert f"usage: agui-chat {command}" in out.stdout
    assert "options:" in out.stdout


def test_top_level_help_lists_the_three_commands() -> None:
    out = run("--help")
    assert out.returncode == 0
    for command in ("demo", "serve", "chat"):
        assert command in out.stdout


def test_chat_with_a_bad_url_is_one_clear_line() -> None:
    out = run("chat", "not-a-url")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == ["agui-chat: error: not an http(s) URL: 'not-a-url'"]


def test_chat_with_an_unreachable_server_is_one_line_not_a_traceback() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = run("chat", f"http://127.0.0.1:{port}/", stdin="hello\n")
    assert "Traceback" not in out.stderr + out.stdout
    assert "error:" in out.stdout + out.stderr


def test_serve_on_a_port_in_use_is_one_clear_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = run("serve", "--port", str(port))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"agui-chat: error: cannot listen on 127.0.0.1:{port}"
    )


def test_serve_with_a_bad_app_spec_is_one_clear_line() -> None:
    out = run("serve", "--app", "nonexistent_module_xyz:app")
    assert out.returncode == 1
    assert out.stderr.strip().startswith("agui-chat: error: cannot import 'nonexistent_module_xyz'")


def test_demo_with_a_model_but_no_key_says_what_is_missing() -> None:
    out = run("demo", "--model", "gpt-4o-mini")
    assert out.returncode == 1
    assert "OPENAI_API_KEY" in out.stderr
