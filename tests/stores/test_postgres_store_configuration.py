"""How ``PostgresApprovalStore`` takes its settings: a table name PostgreSQL can hold with its
``_meta`` companion (at most 58 characters, so the companion fits PostgreSQL's 63) in the
schema given, where a role granted only reads and writes on tables made for it works; a
pool of ``max_connections`` (10 by default, at least 1), made without connecting (the store
may be made before any event loop runs), autocommitting, connecting within the timeout and
named in psycopg's own logs by the URL without its password; a URL it cannot read refused
saying what to give. Against a real PostgreSQL on 127.0.0.1 where a table is made."""

from __future__ import annotations

import logging
import uuid

import psycopg
import pytest

from agui_chat import ApprovalStoreUnavailableError, ConfigurationError
from agui_chat.stores import PostgresApprovalStore
from postgres_server import PostgresServer

CLOSED = "postgresql://agui@127.0.0.1:1/postgres"  # nothing listens: only made, never used


async def tables_in(server: PostgresServer, schema: str, prefix: str) -> set[str]:
    async with await psycopg.AsyncConnection.connect(server.url) as db:
        found = await db.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename LIKE %s",
            (schema, prefix + "%"),
        )
        return {row[0] for row in await found.fetchall()}


async def test_the_longest_table_name_is_58_characters_and_its_companion_fits(
    postgres_server: PostgresServer,
) -> None:
    name = f"t{uuid.uuid4().hex}".ljust(58, "x")
    store = PostgresApprovalStore(postgres_server.url, table=name)
    assert await store.claim("k", expires_at=None)
    await store.aclose()
    assert await tables_in(postgres_server, "public", name) == {name, f"{name}_meta"}
    with pytest.raises(ConfigurationError, match="at most 58"):
        PostgresApprovalStore(postgres_server.url, table=name + "x")


async def test_a_schema_qualified_table_keeps_its_epoch_in_the_same_schema(
    postgres_server: PostgresServer,
) -> None:
    schema, name = f"s_{uuid.uuid4().hex[:8]}", f"t_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(postgres_server.url, autocommit=True) as db:
        await db.execute(f"CREATE SCHEMA {schema}")
    store = PostgresApprovalStore(postgres_server.url, table=f"{schema}.{name}")
    assert await store.claim("k", expires_at=None)
    await store.aclose()
    assert await tables_in(postgres_server, schema, name) == {name, f"{name}_meta"}
    assert await tables_in(postgres_server, "public", name) == set()


async def test_a_role_granted_only_what_it_uses_works_on_a_schema_qualified_table(
    postgres_server: PostgresServer,
) -> None:
    """The tables made beforehand by an administrator in a schema of their own, the server's
    role granted the schema's use and the rows' reads and writes, never the right to create:
    the store finds its tables there and creates nothing."""
    schema, name = f"s_{uuid.uuid4().hex[:8]}", f"t_{uuid.uuid4().hex[:8]}"
    role, password = f"r_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    async with await psycopg.AsyncConnection.connect(postgres_server.url, autocommit=True) as db:
        await db.execute(f"CREATE SCHEMA {schema}")
        made = PostgresApprovalStore(postgres_server.url, table=f"{schema}.{name}")
        await made.epoch()
        await made.aclose()
        await db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        await db.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        await db.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.{name}, {schema}.{name}_meta "
            f"TO {role}"
        )
    url = f"postgresql://{role}:{password}@127.0.0.1:{postgres_server.port}/postgres"
    store = PostgresApprovalStore(url, table=f"{schema}.{name}")
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    await store.record_result("k", "done")
    assert await store.get_result("k") == "done"
    await store.aclose()


@pytest.mark.parametrize("table", ["1schema.approvals", "my schema.approvals", ".approvals"])
def test_a_schema_that_is_not_a_postgresql_name_is_refused(table: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        PostgresApprovalStore(CLOSED, table=table)
    assert str(refused.value) == (
        "table must be a PostgreSQL name such as 'agui_chat_approvals' or 'myschema.approvals' "
        f"(letters, digits, _; at most 58), got {table!r}"
    )


def test_a_table_that_is_not_a_string_is_refused_as_configuration() -> None:
    """A setting read from somewhere that gave no name at all: said, not an AttributeError."""
    with pytest.raises(ConfigurationError, match="got None"):
        PostgresApprovalStore(CLOSED, table=None)  # type: ignore[arg-type]


def test_the_pool_holds_ten_connections_unless_told_and_at_least_one() -> None:
    """Made outside any event loop, as a synchronous setup does: nothing connects yet, and
    an idle store keeps one connection open."""
    default = PostgresApprovalStore(CLOSED)
    assert (default._pool.min_size, default._pool.max_size) == (1, 10)
    assert PostgresApprovalStore(CLOSED, max_connections=1)._pool.max_size == 1
    for wrong in ({"max_connections": 0}, {"timeout": 0.0}, {"timeout": -1.0}):
        with pytest.raises(ConfigurationError) as refused:
            PostgresApprovalStore(CLOSED, **wrong)  # type: ignore[arg-type]
        assert str(refused.value) == "timeout must be positive and max_connections at least 1"


@pytest.mark.parametrize(("timeout", "seconds"), [(0.5, 2), (2.0, 2), (3.5, 4)])
def test_each_connection_commits_every_statement_and_connects_within_the_timeout(
    timeout: float, seconds: int
) -> None:
    """libpq's ``connect_timeout`` counts whole seconds and treats less than 2 as 2."""
    store = PostgresApprovalStore(CLOSED, timeout=timeout)
    assert store._pool.kwargs == {"autocommit": True, "connect_timeout": seconds}


async def test_the_pools_own_log_lines_name_the_store_without_its_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """psycopg's pool logs each failed connection under the pool's name: the store's URL."""
    store = PostgresApprovalStore("postgresql://agui:pw-LEAK@127.0.0.1:1/postgres", timeout=0.5)
    with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
        with pytest.raises(ApprovalStoreUnavailableError):
            await store.claim("k", expires_at=None)
        await store.aclose()
    logged = [r.getMessage() for r in caplog.records if r.name == "psycopg.pool"]
    assert logged, "the pool logged no failed connection"
    named = "error connecting in 'agui_chat approvals postgresql://agui:***@127.0.0.1:1/postgres'"
    assert all(line.startswith(named) for line in logged), logged
    assert not [line for line in logged if "pw-LEAK" in line]


def test_a_url_it_cannot_read_is_refused_saying_what_to_give() -> None:
    with pytest.raises(ConfigurationError) as refused:
        PostgresApprovalStore("postgresql://agui:pw-LEAK@127.0.0.1/db?no_such_option=1")
    assert str(refused.value) == (
        "cannot read the approval store URL "
        "'postgresql://agui:***@127.0.0.1/db?no_such_option=1': give "
        "postgresql://user:password@host:port/dbname with libpq's ?options only"
    )
