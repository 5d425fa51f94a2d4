"""``--help`` of ``agui-chat audit`` and ``agui-chat grants`` describes every option, the
top-level help says what each does, and ``chat --help`` tells of "don't ask again", ``/grants``
and ``/revoke``. A missing ``--store`` is argparse's usage error, never a traceback."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from test_help_and_errors import Outcome, agui_chat, assert_describes  # noqa: F401  (a fixture)

Run = Callable[..., Outcome]

HELP = {
    "audit": [
        (r"--store URL", r"sqlite:///file\.db.*password is never printed"),
        (r"--thread ID", r"only the records of this conversation"),
        (r"--verify", r"hash chain.*verified N records.*status 1"),
        (r"--json", r"one JSON object per record.*ISO 8601"),
    ],
    "grants": [
        (r"--store URL", r"sqlite:///file\.db.*password is never printed"),
        (r"--thread ID", r"only the grants of this conversation"),
        (r"--principal ID", r"only the grants made for this principal"),
        (r"--revoke GRANT_ID", r"revoke this grant \(exit status 1 if it is not live"),
        (r"--json", r"one JSON object per grant"),
    ],
}


@pytest.mark.parametrize("command", sorted(HELP))
def test_help_describes_every_option(command: str, agui_chat: Run) -> None:  # noqa: F811
    out = agui_chat(command, "--help")
    assert out.returncode == 0
    text = re.sub(r"\n\s{10,}", " ", out.stdout)  # an option's help on one line
    assert_describes(command, text, HELP[command])
    assert len(out.stdout.split("\n\n")[1].split()) >= 20  # a description, not just usage


def test_top_level_help_names_the_governance_commands(agui_chat: Run) -> None:  # noqa: F811
    out = agui_chat("--help")
    assert out.returncode == 0
    assert re.search(
        r"^\s+audit\s+print the audit trail of a server's approval store", out.stdout, re.M
    )
    assert re.search(r"^\s+grants\s+list the remembered approvals", out.stdout, re.M)


def test_chat_help_tells_of_remembering_and_the_slash_commands(agui_chat: Run) -> None:  # noqa: F811
    text = " ".join(agui_chat("chat", "--help").stdout.split())
    assert "[d]on't ask again: the same call, in this conversation, for 10 minutes" in text
    assert "Type /grants to list what this conversation remembers, /revoke ID to end one" in text


@pytest.mark.parametrize("command", ["audit", "grants"])
def test_a_missing_store_is_a_usage_error(command: str, agui_chat: Run) -> None:  # noqa: F811
    out = agui_chat(command)
    assert out.returncode == 2
    assert "the following arguments are required: --store" in out.stderr
    assert "Traceback" not in out.stderr
