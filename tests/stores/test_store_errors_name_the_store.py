"""A store error is read by an operator: it names the store (its URL without the password, its
file, its table), says what happened in words (lost its records, refused this server, could
not read the URL) and passes on what the store itself answered. Against memory, a SQLite
file, a real Redis and a real PostgreSQL on 127.0.0.1."""

from __future__ import annotations

import secrets
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreMisconfiguredError, ApprovalStoreResetError, ConfigurationError
from agui_chat.stores import (
    ApprovalStore,
    InMemoryApprovalStore,
    PostgresApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from file_faults import read_only
from postgres_server import PostgresServer
from redis_server import RedisServer


def reset_message(store: ApprovalStore) -> str:
    """What each kind of store says when a claim names an epoch it does not have."""
    if isinstance(store, InMemoryApprovalStore):
        return "this in-memory approval store is not the one that issued the token"
    if isinstance(store, SQLiteApprovalStore):
        return (
            f"the approval store sqlite:///{store.path} was recreated since the interrupt was "
            "issued (another epoch)"
        )
    if isinstance(store, RedisApprovalStore):
        return (
            f"the approval store {store.url} lost its records since the interrupt was issued "
            "(its epoch is another, or gone)"
        )
    assert isinstance(store, PostgresApprovalStore)
    return (
        f"the approval store {store.url} (table {store.table}) lost its records since the "
        "interrupt was issued (another epoch)"
    )


async def test_a_claim_of_another_epoch_says_which_store_lost_its_records(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    await store.epoch()
    with pytest.raises(ApprovalStoreResetError) as refused:
        await store.claim("k", expires_at=None, owner="a", epoch="AAAAAAAA.1")
    assert str(refused.value) == reset_message(store)


async def test_releasing_a_started_record_without_an_owner_says_what_is_missing(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    with pytest.raises(ValueError) as refused:
        await store.release("k", started=True)
    assert str(refused.value) == (
        "release(started=True) needs the owner whose started record it is"
    )


async def test_a_redis_that_refuses_this_user_says_it_refused_and_what_redis_answered(
    redis_server: RedisServer,
) -> None:
    """An ACL user that may not run scripts: refused (an operator must fix it), never called
    unavailable, with Redis's own words and without the password."""
    admin = redis_asyncio.Redis.from_url(redis_server.url)
    user = f"agui_noscripts_{uuid.uuid4().hex[:8]}"
    await admin.execute_command(
        "ACL", "SETUSER", user, "on", ">pw-noscripts", "~*", "+@all", "-@scripting"
    )
    store = RedisApprovalStore(f"redis://{user}:pw-noscripts@127.0.0.1:{redis_server.port}/0")
    try:
        with pytest.raises(ApprovalStoreMisconfiguredError) as refused:
            await store.claim("k", expires_at=None, owner="a")
    finally:
        await store.aclose()
        await admin.execute_command("ACL", "DELUSER", user)
        await admin.aclose()
    message = str(refused.value)
    assert message.startswith(f"the approval store {store.url} refused: NoPermissionError: ")
    assert "has no permissions to run the 'evalsha' command" in message
    assert "pw-noscripts" not in message


async def test_a_postgres_role_without_rights_on_the_table_says_it_refused_and_why(
    postgres_server: PostgresServer,
) -> None:
    table = f"t_{uuid.uuid4().hex[:12]}"
    owner = PostgresApprovalStore(postgres_server.url, table=table)
    await owner.epoch()  # the tables, made by a role that may
    await owner.aclose()
    role, password = f"norights_{uuid.uuid4().hex[:8]}", secrets.token_hex(8)
    async with await psycopg.AsyncConnection.connect(postgres_server.url, autocommit=True) as db:
        await db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    url = f"postgresql://{role}:{password}@127.0.0.1:{postgres_server.port}/postgres"
    store = PostgresApprovalStore(url, table=table, timeout=1.0)
    with pytest.raises(ApprovalStoreMisconfiguredError) as refused:
        await store.claim("k", expires_at=None, owner="a")
    await store.aclose()
    message = str(refused.value)
    assert message.startswith(f"the approval store {store.url} refused: InsufficientPrivilege: ")
    assert f"permission denied for table {table}" in message
    assert password not in message


def test_a_redis_url_that_cannot_be_read_says_why_in_redis_pys_words() -> None:
    with pytest.raises(ConfigurationError) as refused:
        RedisApprovalStore("ftp://user:pw-in-url@127.0.0.1/0")
    assert str(refused.value) == (
        "cannot read the Redis URL ftp://user:***@127.0.0.1/0: Redis URL must specify one of "
        "the following schemes (redis://, rediss://, unix://)"
    )


async def test_a_sqlite_file_that_cannot_be_created_says_what_to_check(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    path = folder / "approvals.db"
    store = SQLiteApprovalStore(path)
    with read_only(folder), pytest.raises(ApprovalStoreMisconfiguredError) as refused:
        await store.claim("k", expires_at=None)
    await store.aclose()
    assert str(refused.value) == (
        f"cannot open the approval store sqlite:///{path}: unable to open database file (the "
        "file and its directory must be writable by this process: SQLite writes a -wal and a "
        "-shm file beside it)"
    )


async def test_a_sqlite_table_altered_under_the_store_is_misconfigured_in_sqlites_words(
    tmp_path: Path,
) -> None:
    """Not an outage to retry: the file no longer holds the table the store made, and an
    operator must see to it."""
    path = tmp_path / "approvals.db"
    store = SQLiteApprovalStore(path)
    assert await store.claim("k", expires_at=None, owner="a")
    with sqlite3.connect(path, isolation_level=None) as other:
        other.execute("DROP TABLE agui_chat_approvals")
        other.execute("CREATE TABLE agui_chat_approvals (key TEXT PRIMARY KEY)")
    other.close()
    with pytest.raises(ApprovalStoreMisconfiguredError) as refused:
        await store.claim("k2", expires_at=None, owner="a")
    await store.aclose()
    assert str(refused.value) == (
        f"the approval store sqlite:///{path} failed: table agui_chat_approvals has no column "
        "named owner"
    )
