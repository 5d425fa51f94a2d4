"""``agui-chat audit --store URL``: the trail a server run wrote, one line a record (or every
field as JSON with ``--json``), everything read from the store escaped; ``--verify`` checks
the hash chain and names the first record a tampered file broke, exit status 1 and one line.

The trail is written by a live ``AGUIServer`` (uvicorn on 127.0.0.1) over a SQLite file, driven
by the real ``agui-chat chat`` in a child process; the ``audit`` command runs as a real process
too (a store is shared between processes, never memory)."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from governance_agent import EVIL_ESCAPED, EVIL_PATH, RAW, governed_agent
from test_cli import run

from agui_chat.stores import AuditRecord


def agui_chat(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run(*args, stdin=stdin, timeout=60)


#: What the person types: approve, reject with a reason, approve remembering, the same again.
SESSION = "clean a.txt\ny\nclean b.txt\nn\nno way\nnote evil\nd\nnote evil\n\n"


@dataclasses.dataclass
class Trail:
    path: Path
    started: datetime

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def copy(self, to: Path) -> str:
        """A copy of the store's file, its write-ahead log included (for tampering): its
        URL."""
        with sqlite3.connect(self.path) as source, sqlite3.connect(to) as copy:
            source.backup(copy)
        return f"sqlite:///{to}"


@pytest.fixture(scope="module")
def trail(tmp_path_factory: pytest.TempPathFactory) -> Trail:
    path = tmp_path_factory.mktemp("trail") / "approvals.db"
    started = datetime.now(timezone.utc)
    with governed_agent(f"sqlite:///{path}") as (url, agent, _):
        out = agui_chat("chat", url, "--header", "X-User: alice", stdin=SESSION)
        assert out.returncode == 0, out.stdout + out.stderr
        assert agent.deleted == ["a.txt"]
        assert agent.notes == [EVIL_PATH, EVIL_PATH]  # the second ran without asking
    return Trail(path, started)


def json_records(url: str, *args: str) -> list[dict[str, Any]]:
    out = agui_chat("audit", "--store", url, "--json", *args)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_audit_prints_one_line_per_record_the_server_run_wrote(trail: Trail) -> None:
    out = agui_chat("audit", "--store", trail.url)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    assert len(lines) == 4, out.stdout
    evil = 'write_note(path="notes/\\u202etxt.exe\\u001b[2J\\u200b")'
    expected = [
        ("approved", 'delete_file(path="a.txt")', "outcome: ran"),
        ("rejected", 'delete_file(path="b.txt")', 'outcome: -  reason: "no way"'),
        ("approved", evil, "outcome: ran"),
        ("remembered", evil, "grant: ", "outcome: ran"),
    ]
    seqs = []
    for line, (decision, call, *rest) in zip(lines, expected, strict=True):
        seq, day, clock, utc, shown_decision, tail = line.split(maxsplit=5)
        seqs.append(int(seq))
        when = datetime.fromisoformat(f"{day}T{clock}+00:00")
        assert utc == "UTC"
        assert trail.started - timedelta(seconds=1) <= when <= datetime.now(timezone.utc)
        assert shown_decision == decision
        assert tail.startswith(f"{call}  approver: alice  requester: alice  ")
        for piece in rest:
            assert piece in tail, line
    assert seqs == sorted(seqs) and seqs[0] == 1
    # The grant named by the remembered record is the one the approval made.
    grant = re.search(r"grant: (\S+)", lines[3])
    assert grant is not None
    (made,) = [r["grant_id"] for r in json_records(trail.url) if r["grant_id"]]
    assert grant.group(1) == made


def test_audit_json_has_every_field_of_each_record(trail: Trail) -> None:
    out = agui_chat("audit", "--store", trail.url, "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.isascii()  # every other character as a JSON escape
    records = [json.loads(line) for line in out.stdout.splitlines()]
    fields = [f.name for f in dataclasses.fields(AuditRecord)]
    assert [list(r) for r in records] == [fields] * 4
    first, rejected, approved, remembered = records
    assert first["decision"] == "approved" and first["tool"] == "delete_file"
    assert first["arguments"] == {"path": "a.txt"}
    assert first["approver"] == {"id": "alice"} and first["requester"] == {"id": "alice"}
    assert first["outcome"] == "ran" and len(first["result_sha256"]) == 64
    assert first["prev_hash"] == "0" * 64 and len(first["hash"]) == 64
    moment = datetime.fromisoformat(first["time"])
    assert moment.utcoffset() == timedelta(0)
    assert rejected["reason"] == "no way" and rejected["outcome"] is None
    assert approved["arguments"] == {"path": EVIL_PATH}  # exactly, escapes undone by JSON
    assert remembered["decision"] == "remembered" and remembered["grant_id"]
    assert len({r["thread_id"] for r in records}) == 1
    assert all(r["audience"] == first["audience"] for r in records)


def test_audit_of_one_thread(trail: Trail) -> None:
    (thread,) = {r["thread_id"] for r in json_records(trail.url)}
    assert len(json_records(trail.url, "--thread", thread)) == 4
    out = agui_chat("audit", "--store", trail.url, "--thread", "another-thread")
    assert out.returncode == 0
    assert out.stdout == f"no audit records of thread another-thread in {trail.url}\n"
    assert json_records(trail.url, "--thread", "another-thread") == []


def test_verify_counts_the_records_of_an_intact_trail(trail: Trail) -> None:
    out = agui_chat("audit", "--store", trail.url, "--verify")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "verified 4 records"
    assert len(out.stdout.splitlines()) == 5
    # With --json the count goes to stderr: stdout stays JSON lines.
    out = agui_chat("audit", "--store", trail.url, "--verify", "--json")
    assert out.returncode == 0
    assert out.stderr == "verified 4 records\n"
    assert len([json.loads(line) for line in out.stdout.splitlines()]) == 4


def one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("agui-chat: error: ")
    return line


def test_verify_names_the_record_a_tampered_file_altered(trail: Trail, tmp_path: Path) -> None:
    url = trail.copy(tmp_path / "tampered.db")
    rejected = json_records(url)[1]
    with sqlite3.connect(tmp_path / "tampered.db") as db:
        changed = db.execute(
            "UPDATE agui_chat_audit SET body = replace(body, '\"no way\"', '\"fine\"') "
            "WHERE seq = ?",
            (rejected["seq"],),
        ).rowcount
    assert changed == 1
    out = agui_chat("audit", "--store", url, "--verify")
    line = one_line_error(out)
    assert line == (
        f"agui-chat: error: the audit trail of {url} does not verify: audit record "
        f"{rejected['seq']} was altered (its hash does not match its content and the record "
        "before it)"
    )
    assert out.stdout == ""  # nothing of a trail that does not verify is printed
    # Without --verify it is printed as kept: the altered reason is there to see.
    assert 'reason: "fine"' in agui_chat("audit", "--store", url).stdout


def test_verify_names_a_record_deleted_from_the_file(trail: Trail, tmp_path: Path) -> None:
    url = trail.copy(tmp_path / "cut.db")
    with sqlite3.connect(tmp_path / "cut.db") as db:
        db.execute("DELETE FROM agui_chat_audit WHERE seq = 2")
    line = one_line_error(agui_chat("audit", "--store", url, "--verify", "--json"))
    assert "audit record 2 is missing" in line


def test_control_and_bidi_characters_from_the_store_are_printed_escaped(trail: Trail) -> None:
    for args in ((), ("--verify",)):
        out = agui_chat("audit", "--store", trail.url, *args)
        assert out.returncode == 0
        for char in RAW:
            assert char not in out.stdout
        for escaped in EVIL_ESCAPED:
            assert escaped.replace("\\x1b", "\\u001b") in out.stdout


def test_an_unreadable_record_is_one_line_pointing_at_verify(trail: Trail, tmp_path: Path) -> None:
    url = trail.copy(tmp_path / "broken.db")
    with sqlite3.connect(tmp_path / "broken.db") as db:
        db.execute("UPDATE agui_chat_audit SET body = '{not json' WHERE seq = 1")
    line = one_line_error(agui_chat("audit", "--store", url))
    assert f"the audit trail of {url} holds a record that cannot be read" in line
    assert "check it with --verify" in line
    assert "audit record 1 was altered" in one_line_error(
        agui_chat("audit", "--store", url, "--verify")
    )
