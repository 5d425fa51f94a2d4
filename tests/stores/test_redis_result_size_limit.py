"""A Redis store keeps a result up to Redis's own limit (``proto-max-bulk-len``, read with the
store's epoch), counted in bytes as Redis counts them: a result exactly at the limit is kept,
one byte more is refused before it is sent (``ApprovalStoreValueError`` naming both sizes;
Redis itself would close the connection), and the claim is left as it was. Against a real
``redis-server`` on 127.0.0.1 with its smallest limit, 1 MiB."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreValueError
from agui_chat.stores import ClaimRecord, RedisApprovalStore
from redis_server import RedisServer

LIMIT = 1024 * 1024
KEPT_AS = "d:"  # what the store puts before a result in the value it sets


@pytest.fixture
async def limited(redis_server: RedisServer) -> AsyncIterator[Any]:
    """The session's Redis with its smallest bulk limit, put back to the default after."""
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    await raw.config_set("proto-max-bulk-len", str(LIMIT))
    yield raw
    await raw.config_set("proto-max-bulk-len", str(512 * 1024 * 1024))
    await raw.aclose()


async def test_a_result_at_the_limit_is_kept_and_one_byte_more_is_refused(
    redis_server: RedisServer, limited: Any
) -> None:
    store = RedisApprovalStore(redis_server.url)
    await store.epoch()  # reads the limit
    # Two bytes a character in UTF-8: the limit is in bytes, not characters.
    at_the_limit = "é" * ((LIMIT - len(KEPT_AS)) // 2)
    assert len((KEPT_AS + at_the_limit).encode()) == LIMIT
    for key in ("at", "over"):
        assert await store.claim(key, expires_at=None, owner="a")
        assert await store.mark_started(key, owner="a")

    await store.record_result("at", at_the_limit)
    assert await store.get_result("at") == at_the_limit

    with pytest.raises(ApprovalStoreValueError) as refused:
        await store.record_result("over", at_the_limit + "x")
    assert str(refused.value) == (
        f"the approval store {store.url} cannot hold a result of {LIMIT + 1} bytes: Redis "
        f"takes at most {LIMIT} (proto-max-bulk-len)"
    )
    assert await store.record("over") == ClaimRecord("a", True, None)  # as it was: no result
    await store.aclose()
