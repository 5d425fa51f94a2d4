"""Fixtures of the fault lane (``tests/faults``): the stores its deployments share, started
here on 127.0.0.1 so the tests may kill them (``kill -9``) without touching the session's
own Redis and PostgreSQL: a Redis that persists (``appendonly yes``, ``appendfsync always``),
one that does not, and a PostgreSQL cluster whose WAL writer waits 10 s (so a commit that
did not wait for its WAL is surely lost with a ``kill -9``)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fault_lane import BOUND

from postgres_server import HOW as POSTGRES_HOW
from postgres_server import PostgresServer, find_postgres
from real_components import missing, require
from redis_server import HOW as REDIS_HOW
from redis_server import RedisServer


def _redis(persist: bool) -> Iterator[RedisServer]:
    executable = require("redis-server", REDIS_HOW)
    with tempfile.TemporaryDirectory(prefix="agui-faults-redis-") as directory:
        server = RedisServer(executable, Path(directory), persist=persist)
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="session")
def persistent_redis() -> Iterator[RedisServer]:
    yield from _redis(persist=True)


@pytest.fixture(scope="session")
def volatile_redis() -> Iterator[RedisServer]:
    yield from _redis(persist=False)


@pytest.fixture(scope="session")
def crashable_postgres() -> Iterator[PostgresServer]:
    bin_dir = find_postgres()
    if bin_dir is None:
        missing("PostgreSQL", POSTGRES_HOW)
    assert bin_dir is not None
    with tempfile.TemporaryDirectory(prefix="agui-faults-postgres-") as directory:
        server = PostgresServer(bin_dir, Path(directory), settings=["wal_writer_delay=10s"])
        server.start()
        try:
            yield server
        finally:
            if not server.running:
                server.start()  # a clean stop, whatever a test left
            server.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=BOUND) as http:
        yield http
