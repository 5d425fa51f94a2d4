"""How to make a signing key is said wherever one is asked for: the error for a short key and
the warning for a missing one name the same command, the README's production section and
docs/errors.md show it, and the key it prints is one the server takes."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agui_chat import ConfigurationError
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient

ROOT = Path(__file__).resolve().parents[3]
COMMAND = "python -c 'import secrets; print(secrets.token_hex(32))'"


def _model() -> ScriptedChatClient:
    return ScriptedChatClient(lambda messages, options: "hi")


def test_a_short_key_is_refused_saying_how_to_make_one() -> None:
    with pytest.raises(ConfigurationError) as refused:
        AGUIServer(_model(), signing_key="0123456789", approval_store="memory://")
    assert str(refused.value) == (
        f"the signing key must be at least 16 bytes, not 10; make one with {COMMAND}"
    )


def test_a_missing_key_is_a_warning_saying_how_long_and_how_to_make_one(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    with caplog.at_level(logging.WARNING, logger="agui_chat.server"):
        AGUIServer(_model())
    (warning,) = [r.getMessage() for r in caplog.records if "signing key" in r.getMessage()]
    assert "set AGUI_CHAT_SIGNING_KEY, at least 16 bytes; make one with " + COMMAND in warning


def test_the_command_makes_a_key_the_server_takes() -> None:
    code = re.fullmatch(r"python -c '(.*)'", COMMAND)
    assert code is not None
    key = subprocess.run(
        [sys.executable, "-c", code.group(1)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    server = AGUIServer(_model(), signing_key=key, approval_store="memory://")
    assert server.fixed_key


@pytest.mark.parametrize("doc", ["README.md", "docs/errors.md"])
def test_the_docs_show_the_same_command(doc: str) -> None:
    text = " ".join((ROOT / doc).read_text().split())
    assert f"`{COMMAND}`" in text
    assert "16 bytes" in text
