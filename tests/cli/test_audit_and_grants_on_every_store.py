"""``agui-chat audit`` and ``agui-chat grants`` against a real Redis and a real PostgreSQL
(started on 127.0.0.1 by the fixtures of ``tests/redis_server.py`` and
``tests/postgres_server.py``), the records written by an ``AGUIServer`` run over the same
store; and every way a store can fail is one line naming it, its password never printed."""

from __future__ import annotations

import contextlib
import re
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from governance_agent import remembered_on
from test_help_and_errors import Outcome, agui_chat  # noqa: F401  (a fixture)
from test_serve_never_prints_a_store_secret import SECRET, closed_port

from postgres_server import PASSWORD, PostgresServer
from redis_server import RedisServer

Run = Callable[..., Outcome]


def test_audit_and_grants_on_a_real_redis(
    redis_server: RedisServer,
    agui_chat: Run,  # noqa: F811
) -> None:
    thread, asked = remembered_on(redis_server.url, "r.txt", times=2)
    assert asked == 1  # the second call ran on the grant
    out = agui_chat("audit", "--store", redis_server.url, "--verify")
    assert out.returncode == 0, out.stderr
    verified, approved, remembered = out.stdout.splitlines()
    assert verified == "verified 2 records"
    assert 'approved  write_note(path="r.txt")  approver: alice  requester: alice' in approved
    grant = re.search(r"  grant: (\S+)  outcome: ran$", remembered)
    assert grant is not None and "remembered" in remembered

    listed = agui_chat("grants", "--store", redis_server.url, "--thread", thread)
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert line.startswith(
        f'{grant.group(1)}  don\'t ask again for write_note(path="r.txt") in this conversation '
        "until "
    )
    assert line.endswith(f"UTC  (thread: {thread}; granted by: alice)")

    revoked = agui_chat("grants", "--store", redis_server.url, "--revoke", grant.group(1))
    assert revoked.returncode == 0, revoked.stderr
    assert agui_chat("grants", "--store", redis_server.url).stdout == (
        f"no live grants in {redis_server.url}\n"
    )


def test_audit_and_grants_on_a_real_postgresql_never_print_its_password(
    postgres_server: PostgresServer,
    agui_chat: Run,  # noqa: F811
) -> None:
    url = postgres_server.url
    assert PASSWORD in url
    thread, asked = remembered_on(url, "p.txt", user="bob", times=2)
    assert asked == 1
    out = agui_chat("audit", "--store", url, "--thread", thread)
    assert out.returncode == 0, out.stderr
    decisions = [line.split()[4] for line in out.stdout.splitlines()]
    assert decisions == ["approved", "remembered"]
    assert all("approver: bob  requester: bob" in line for line in out.stdout.splitlines())

    listed = agui_chat("grants", "--store", url, "--thread", thread, "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"path": "p.txt"' in listed.stdout

    # The one line that names the store names it without its password.
    none = agui_chat("grants", "--store", url, "--thread", "no-such-thread")
    shown = url.replace(PASSWORD, "***")
    assert none.stdout == f"no live grants of thread no-such-thread in {shown}\n"
    missing = agui_chat("grants", "--store", url, "--revoke", "no-such-grant")
    assert missing.returncode == 1
    assert missing.stderr == (
        f"agui-chat: error: no live grant no-such-grant in {shown}: nothing was revoked\n"
    )
    for each in (out, listed, none, missing):
        assert PASSWORD not in each.stdout + each.stderr


@pytest.mark.parametrize(
    ("store", "shown"),
    [
        ("redis://:{secret}@127.0.0.1:{port}/0", "redis://:***@127.0.0.1:{port}/0"),
        (
            "redis://127.0.0.1:{port}/0?passw%6Frd={secret}",
            "redis://127.0.0.1:{port}/0?passw%6Frd=***",
        ),
        (
            "postgresql://agui:{secret}@127.0.0.1:{port}/postgres",
            "postgresql://agui:***@127.0.0.1:{port}/postgres",
        ),
    ],
)
@pytest.mark.parametrize("command", ["audit", "grants"])
def test_a_store_that_cannot_be_reached_is_one_line_naming_it_without_its_password(
    store: str,
    shown: str,
    command: str,
    agui_chat: Run,  # noqa: F811
) -> None:
    port = closed_port()
    out = agui_chat(command, "--store", store.format(port=port, secret=SECRET))
    assert out.returncode == 1
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()  # no driver's log lines, no traceback
    assert line.startswith(
        f"agui-chat: error: the approval store {shown.format(port=port)} is unavailable: "
    )
    assert SECRET not in out.stderr


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ("memory://", "--store memory:// is this command's own store, always empty"),
        ("sqlite:///{tmp}/nothing-here.db", "no SQLite file at {tmp}/nothing-here.db"),
        (
            "mongodb://root:{secret}@127.0.0.1/x",
            "--store: cannot read the approval store URL 'mongodb://root:***@127.0.0.1/x'",
        ),
    ],
)
def test_a_store_url_that_would_read_nothing_is_refused_in_one_line(
    store: str,
    says: str,
    tmp_path: Path,
    agui_chat: Run,  # noqa: F811
) -> None:
    out = agui_chat("audit", "--store", store.format(tmp=tmp_path, secret=SECRET))
    assert out.returncode == 1
    (line,) = out.stderr.splitlines()
    assert says.format(tmp=tmp_path) in line
    assert SECRET not in line
    assert not (tmp_path / "nothing-here.db").exists()


@pytest.mark.parametrize("command", ["audit", "grants"])
def test_a_sqlite_file_that_is_not_a_store_is_left_alone(
    command: str,
    tmp_path: Path,
    agui_chat: Run,  # noqa: F811
) -> None:
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.commit()
    before = other.read_bytes()
    out = agui_chat(command, "--store", f"sqlite:///{other}")
    assert out.returncode == 1
    (line,) = out.stderr.splitlines()
    assert line == (
        f"agui-chat: error: --store sqlite:///{other}: {other} is not an approval store (it "
        "has no agui_chat_approvals table); nothing was changed"
    )
    assert other.read_bytes() == before
    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n")
    out = agui_chat(command, "--store", f"sqlite:///{junk}")
    (line,) = out.stderr.splitlines()
    assert line.endswith(f"cannot read {junk}: file is not a database")


def test_a_reader_that_stops_reading_ends_the_listing_quietly(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'approvals.db'}"
    remembered_on(url, "n.txt", times=2)
    # head -n 0 leaves at once, long before the command prints its first line.
    command = f"{shlex.quote(sys.executable)} -m agui_chat audit --store {shlex.quote(url)}"
    done = subprocess.run(
        ["bash", "-c", f"{command} | head -n 0; echo status=${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "status=141\n"
    assert done.stderr == ""
