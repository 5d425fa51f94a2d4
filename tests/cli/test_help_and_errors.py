"""The agui-chat command's ``--help`` is complete (every option, with what it does) and the
same through the console script and ``python -m agui_chat``; mistakes are one clear line
on stderr with exit status 1, never a traceback.

Most checks call the command's ``main`` in this process (what the console script runs), to
keep them quick; the console script itself is run once as a real process."""

from __future__ import annotations

import io
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agui_chat.cli import main


def run(*args: str, via: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["COLUMNS"] = "200"
    return subprocess.run([*via, *args], capture_output=True, text=True, timeout=60, env=env)


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def agui_chat(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Outcome]:
    """Run ``agui-chat ARGS`` in this process with ``stdin``; returns status and output."""
    monkeypatch.setenv("COLUMNS", "200")  # one option per line in the help
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    def invoke(*args: str, stdin: str = "") -> Outcome:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        out = capsys.readouterr()
        return Outcome(code, out.out, out.err)

    return invoke


def assert_describes(command: str, text: str, options: list[tuple[str, str]]) -> None:
    """``text``, the help of ``agui-chat COMMAND``, has a line for each ``(option, says)``
    that describes the option, and the first such line matches ``says``."""
    lines = text.splitlines()
    for option, says in options:
        matching = [line for line in lines if re.match(rf"\s+{option}\s+\S", line)]
        assert matching, f"{option} is not described in `agui-chat {command} --help`"
        assert re.search(says, matching[0]), matching[0]


HELP = {
    "demo": [
        (r"--model NAME", r"OpenAI"),
        (r"--yes", r"answer every prompt automatically"),
    ],
    "serve": [
        (r"--host HOST", r"default 127\.0\.0\.1"),
        (r"--port PORT", r"default 8000"),
        (r"--model NAME", r"OpenAI model"),
        (r"--app MODULE:ATTR", r"ChatClient, AGUIServer or ASGI app"),
    ],
    "chat": [
        (r"url", r"endpoint"),
        (r"--header NAME:VALUE", r"HTTP header .*repeatable"),
        (r"--yes", r"approve and answer automatically"),
    ],
}


@pytest.mark.parametrize("command", sorted(HELP))
def test_help_describes_every_option_of_the_command(
    command: str, agui_chat: Callable[..., Outcome]
) -> None:
    out = agui_chat(command, "--help")
    assert out.returncode == 0
    assert_describes(command, out.stdout, HELP[command])
    described = out.stdout.split("\n\n")[1]
    assert len(described.split()) >= 8, "the command needs a description, not just usage"


def test_top_level_help_says_what_each_command_does(agui_chat: Callable[..., Outcome]) -> None:
    out = agui_chat("--help")
    assert out.returncode == 0
    for command, says in (
        ("demo", "approval \\+ question round trip"),
        ("serve", "as an AG-UI endpoint"),
        ("chat", "chat with any AG-UI server"),
    ):
        assert re.search(rf"^\s+{command}\s+.*{says}", out.stdout, re.M), command


def test_the_console_script_is_the_same_command_as_python_m() -> None:
    script = shutil.which("agui-chat", path=str(Path(sys.executable).parent))
    assert script is not None, "the agui-chat console script is not installed"
    via_script = run("serve", "--help", via=[script])
    via_module = run("serve", "--help", via=[sys.executable, "-m", "agui_chat"])
    assert via_script.returncode == via_module.returncode == 0
    assert via_script.stdout == via_module.stdout


def test_no_command_is_a_usage_error_listing_the_commands(
    agui_chat: Callable[..., Outcome],
) -> None:
    out = agui_chat()
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "COMMAND" in out.stderr


def _one_line_error(out: Outcome) -> str:
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("agui-chat: error: ")
    return lines[0]


@pytest.mark.parametrize("url", ["ftp://example.com/agent", "http://", "127.0.0.1:8000"])
def test_chat_with_a_url_that_is_not_http_is_one_line(
    url: str, agui_chat: Callable[..., Outcome]
) -> None:
    line = _one_line_error(agui_chat("chat", url))
    assert url in line


def test_chat_with_a_malformed_header_is_one_line_naming_it(
    agui_chat: Callable[..., Outcome],
) -> None:
    line = _one_line_error(agui_chat("chat", "http://127.0.0.1:9/", "--header", "no-colon-here"))
    assert "--header must look like 'Name: value'" in line
    assert "no-colon-here" in line


def test_chat_with_an_unreachable_server_reports_one_line_per_failed_turn(
    agui_chat: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agui_chat.agui.client import _transport

    monkeypatch.setattr(_transport, "backoff_delay", lambda *args, **kwargs: 0.0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = agui_chat("chat", f"http://127.0.0.1:{port}/", stdin="hello\n")
    assert "Traceback" not in out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert errors[0].endswith(
        f"error: cannot connect to 127.0.0.1:{port}: connection refused: nothing listens on "
        "that port. Is the server running? (start one with: agui-chat serve)"
    )
    assert out.returncode == 1  # the last turn failed


def test_serve_with_a_port_out_of_range_is_one_line(agui_chat: Callable[..., Outcome]) -> None:
    line = _one_line_error(agui_chat("serve", "--port", "99999"))
    assert "--port must be between 0 and 65535, got 99999" in line


def test_serve_on_a_host_that_does_not_resolve_is_one_line(
    agui_chat: Callable[..., Outcome],
) -> None:
    line = _one_line_error(agui_chat("serve", "--host", "no-such-host.invalid", "--port", "0"))
    assert "cannot listen on no-such-host.invalid:0" in line


def test_serve_with_an_app_spec_without_attribute_is_one_line(
    agui_chat: Callable[..., Outcome],
) -> None:
    line = _one_line_error(agui_chat("serve", "--app", "json"))
    assert "--app must look like module:attribute, got 'json'" in line


def test_serve_with_a_missing_attribute_is_one_line_naming_it(
    agui_chat: Callable[..., Outcome],
) -> None:
    line = _one_line_error(agui_chat("serve", "--app", "json:no_such_app"))
    assert "'json' has no attribute 'no_such_app'" in line


def test_serve_with_a_model_but_no_key_is_one_line_naming_the_variable(
    agui_chat: Callable[..., Outcome],
) -> None:
    line = _one_line_error(agui_chat("serve", "--model", "gpt-4o-mini", "--port", "0"))
    assert "OPENAI_API_KEY" in line
