"""docs/errors.md is the stable table of the server's error codes: every code the server can
send (read from its source, its table of token refusals and the consent engine's refusals)
has a row, every row is a
code the server sends, and every code the CLI explains in its own words is one of them."""

from __future__ import annotations

import re
from pathlib import Path

from agui_chat.agui.server._resume_check import TOKEN_REFUSALS
from agui_chat.cli import _errors

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "src" / "agui_chat" / "agui" / "server"
#: The consent engine names the precise code of some refusals itself (``code="..."``).
ENGINE = ROOT / "src" / "agui_chat" / "consent"
DOC = (ROOT / "docs" / "errors.md").read_text()

_RAISED = re.compile(r"(?:ResumeRejected|InputError)\(\s*(?:\d+,\s*)?f?\"([^\"]+)\"")
_TABLED = re.compile(r"\(\w+Error, \"([A-Z_]+)\", \"")  # the (error type, code, message) tables
_RETURNED = re.compile(r"return \"[^\"]*\", \"([A-Z_]+)\"")  # _safe_error
_CODED = re.compile(r"code=\"([A-Z_]+)\"")


def server_codes() -> set[str]:
    codes = {
        code.format(kind=kind)
        for code, _ in TOKEN_REFUSALS.values()
        for kind in ("APPROVAL", "INTERRUPT")
    }
    for module in SERVER.glob("*.py"):
        text = module.read_text()
        for found in [*_RAISED.findall(text), *_TABLED.findall(text), *_RETURNED.findall(text)]:
            if found.startswith("{"):  # f"{prefix}_FORGED": both kinds of interrupt
                rest = found.split("}", 1)[1]
                codes |= {f"APPROVAL{rest}", f"INTERRUPT{rest}"}
            else:
                codes.add(found)
    for module in ENGINE.glob("*.py"):
        codes |= set(_CODED.findall(module.read_text()))
    return codes


def documented_codes() -> set[str]:
    rows = [line for line in DOC.splitlines() if line.startswith("| ")]
    return {code for row in rows for code in re.findall(r"`([A-Z]+(?:_[A-Z]+)+)`", row)}


def test_the_source_scan_finds_the_codes() -> None:
    assert {"APPROVAL_FORGED", "APPROVAL_KEY_CHANGED", "MODEL_ERROR", "INVALID_JSON"} <= (
        server_codes()
    )


def test_every_code_the_server_sends_has_a_row() -> None:
    missing = server_codes() - documented_codes()
    assert not missing, f"add a row to docs/errors.md for {sorted(missing)}"


def test_every_row_is_a_code_the_server_sends() -> None:
    named_in_passing = {"ANSWER_RETENTION", "AGUI_CHAT_SIGNING_KEY", "RUN_FINISHED"}
    assert documented_codes() - server_codes() <= named_in_passing


def test_every_code_the_cli_explains_is_documented() -> None:
    assert set(_errors._RUN_ERRORS) <= documented_codes()
