"""``agui-chat serve`` says, as it starts, which signing key it signs with (fixed from
``AGUI_CHAT_SIGNING_KEY``, or ephemeral) and which approval store it keeps (a SQLite file by
its full path, or memory), so no file appears unannounced; a signing key too short is
reported as the key's error, not as a ``--store`` one (issue 25). Through the real command,
in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

KEY = "AGUI_CHAT_SIGNING_KEY"


def _env(key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_") and k != KEY}
    if key is not None:
        env[KEY] = key
    return env


def banner(cwd: Path, key: str | None, *args: str) -> list[str]:
    """The lines ``serve`` prints up to its approval store's, then it is stopped."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agui_chat", "serve", "--port", "0", *args],
        cwd=cwd,
        env=_env(key),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, f"serve stopped before its banner ended: {lines}"
            lines.append(line.rstrip("\n"))
            if line.startswith(("agui-chat: approval store:", "agui-chat: signing key and")):
                return lines
        raise AssertionError(f"no store line in {lines}")
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_with_a_key_it_names_the_fixed_key_and_the_sqlite_file_by_its_full_path(
    tmp_path: Path,
) -> None:
    lines = banner(tmp_path, "a-test-key-that-is-long-enough-0123456789")
    assert "the built-in offline demo model (no network, no API key)" in lines[-3]
    assert lines[-2] == (
        "agui-chat: signing key: fixed (signing_key or AGUI_CHAT_SIGNING_KEY): pending "
        "approvals outlive this process"
    )
    assert lines[-1] == (
        f"agui-chat: approval store: SQLite file {tmp_path.resolve()}/agui-chat-approvals.db "
        "(made on first use, with -wal and -shm)"
    )


def test_without_a_key_it_says_ephemeral_and_memory_and_writes_no_file(tmp_path: Path) -> None:
    lines = banner(tmp_path, None)
    assert lines[-2] == (
        "agui-chat: signing key: ephemeral (random, made now): pending approvals end with this "
        "process; set AGUI_CHAT_SIGNING_KEY to keep them"
    )
    assert lines[-1] == (
        "agui-chat: approval store: in memory (this process only: a restart forgets which "
        "approvals were used)"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_explicit_store_is_the_one_named(tmp_path: Path) -> None:
    lines = banner(
        tmp_path, "a-test-key-that-is-long-enough-0123456789", "--store", "sqlite:///sub.db"
    )
    assert lines[-1].startswith(
        f"agui-chat: approval store: SQLite file {tmp_path.resolve()}/sub.db"
    )
    memory = banner(tmp_path, "a-test-key-that-is-long-enough-0123456789", "--store", "memory://")
    assert memory[-1].startswith("agui-chat: approval store: in memory")


def test_a_short_key_is_the_keys_error_not_the_stores(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agui_chat", "serve", "--port", "0"],
        cwd=tmp_path,
        env=_env("short"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "agui-chat: error: AGUI_CHAT_SIGNING_KEY is 5 bytes long; a signing key must be at "
        "least 16 bytes (make one with: python -c 'import secrets; "
        "print(secrets.token_hex(32))')"
    ]
    assert list(tmp_path.iterdir()) == []  # refused before any store was opened
