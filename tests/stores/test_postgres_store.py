"""``PostgresApprovalStore`` against a real PostgreSQL: its table created once even when many
workers start at once, its name checked, a URL's password never shown (repr, errors, logs),
an unreachable database refused within the store's own bounded wait (not the pool's 30 s)
and recovered from as soon as it is back, a lent pool left to its owner, and the URL forms
``store_from_url`` and ``serve --store`` take."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import uuid

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from agui_chat import ApprovalStoreResetError, ApprovalStoreUnavailableError
from agui_chat.stores import PostgresApprovalStore, store_from_url
from postgres_server import PASSWORD, PostgresServer


def fresh_table() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


async def tables_named(server: PostgresServer, table: str) -> int:
    async with await psycopg.AsyncConnection.connect(server.url) as db:
        found = await db.execute("SELECT count(*) FROM pg_tables WHERE tablename = %s", (table,))
        row = await found.fetchone()
    assert row is not None
    return int(row[0])


async def test_many_workers_starting_at_once_create_the_table_once_and_one_claim_wins(
    postgres_server: PostgresServer,
) -> None:
    """Twelve stores (each its own pool, as twelve worker processes would have) make their
    first call at the same moment on a missing table: none fails, exactly one claim wins."""
    table = fresh_table()
    stores = [PostgresApprovalStore(postgres_server.url, table=table) for _ in range(12)]
    try:
        won = await asyncio.gather(
            *(s.claim("k", expires_at=None, owner=f"w{i}") for i, s in enumerate(stores))
        )
        assert won.count(True) == 1
        assert await tables_named(postgres_server, table) == 1
    finally:
        await asyncio.gather(*(s.aclose() for s in stores))


async def test_tables_dropped_under_a_running_store_are_made_again_with_a_new_epoch(
    postgres_server: PostgresServer,
) -> None:
    """A database recreated (or its tables dropped) while the servers run: the store makes
    its tables again with a new epoch, so an approval used before is refused (ask again),
    never taken as new; tokens issued after claim as usual."""
    table = fresh_table()
    store = PostgresApprovalStore(postgres_server.url, table=table)
    other = PostgresApprovalStore(postgres_server.url, table=table)  # another worker
    try:
        old = await store.epoch()
        assert await other.epoch() == old  # one epoch per table, whichever worker reads it
        assert await store.claim("used", expires_at=None, epoch=old)
        assert not await other.claim("used", expires_at=None, epoch=old)
        async with await psycopg.AsyncConnection.connect(
            postgres_server.url, autocommit=True
        ) as db:
            await db.execute(f"DROP TABLE {table}, {table}_meta")
        with pytest.raises(ApprovalStoreResetError):
            await other.claim("used", expires_at=None, epoch=old)
        new = await store.epoch()
        assert new != old
        with pytest.raises(ApprovalStoreResetError):
            await store.claim("used", expires_at=None, epoch=old)
        assert await store.claim("fresh", expires_at=None, epoch=new)
        with pytest.raises(ApprovalStoreResetError):
            await store.claim("fresh", expires_at=None, epoch="")  # a token without one
    finally:
        await store.aclose()
        await other.aclose()


async def test_a_table_may_be_schema_qualified_and_a_bad_name_is_refused(
    postgres_server: PostgresServer,
) -> None:
    async with await psycopg.AsyncConnection.connect(postgres_server.url, autocommit=True) as db:
        await db.execute("CREATE SCHEMA IF NOT EXISTS agent")
    store = PostgresApprovalStore(postgres_server.url, table="agent.approvals")
    assert await store.claim("k", expires_at=None)
    assert repr(store).endswith("table='agent.approvals')")
    await store.aclose()
    for bad in ["", "a;DROP TABLE x", 'a"b', "a.b.c", "1abc", "x" * 64, "a b"]:
        with pytest.raises(ValueError, match="table must be a PostgreSQL name"):
            PostgresApprovalStore(postgres_server.url, table=bad)


async def test_the_password_is_never_in_the_repr_the_errors_or_the_logs(
    postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Wrong password, unreachable port, a password in the query: every message names the
    store with ``***``; nothing logged at any level carries the password."""
    caplog.set_level(logging.DEBUG)
    wrong = postgres_server.url.replace(PASSWORD, "not-the-pw-XYZ")
    query = f"postgresql://agui@127.0.0.1:{postgres_server.port}/postgres?password=qs-SECRET"
    closed = f"postgresql://agui:{PASSWORD}@127.0.0.1:1/postgres"
    messages = []
    for url in (wrong, query, closed):
        store = PostgresApprovalStore(url, timeout=0.5)
        messages.append(repr(store))
        with pytest.raises(ApprovalStoreUnavailableError) as failed:
            await store.claim("k", expires_at=None)
        messages.append(str(failed.value))
        await store.aclose()
    messages += [record.getMessage() for record in caplog.records]
    assert "postgresql://agui:***@127.0.0.1" in messages[1]
    assert "password=***" in messages[3]
    for secret in (PASSWORD, "not-the-pw-XYZ", "qs-SECRET"):
        assert not [m for m in messages if secret in m], secret


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:pw-LEAK@h/db?no_such_option=1",
        "postgres://u:pw-LEAK@h/db?sslmode",
        "host=h password=pw-LEAK",  # a libpq key/value string: only URLs are taken
        "redis://u:pw-LEAK@h/0",
    ],
)
def test_a_url_that_does_not_parse_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        PostgresApprovalStore(url)
    message = str(refused.value)
    assert "pw-LEAK" not in message and "cannot read the approval store URL" in message
    assert refused.value.__context__ is None or refused.value.__suppress_context__


