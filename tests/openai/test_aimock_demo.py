"""``agui-chat demo --model M`` against aimock (a real OpenAI-compatible server, found through
``OPENAI_BASE_URL``) completes the approval + question round trip, over Chat Completions (the
default for a custom base URL) and over the Responses API (``--api responses``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("api", [None, "responses"], ids=["default-chat", "responses"])
def test_the_demo_round_trip_on_aimock(aimock: str, api: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["OPENAI_BASE_URL"] = aimock
    command = [sys.executable, "-m", "agui_chat", "demo", "--model", "aimock-demo", "--yes"]
    if api is not None:
        command += ["--api", api]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    expected = "Responses API" if api == "responses" else "Chat Completions"
    assert f"the OpenAI model 'aimock-demo' ({expected})" in out.stdout
    assert "deleted reports/q3-draft.txt" in out.stdout
    assert "deployed web build 42" in out.stdout
    assert "Round trip complete" in out.stdout


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_structured_output_sample_against_aimock(aimock: str, api: str) -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "structured_output.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, str(sample), "--base-url", aimock, "--model", "m", "--api", api],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("reply 1: ")  # each reply is shown, then the typed result
    assert lines[lines.index(next(x for x in lines if x.startswith("valid after"))) + 1] == (
        "Paris: 2,102,650 people"
    )
