"""Every offline sample runs and shows what its docstring promises; the OpenAI one imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(
    name: str, *args: str, unset: tuple[str, ...] = ("OPENAI_",)
) -> subprocess.CompletedProcess[str]:
    """``python samples/NAME ARGS``, without the environment variables starting ``unset``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    return subprocess.run(
        [sys.executable, str(SAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_middleware_sample_redacts_retries_and_applies_defaults() -> None:
    out = run("middleware.py")
    assert out.returncode == 0, out.stderr
    assert "(temperature 0.2) You said: Write to [email] about the launch." in out.stdout
    assert "retrying after ServiceUnavailableError" in out.stderr


def test_client_side_tool_sample_runs_the_tool_once_in_the_client() -> None:
    out = run("client_side_tool.py")
    assert out.returncode == 0, out.stderr
    assert "The client says it is 09:41 in Lisbon." in out.stdout
    assert "local_time ran 1 time(s) in the client" in out.stdout


def test_interrupt_form_sample_fills_the_form_from_schema_defaults() -> None:
    out = run("interrupt_form.py", "--yes")
    assert out.returncode == 0, out.stderr
    assert "Which room on Friday?" in out.stdout
    assert "Done: booked Ada for 4 on Friday." in out.stdout


def test_openai_sample_without_a_key_exits_cleanly_with_a_message() -> None:
    out = run("openai_server.py")
    assert out.returncode == 0, out.stderr
    assert "set OPENAI_API_KEY" in out.stdout


def test_openai_sample_imports() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import runpy; runpy.run_path({str(SAMPLES / 'openai_server.py')!r})",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
