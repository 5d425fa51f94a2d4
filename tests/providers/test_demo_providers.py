"""``agui-chat demo --model M --api anthropic|gemini`` against aimock completes the approval +
question round trip through the chosen provider's adapter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("api", ["anthropic", "gemini"])
def test_the_demo_round_trip_through_each_provider(aimock: str, api: str) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"))
    }
    if api == "anthropic":
        env["ANTHROPIC_BASE_URL"] = aimock
    else:
        env["GOOGLE_GEMINI_BASE_URL"] = aimock
        env["GOOGLE_GENAI_API_VERSION"] = "v1beta"  # aimock 1.43 serves Gemini there only
    command = [sys.executable, "-m", "agui_chat", "demo", "--model", "m1", "--api", api, "--yes"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    label = "Anthropic model 'm1' (Messages API)" if api == "anthropic" else "Gemini model 'm1'"
    assert label in out.stdout
    assert "deleted reports/q3-draft.txt" in out.stdout
    assert "deployed web build 42" in out.stdout
    assert "Round trip complete" in out.stdout


def test_a_provider_without_its_environment_is_refused_with_what_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_",))}
    command = [sys.executable, "-m", "agui_chat", "demo", "--model", "m", "--api", "anthropic"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode != 0
    assert "ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL" in out.stdout + out.stderr