async def test_an_unreachable_database_is_refused_within_the_stores_bounded_wait() -> None:
    """The pool waits ``timeout`` for a connection and retries connecting for as long (never
    its 30 s default); the refusal is a typed error naming the store."""
    store = PostgresApprovalStore("postgresql://agui@127.0.0.1:1/postgres", timeout=0.5)
    assert (store._pool.timeout, store._pool.reconnect_timeout) == (0.5, 0.5)
    with pytest.raises(
        ApprovalStoreUnavailableError, match=r"127\.0\.0\.1:1/postgres is unavailable"
    ):
        await store.get_result("k")
    await store.aclose()
    default = PostgresApprovalStore("postgresql://agui@127.0.0.1:1/postgres")
    assert (default._pool.timeout, default._pool.reconnect_timeout) == (2.0, 2.0)
    await default.aclose()
    with pytest.raises(ValueError, match="timeout must be positive"):
        PostgresApprovalStore("postgresql://h/db", timeout=0)


async def test_an_outage_refuses_every_call_and_the_store_answers_again_once_it_is_back(
    postgres_server: PostgresServer,
) -> None:
    """The server stopped (every pooled connection dies), then started again: while down,
    each call is ``ApprovalStoreUnavailableError``; once up, the next call succeeds (the
    dead connection is noticed and replaced) and the records made before are all there."""
    store = PostgresApprovalStore(postgres_server.url, table=fresh_table(), timeout=0.5)
    assert await store.claim("before", expires_at=None, owner="a")
    assert await store.mark_started("before", owner="a")
    postgres_server.stop()
    for call in (
        store.claim("during", expires_at=None, owner="a"),
        store.mark_started("before", owner="a"),
        store.release("before", owner="a"),
        store.record_result("before", "x"),
        store.get_result("before"),
    ):
        with pytest.raises(ApprovalStoreUnavailableError):
            await call
    postgres_server.start()
    assert await store.claim("during", expires_at=None, owner="a")  # never made while down
    assert await store.claim("before", expires_at=None, owner="b") is False  # still started
    await store.record_result("before", "done")
    assert await store.get_result("before") == "done"
    await store.aclose()


async def test_a_lent_pool_is_named_by_its_address_and_never_closed(
    postgres_server: PostgresServer,
) -> None:
    pool = AsyncConnectionPool(postgres_server.url, open=False, min_size=1)
    await pool.open()
    store = PostgresApprovalStore(pool, table=fresh_table())
    assert store.url == f"postgresql://127.0.0.1:{postgres_server.port}/postgres"
    assert PASSWORD not in repr(store)
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    await store.record_result("k", "kept")  # committed, though the pool's connections are not
    await store.aclose()
    assert not pool.closed
    async with pool.connection() as db:
        row = await (await db.execute(f"SELECT result FROM {store.table}")).fetchone()
    assert row == ("kept",)
    await pool.close()


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
async def test_a_postgres_url_opens_a_postgres_store_with_the_default_table(scheme: str) -> None:
    store = store_from_url(f"{scheme}://agui:{PASSWORD}@127.0.0.1:1/agents")
    assert isinstance(store, PostgresApprovalStore)
    assert store.table == "agui_chat_approvals"
    assert PASSWORD not in repr(store)
    await store.aclose()


def test_an_unknown_store_url_lists_the_postgres_form() -> None:
    with pytest.raises(ValueError, match="postgresql://user:password@host:port/dbname"):
        store_from_url("mysql://h/db")


@pytest.mark.parametrize(
    ("blocked", "package"), [("psycopg", "psycopg 3"), ("psycopg_pool", "psycopg-pool")]
)
def test_without_the_extra_the_store_names_the_install_line(blocked: str, package: str) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{blocked!r}] = None  # as if the extra were not installed
        import agui_chat.stores
        try:
            agui_chat.stores.PostgresApprovalStore
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    expected = f"PostgresApprovalStore needs {package}: pip install 'agui-chat[postgres]'"
    assert done.stdout.strip() == expected
