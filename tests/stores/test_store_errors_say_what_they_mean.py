"""A store error says what it means, so that only an outage is retried: a store that refuses
this server (no rights on its table, a wrong password, an ACL without the command, a file it
may not write) is ``ApprovalStoreMisconfiguredError``, a value it cannot hold
``ApprovalStoreValueError``, and only a store out of reach ``ApprovalStoreUnavailableError``.
Against a real PostgreSQL and real Redis servers on 127.0.0.1; messages name the store, never
its password."""

from __future__ import annotations

import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agui_chat import (
    ApprovalStoreMisconfiguredError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
)
from agui_chat.stores import PostgresApprovalStore, RedisApprovalStore
from postgres_server import PostgresServer
from real_components import require
from redis_server import HOW as REDIS_HOW
from redis_server import RedisServer, _free_port


async def a_role(postgres: PostgresServer, grants: str = "") -> str:
    """A login role of its own (and ``grants`` run as the superuser): its URL."""
    name, password = f"limited_{uuid.uuid4().hex[:8]}", secrets.token_hex(8)
    async with await psycopg.AsyncConnection.connect(postgres.url, autocommit=True) as db:
        await db.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        if grants:
            await db.execute(grants.format(role=name))
    return postgres.url.replace(postgres.url.split("//")[1].split("@")[0], f"{name}:{password}")


async def test_a_role_that_may_not_create_the_table_is_misconfigured(
    postgres_server: PostgresServer,
) -> None:
    url = await a_role(postgres_server)
    store = PostgresApprovalStore(url, table=f"t_{uuid.uuid4().hex[:8]}", timeout=1.0)
    with pytest.raises(ApprovalStoreMisconfiguredError, match="refused") as failed:
        await store.claim("k", expires_at=None)
    assert url.split(":")[2].split("@")[0] not in str(failed.value)  # never the password
    await store.aclose()


async def test_a_role_without_rights_on_an_existing_table_is_misconfigured(
    postgres_server: PostgresServer,
) -> None:
    table = f"t_{uuid.uuid4().hex[:8]}"
    owner = PostgresApprovalStore(postgres_server.url, table=table)
    assert await owner.claim("made", expires_at=None)  # the table, made by its owner
    await owner.aclose()
    url = await a_role(postgres_server, f"GRANT SELECT ON {table} TO {{role}}")
    store = PostgresApprovalStore(url, table=table, timeout=1.0)
    with pytest.raises(ApprovalStoreMisconfiguredError):
        await store.claim("k", expires_at=None)
    await store.aclose()


async def test_a_role_with_the_rights_a_dba_grants_works_on_a_table_made_for_it(
    postgres_server: PostgresServer,
) -> None:
    """The table made by an administrator, the server's role granted only what it needs on
    it: the store works without rights to create anything."""
    table = f"t_{uuid.uuid4().hex[:8]}"
    owner = PostgresApprovalStore(postgres_server.url, table=table)
    await owner.epoch()
    await owner.aclose()
    url = await a_role(
        postgres_server,
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table}, {table}_meta TO {{role}}",
    )
    store = PostgresApprovalStore(url, table=table, timeout=1.0)
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    await store.record_result("k", "done")
    assert await store.get_result("k") == "done"
    await store.aclose()


async def test_a_postgres_that_is_down_is_an_outage(postgres_server: PostgresServer) -> None:
    port = _free_port()
    url = postgres_server.url.replace(f":{postgres_server.port}/", f":{port}/")
    store = PostgresApprovalStore(url, timeout=0.5)
    with pytest.raises(ApprovalStoreUnavailableError, match="is unavailable"):
        await store.claim("k", expires_at=None)
    await store.aclose()


@pytest.fixture
def guarded_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of its own: a user ``limited`` that may not run scripts, and a bulk limit of
    1 MiB (the least Redis allows) so that a value can be too large for it."""
    server = RedisServer(require("redis-server", REDIS_HOW), tmp_path)
    server.start()
    command = ["redis-cli", "-p", str(server.port)]
    for argv in (
        ["ACL", "SETUSER", "limited", "on", ">limited-pw", "~*", "+@all", "-@scripting"],
        ["CONFIG", "SET", "proto-max-bulk-len", "1mb"],
    ):
        subprocess.run([*command, *argv], check=True, capture_output=True, timeout=10)
    yield server
    server.stop()


async def test_a_redis_user_without_the_commands_is_misconfigured(
    guarded_redis: RedisServer,
) -> None:
    url = f"redis://limited:limited-pw@127.0.0.1:{guarded_redis.port}/0"
    store = RedisApprovalStore(url, timeout=1.0)
    with pytest.raises(ApprovalStoreMisconfiguredError) as failed:
        await store.claim("k", expires_at=None)
    assert "limited-pw" not in str(failed.value)
    await store.aclose()


async def test_a_wrong_redis_password_is_misconfigured(guarded_redis: RedisServer) -> None:
    url = f"redis://limited:wrong-pw@127.0.0.1:{guarded_redis.port}/0"
    store = RedisApprovalStore(url, timeout=1.0)
    with pytest.raises(ApprovalStoreMisconfiguredError) as failed:
        await store.claim("k", expires_at=None)
    assert "wrong-pw" not in str(failed.value)
    await store.aclose()


async def test_a_result_over_the_redis_limit_is_a_value_error_and_keeps_the_claim(
    guarded_redis: RedisServer,
) -> None:
    store = RedisApprovalStore(guarded_redis.url, timeout=2.0)
    # Redis answers an over-long value by closing the connection (an outage, to a client), so
    # the store refuses it first, by the limit it read with its epoch, as a server reads it.
    await store.epoch()
    assert await store.claim("k", expires_at=time.time() + 60, owner="a")
    assert await store.mark_started("k", owner="a")
    with pytest.raises(ApprovalStoreValueError):
        await store.record_result("k", "x" * (2 * 1024 * 1024))
    held = await store.record("k")  # the claim is as it was: started, held, no result
    assert held is not None and held.started and held.result is None
    await store.record_result("k", "small")
    assert await store.get_result("k") == "small"
    await store.aclose()


async def test_a_redis_that_is_down_is_an_outage() -> None:
    store = RedisApprovalStore(f"redis://127.0.0.1:{_free_port()}/0", timeout=0.5)
    with pytest.raises(ApprovalStoreUnavailableError, match="is unavailable"):
        await store.claim("k", expires_at=None)
    await store.aclose()
