"""The approval stores every store test runs against: memory, a SQLite file, a real Redis and
a real PostgreSQL (each started on 127.0.0.1 by its fixture)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agui_chat.stores import (
    ApprovalStore,
    InMemoryApprovalStore,
    PostgresApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from fake_clock import FakeClock
from postgres_server import PostgresServer
from redis_server import RedisServer


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> AsyncIterator[Callable[[], ApprovalStore]]:
    """A factory of stores that all see the same records (two "processes" of one
    deployment, as far as the store can tell)."""
    made: list[ApprovalStore] = []
    shared_memory = InMemoryApprovalStore(clock=clock)
    table = f"contract_{uuid.uuid4().hex[:12]}"  # each test its own table

    def make() -> ApprovalStore:
        if request.param == "memory":
            return shared_memory
        if request.param == "sqlite":
            store: ApprovalStore = SQLiteApprovalStore(tmp_path / "approvals.db", clock=clock)
        elif request.param == "postgres":
            postgres: PostgresServer = request.getfixturevalue("postgres_server")
            store = PostgresApprovalStore(postgres.url, table=table, clock=clock)
        else:
            redis: RedisServer = request.getfixturevalue("redis_server")
            store = RedisApprovalStore(redis.url, clock=clock)
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()
