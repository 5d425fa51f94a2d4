"""A SQLite file locked by another process's writer is a wait, not a fault: the store answers
``ApprovalStoreUnavailableError`` while the lock lasts and goes on with the connection it has
once the lock is gone (a broken connection would be replaced instead). Its one connection
lives on a worker thread named for the store, which is what a stack dump of a stuck server
shows. Against real SQLite files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agui_chat import ApprovalStoreUnavailableError
from agui_chat.stores import SQLiteApprovalStore

#: How the test itself opens a file, as another process would (not counted in ``opened``).
connect_elsewhere = sqlite3.connect


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The databases the store opens during the test, in order."""
    seen: list[str] = []

    def counting(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        seen.append(str(args[0]))
        connection: sqlite3.Connection = connect_elsewhere(*args, **kwargs)
        return connection

    monkeypatch.setattr(sqlite3, "connect", counting)
    return seen


async def test_a_file_another_writer_holds_is_unavailable_and_then_used_with_the_same_connection(
    tmp_path: Path, opened: list[str]
) -> None:
    path = tmp_path / "approvals.db"
    store = SQLiteApprovalStore(path, busy_timeout=0.05)
    assert await store.claim("before", expires_at=None, owner="a")
    assert opened == [str(path)]
    other = connect_elsewhere(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process's write transaction
    try:
        with pytest.raises(ApprovalStoreUnavailableError, match="database is locked"):
            await store.claim("during", expires_at=None, owner="a")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert await store.claim("during", expires_at=None, owner="a")
    assert await store.claim("before", expires_at=None, owner="b") is False
    assert opened == [str(path)]  # the connection it had, never replaced
    await store.aclose()


async def test_the_store_works_on_one_thread_named_for_it(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    store = SQLiteApprovalStore(tmp_path / "approvals.db")
    assert await store.claim("k", expires_at=None)
    assert await store.get_result("k") is None
    started = [t.name for t in set(threading.enumerate()) - before]
    await store.aclose()
    assert started == ["agui-sqlite_0"]
