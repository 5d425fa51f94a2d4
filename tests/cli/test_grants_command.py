"""``agui-chat grants --store URL``: the live grants of a server's store, each exactly as
``Grant.describe()`` says it with the call as the display shows it (escaped); ``--thread`` and
``--principal`` select; ``--revoke`` ends one at once (the server asks again), and a grant that
is not live is exit status 1. The grants are made by an ``AGUIServer`` over a SQLite file."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from governance_agent import (
    EVIL_ESCAPED,
    EVIL_PATH,
    RAW,
    Conversation,
    GovernedAgent,
    governed_server,
    remembered_on,
)
from test_audit_command import agui_chat as agui_chat_process
from test_help_and_errors import Outcome, agui_chat  # noqa: F401  (a fixture)

from agui_chat.stores import Grant, store_from_url

Run = Callable[..., Outcome]


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'approvals.db'}"


LINE = re.compile(
    r"(?P<id>\S+)  don't ask again for (?P<call>.+) in this conversation until "
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC  \(thread: (?P<thread>\S+); granted by: alice\)"
)


def test_grants_lists_each_live_grant_exactly(store: str, agui_chat: Run) -> None:  # noqa: F811
    first, _ = remembered_on(store, "one.txt")
    second, _ = remembered_on(store, "evil")
    out = agui_chat("grants", "--store", store)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    matches = [LINE.fullmatch(line) for line in lines]
    assert all(matches), lines
    assert [(m["call"], m["thread"]) for m in matches if m] == [
        ('write_note(path="one.txt")', first),
        ('write_note(path="notes/\\u202etxt.exe\\u001b[2J\\u200b")', second),
    ]
    for char in RAW:  # the store is outside input: nothing of it reaches the terminal raw
        assert char not in out.stdout
    assert EVIL_ESCAPED[0] in out.stdout

    only = agui_chat("grants", "--store", store, "--thread", first)
    assert only.stdout.splitlines() == lines[:1]
    nobody = agui_chat("grants", "--store", store, "--principal", "alice")
    assert nobody.stdout == f"no live grants for alice in {store}\n"  # thread grants, not hers


def test_grants_json_is_each_grant_as_the_store_keeps_it(
    store: str,
    agui_chat: Run,  # noqa: F811
) -> None:
    thread, _ = remembered_on(store, "evil")
    out = agui_chat("grants", "--store", store, "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.isascii()
    (line,) = out.stdout.splitlines()
    grant = Grant.from_dict(json.loads(line))
    assert grant.tool == "write_note" and grant.arguments == {"path": EVIL_PATH}
    assert grant.scope == "thread" and grant.thread_id == thread
    assert grant.granted_by is not None and grant.granted_by.id == "alice"
    assert 599 <= (grant.expires - grant.created).total_seconds() <= 600


def test_revoking_a_grant_makes_the_server_ask_again(store: str) -> None:
    async def converse() -> None:
        kept = store_from_url(store)
        try:
            async with Conversation(governed_server(GovernedAgent(), kept)) as chat:
                assert await chat.note("again.txt", remember=True) == 1
                assert await chat.note("again.txt") == 0  # remembered
                out = agui_chat_process("grants", "--store", store)
                (line,) = out.stdout.splitlines()
                match = LINE.fullmatch(line)
                assert match is not None
                grant_id = match["id"]

                # Not among those selected: nothing is revoked.
                other = agui_chat_process(
                    "grants", "--store", store, "--thread", "other", "--revoke", grant_id
                )
                assert other.returncode == 1
                assert other.stderr == (
                    f"agui-chat: error: no live grant {grant_id} among those selected in "
                    f"{store}: nothing was revoked\n"
                )
                assert await chat.note("again.txt") == 0  # still remembered

                out = agui_chat_process(
                    "grants", "--store", store, "--thread", chat.thread, f"--revoke={grant_id}"
                )
                assert out.returncode == 0, out.stderr
                assert out.stdout == (
                    f"revoked grant {grant_id}: its calls will be asked about again\n"
                )
                assert await chat.note("again.txt") == 1  # asked again, in that conversation
                listed = agui_chat_process("grants", "--store", store)
                assert listed.stdout == f"no live grants in {store}\n"

                again = agui_chat_process("grants", "--store", store, "--revoke", grant_id)
                assert again.returncode == 1
                assert again.stdout == ""
                assert again.stderr == (
                    f"agui-chat: error: no live grant {grant_id} in {store}: nothing was revoked\n"
                )
        finally:
            await kept.aclose()

    asyncio.run(converse())


def test_an_id_from_the_command_line_is_printed_escaped(store: str, agui_chat: Run) -> None:  # noqa: F811
    remembered_on(store, "x.txt")
    out = agui_chat("grants", "--store", store, "--revoke", "\x1b]0;pwned\x07id")
    assert out.returncode == 1
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    assert "no live grant \\x1b]0;pwned\\x07id in" in out.stderr
