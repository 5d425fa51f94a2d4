"""A SQLite store recovers from a file that was read-only (or failed with an I/O error) once
the file is writable again, without a restart; a directory it cannot write is refused at
once with a typed error that says what to check, never after a busy-timeout wait. A file or
directory this process may not write is a misconfiguration (``ApprovalStoreMisconfiguredError``:
retrying does not help until it is fixed), an I/O error or a lock an outage
(``ApprovalStoreUnavailableError``). Against
real files made read-only (``chattr +i`` as root, whom file modes do not stop; ``chmod``
otherwise)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agui_chat import ApprovalStoreMisconfiguredError, ApprovalStoreUnavailableError
from agui_chat.stores import SQLiteApprovalStore
from agui_chat.stores import _sqlite as sqlite_module
from file_faults import read_only


def no_busy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the store waits as it does for a locked file."""

    def sleep(seconds: float) -> None:
        raise AssertionError(f"the store waited {seconds} s as for a locked file")

    monkeypatch.setattr(sqlite_module.time, "sleep", sleep)


async def test_a_file_opened_read_only_is_opened_again_once_it_is_writable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.db"
    first = SQLiteApprovalStore(path)
    assert await first.claim("before", expires_at=None, owner="a")
    await first.aclose()
    store = SQLiteApprovalStore(path)  # a worker that starts while the file is read-only
    with read_only(path):
        for key in ("k1", "k2"):
            with pytest.raises(ApprovalStoreMisconfiguredError, match="readonly") as failed:
                await store.claim(key, expires_at=None, owner="b")
        assert "must be writable by this process" in str(failed.value)
    assert await store.claim("k1", expires_at=None, owner="b")  # the same store, no restart
    assert await store.claim("before", expires_at=None, owner="b") is False  # nothing lost
    await store.aclose()
    with sqlite3.connect(path) as db:
        assert {r[0] for r in db.execute("SELECT key FROM agui_chat_approvals")} == {
            "before",
            "k1",
        }


async def test_a_connection_that_failed_is_replaced_on_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an I/O error the store opens a new connection; after "locked" it keeps its own."""
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def counting(*args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append(connect(*args, **kwargs))  # type: ignore[arg-type]
        return opened[-1]

    monkeypatch.setattr(sqlite3, "connect", counting)
    store = SQLiteApprovalStore(tmp_path / "a.db", busy_timeout=0.05)
    assert await store.claim("k", expires_at=None)

    def disk_io(db: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(ApprovalStoreUnavailableError, match="disk I/O error"):
        await store._run(disk_io)
    assert await store.claim("k2", expires_at=None)
    assert len(opened) == 2

    def locked(db: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(ApprovalStoreUnavailableError, match="locked"):
        await store._run(locked)
    assert await store.claim("k3", expires_at=None)
    assert len(opened) == 2  # a locked file is a wait for another writer, not a broken one
    await store.aclose()


async def test_a_read_only_directory_with_an_existing_file_is_refused_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WAL mode needs -wal and -shm files beside the database: a directory that cannot hold
    them is refused at once (SQLite's answer is not "locked", so nothing waits for it),
    with the default 10 s busy timeout; once writable, the same store opens."""
    folder = tmp_path / "state"
    folder.mkdir()
    path = folder / "a.db"
    seed = SQLiteApprovalStore(path)
    assert await seed.claim("before", expires_at=None)
    await seed.aclose()  # closing removes the -wal and -shm files
    store = SQLiteApprovalStore(path)
    with read_only(folder):
        no_busy_wait(monkeypatch)
        with pytest.raises(ApprovalStoreMisconfiguredError) as failed:
            await store.claim("k", expires_at=None)
    message = str(failed.value)
    assert message.startswith(f"cannot open the approval store sqlite:///{path}: ")
    assert "its directory must be writable" in message
    monkeypatch.undo()
    assert await store.claim("k", expires_at=None)
    assert await store.claim("before", expires_at=None) is False
    await store.aclose()


async def test_a_read_only_directory_without_the_file_is_refused_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    store = SQLiteApprovalStore(folder / "a.db")
    with read_only(folder):
        no_busy_wait(monkeypatch)
        with pytest.raises(ApprovalStoreMisconfiguredError, match="unable to open database file"):
            await store.claim("k", expires_at=None)
    monkeypatch.undo()
    assert await store.claim("k", expires_at=None)
    await store.aclose()


async def test_a_file_another_process_is_opening_is_still_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait kept for "locked" while switching to WAL: it retries, then opens."""
    answers = iter([sqlite3.OperationalError("database is locked")])
    calls: list[float] = []
    real = sqlite_module._use_wal

    class Flaky:
        def __init__(self, connection: sqlite3.Connection) -> None:
            self.connection = connection

        def execute(self, sql: str) -> object:
            for error in answers:
                raise error
            return self.connection.execute(sql)

    monkeypatch.setattr(sqlite_module.time, "sleep", calls.append)
    monkeypatch.setattr(
        sqlite_module, "_use_wal", lambda connection, deadline: real(Flaky(connection), deadline)
    )
    store = SQLiteApprovalStore(tmp_path / "a.db")
    assert await store.claim("k", expires_at=None)
    assert calls == [0.005]
    await store.aclose()
