"""A store URL's password is found the way libpq and redis-py read it (option names
percent-decoded: ``?passw%6Frd=``, ``?%70assword=``; the userinfo; ``?password=``;
``?sslpassword=``; libpq's ``key=value`` strings) and never shown: not in the store's
``repr`` or ``url``, not in its errors, not in any log line (psycopg_pool's own, whose pool is
named after the URL, included), against a closed port and against the real servers. A URL
that does not parse is named by a placeholder, never raw."""

from __future__ import annotations

import logging
import socket
import uuid

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreError, ConfigurationError
from agui_chat.stores import PostgresApprovalStore, RedisApprovalStore, store_from_url
from postgres_server import PASSWORD, PostgresServer
from redis_server import RedisServer

SECRET = "Zq-SECRET-7731"


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def everything_shown(caplog: pytest.LogCaptureFixture, *texts: str) -> str:
    """The texts, and every log record's message and exception, as one string."""
    logged = [record.getMessage() for record in caplog.records]
    logged += [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    return "\n".join([*texts, *logged])


def hostile_postgres_urls(port: int) -> list[str]:
    at = f"127.0.0.1:{port}/postgres"
    return [
        f"postgresql://agui:{SECRET}@{at}",
        f"postgresql://agui@{at}?password={SECRET}",
        f"postgresql://agui@{at}?passw%6Frd={SECRET}",
        f"postgresql://agui@{at}?%70assword={SECRET}",
        f"postgresql://agui@{at}?sslmode=disable&sslpassword={SECRET}",
        f"postgres://agui@127.0.0.1:{port},127.0.0.1:{port}/postgres?%70assword={SECRET}",
        f"postgresql://agui:{SECRET}?x@{at}",  # libpq: the password runs to the "@"
        f"postgresql://agui:{SECRET}#x@{at}",
    ]


async def test_a_postgres_password_in_any_form_is_never_shown_against_a_closed_port(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    port = closed_port()
    for url in hostile_postgres_urls(port):
        caplog.clear()
        store = PostgresApprovalStore(url, timeout=0.3)
        with pytest.raises(ApprovalStoreError) as failed:
            await store.claim("k", expires_at=None)
        await store.aclose()
        shown = everything_shown(caplog, repr(store), store.url, str(failed.value))
        assert SECRET not in shown, url
        assert f"127.0.0.1:{port}" in repr(store) and f"127.0.0.1:{port}" in str(failed.value)
        # psycopg_pool logged its own failures, under the pool's (URL) name
        assert [r for r in caplog.records if r.name.startswith("psycopg.pool")], url


async def test_a_password_given_as_an_encoded_option_reaches_postgres_and_is_never_shown(
    postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """libpq decodes ``passw%6Frd`` to ``password``: the store logs in with it, so it is the
    password, and it is hidden like one."""
    caplog.set_level(logging.DEBUG)
    at = f"127.0.0.1:{postgres_server.port}/postgres"
    for option in ("passw%6Frd", "%70assword"):
        store = PostgresApprovalStore(
            f"postgresql://agui@{at}?{option}={PASSWORD}", table=f"t_{uuid.uuid4().hex[:12]}"
        )
        assert await store.claim("k", expires_at=None)
        await store.aclose()
        assert store.url == f"postgresql://agui@{at}?{option}=***"
        assert PASSWORD not in everything_shown(caplog, repr(store))


async def test_a_wrong_encoded_password_is_refused_by_postgres_without_being_shown(
    postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"postgresql://agui@127.0.0.1:{postgres_server.port}/postgres?passw%6Frd={SECRET}"
    store = PostgresApprovalStore(url, timeout=0.5)
    with pytest.raises(ApprovalStoreError) as failed:
        await store.claim("k", expires_at=None)
    await store.aclose()
    shown = everything_shown(caplog, repr(store), str(failed.value))
    assert "password authentication failed" in shown  # said by the pool's own log lines
    assert SECRET not in shown


@pytest.mark.parametrize(
    "url",
    [
        f"host=127.0.0.1 password={SECRET}",  # libpq's key=value form: only URLs are taken
        f"host=127.0.0.1 password='{SECRET} with spaces'",
        f"dbname=postgresql://agui:{SECRET}@127.0.0.1/postgres",
        f"postgresql://agui:{SECRET}/x@127.0.0.1/postgres",  # the "port" is the password
        f"postgresql://agui@127.0.0.1/postgres?no_such_option=1&passw%6Frd={SECRET}",
    ],
)
def test_a_postgres_url_the_store_refuses_is_named_without_its_password(url: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        PostgresApprovalStore(url)
    message = str(refused.value)
    assert "cannot read the approval store URL" in message
    assert SECRET not in message


def test_a_libpq_key_value_string_is_shown_with_its_password_hidden() -> None:
    with pytest.raises(ConfigurationError) as refused:
        PostgresApprovalStore(f"host=127.0.0.1 port=5432 sslpassword={SECRET} user=agui")
    assert "host=127.0.0.1 port=5432 sslpassword=*** user=agui" in str(refused.value)


def hostile_redis_urls(port: int) -> list[str]:
    return [
        f"redis://user:{SECRET}@127.0.0.1:{port}/0",
        f"redis://:{SECRET}@127.0.0.1:{port}/0",
        f"redis://127.0.0.1:{port}/0?password={SECRET}",
        f"redis://127.0.0.1:{port}/0?passw%6Frd={SECRET}",
        f"redis://127.0.0.1:{port}/0?%70assword={SECRET}",
        f"redis://{SECRET}@127.0.0.1:{port}/0",  # redis-py: a user name alone, still secret
    ]


async def test_a_redis_password_in_any_form_is_never_shown_against_a_closed_port(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    port = closed_port()
    for url in hostile_redis_urls(port):
        caplog.clear()
        store = RedisApprovalStore(url, timeout=0.3)
        with pytest.raises(ApprovalStoreError) as failed:
            await store.claim("k", expires_at=None)
        await store.aclose()
        shown = everything_shown(caplog, repr(store), store.url, str(failed.value))
        assert SECRET not in shown, url
        assert f"127.0.0.1:{port}" in repr(store) and f"127.0.0.1:{port}" in str(failed.value)


async def test_an_encoded_redis_password_logs_in_and_is_never_shown(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """redis-py decodes ``%70assword`` to ``password``: with ``requirepass`` set, the store
    logs in with it. Its warnings (Redis here keeps no append-only file) name the store
    without it."""
    caplog.set_level(logging.DEBUG)
    admin = redis_asyncio.Redis(host="127.0.0.1", port=redis_server.port)
    await admin.config_set("requirepass", SECRET)
    try:
        for option in ("passw%6Frd", "%70assword", "password"):
            caplog.clear()
            url = f"redis://127.0.0.1:{redis_server.port}/0?{option}={SECRET}"
            store = RedisApprovalStore(url, prefix=f"{uuid.uuid4().hex}:")
            assert await store.epoch()  # checks what Redis keeps, and warns
            assert await store.claim("k", expires_at=None)
            await store.aclose()
            shown = everything_shown(caplog, repr(store))
            assert "may lose used approvals" in shown  # the warning was logged, and named it
            assert SECRET not in shown and f"127.0.0.1:{redis_server.port}" in shown
        wrong = RedisApprovalStore(f"redis://:wrong-{SECRET}@127.0.0.1:{redis_server.port}/0")
        with pytest.raises(ApprovalStoreError) as failed:
            await wrong.claim("k", expires_at=None)
        await wrong.aclose()
        assert SECRET not in everything_shown(caplog, repr(wrong), str(failed.value))
    finally:
        await admin.execute_command("AUTH", SECRET)
        await admin.config_set("requirepass", "")
        await admin.aclose()


@pytest.mark.parametrize(
    "url",
    [
        f"redis://user:{SECRET}/x@127.0.0.1:6379/0",  # redis-py reads the password as a port
        f"ftp://user:{SECRET}@127.0.0.1/0",
    ],
)
def test_a_redis_url_redis_py_refuses_is_named_without_its_password(url: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        RedisApprovalStore(url)
    assert "cannot read the Redis URL" in str(refused.value)
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        f"mysql://user:{SECRET}@db.example/approvals",
        f"mysql://db.example/approvals?passw%6Frd={SECRET}",
        f"sqlite:///approvals.db?%70assword={SECRET}",
        f"user:{SECRET}@db.example",
    ],
)
def test_a_store_url_nothing_reads_is_named_without_its_password(url: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        store_from_url(url)
    assert "cannot read the approval store URL" in str(refused.value)
    assert SECRET not in str(refused.value)


async def test_the_store_a_url_names_shows_the_address_and_hides_only_the_secret() -> None:
    postgres = store_from_url(
        f"postgresql://agui@db.example:5433/approvals?sslmode=require&passw%6Frd={SECRET}"
    )
    redis = store_from_url(f"redis://:{SECRET}@cache.example:6380/2?%70assword={SECRET}")
    assert isinstance(postgres, PostgresApprovalStore) and isinstance(redis, RedisApprovalStore)
    assert postgres.url == (
        "postgresql://agui@db.example:5433/approvals?sslmode=require&passw%6Frd=***"
    )
    assert redis.url == "redis://:***@cache.example:6380/2?%70assword=***"
    await postgres.aclose()
    await redis.aclose()
