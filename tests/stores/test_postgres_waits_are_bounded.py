"""Every call of ``PostgresApprovalStore`` waits at most twice its ``timeout`` in all and
``timeout`` for a connection: a database that holds the table locked past that is an outage
(``ApprovalStoreUnavailableError``, saying how long it waited), a shorter wait is waited out,
and a lent pool whose connections are all in use is given up on after the store's own
``timeout``, not the pool's. Against a real PostgreSQL on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from agui_chat import ApprovalStoreUnavailableError
from agui_chat.stores import PostgresApprovalStore
from postgres_server import PostgresServer

TIMEOUT = 1.0


@pytest.fixture
async def store(postgres_server: PostgresServer) -> AsyncIterator[PostgresApprovalStore]:
    made = PostgresApprovalStore(
        postgres_server.url, table=f"w_{uuid.uuid4().hex[:12]}", timeout=TIMEOUT
    )
    await made.epoch()  # the tables exist before another session locks them
    yield made
    await made.aclose()


async def locked(server: PostgresServer, table: str) -> psycopg.AsyncConnection:
    """Another session holding ``table`` locked against everyone, until it rolls back."""
    holder = await psycopg.AsyncConnection.connect(server.url)
    await holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    return holder


async def test_a_table_locked_past_the_wait_is_an_outage_that_says_how_long_it_waited(
    postgres_server: PostgresServer, store: PostgresApprovalStore
) -> None:
    holder = await locked(postgres_server, store.table)
    try:
        began = time.monotonic()
        with pytest.raises(ApprovalStoreUnavailableError) as failed:
            await store.claim("k", expires_at=None, owner="a")
        waited = time.monotonic() - began
    finally:
        await holder.rollback()
        await holder.close()
    assert str(failed.value) == (
        f"the approval store {store.url} is unavailable: TimeoutError: "
        f"no answer within {2 * TIMEOUT:g} seconds"
    )
    # The whole bound is used, and not half as much again: the call stops at twice the
    # timeout (a busy machine may add a little).
    assert 2 * TIMEOUT - 0.05 <= waited < 2.9 * TIMEOUT
    assert await store.claim("k", expires_at=None, owner="a")  # nothing was claimed


async def test_a_lock_released_within_the_wait_is_waited_out(
    postgres_server: PostgresServer, store: PostgresApprovalStore
) -> None:
    """A lock held for less than twice the timeout (but longer than the timeout alone) only
    delays the claim: the store does not give up early."""
    holder = await locked(postgres_server, store.table)

    async def release_later() -> None:
        await asyncio.sleep(1.4 * TIMEOUT)
        await holder.rollback()

    releasing = asyncio.create_task(release_later())
    try:
        assert await store.claim("k", expires_at=None, owner="a")
    finally:
        await releasing
        await holder.close()
    assert await store.claim("k", expires_at=None, owner="b") is False


async def test_a_lent_pool_with_every_connection_in_use_is_given_up_on_after_the_timeout(
    postgres_server: PostgresServer,
) -> None:
    """The pool's own wait is 30 s; the store asks it for a connection for ``timeout`` only,
    on its first call (which makes the tables) as on every later one, and says the pool had
    none to give."""
    pool = AsyncConnectionPool(postgres_server.url, min_size=1, max_size=1, open=False)
    await pool.open(wait=True)
    store = PostgresApprovalStore(pool, table=f"w_{uuid.uuid4().hex[:12]}", timeout=TIMEOUT)
    none_to_give = f"is unavailable: PoolTimeout: couldn't get a connection after {TIMEOUT}"
    try:
        for call in ("first", "later"):
            async with pool.connection():  # the pool's one connection, busy elsewhere
                with pytest.raises(ApprovalStoreUnavailableError) as failed:
                    await store.claim("k", expires_at=None, owner="a")
            assert none_to_give in str(failed.value), call
            assert await store.claim(call, expires_at=None, owner="a")  # free again: it works
    finally:
        await store.aclose()
        await pool.close()
