"""Without its SDK, each provider package fails with one line naming the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("package", "blocked", "sdk", "extra"),
    [
        ("agui_chat.anthropic", ["anthropic"], "anthropic", "anthropic"),
        ("agui_chat.gemini", ["google.genai"], "google-genai", "gemini"),
        ("agui_chat.gemini", ["google", "google.genai"], "google-genai", "gemini"),
    ],
)
def test_a_missing_sdk_names_the_extra(
    package: str, blocked: list[str], sdk: str, extra: str
) -> None:
    code = (
        "import sys\n"
        + "".join(f"sys.modules[{name!r}] = None\n" for name in blocked)
        + f"import {package}\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last == (
        f"ImportError: {package} needs the '{sdk}' package: pip install 'agui-chat[{extra}]'"
    )
