"""What a Redis approval store says when it cannot be sure Redis keeps every key: one warning
at first use that names each reason in full (no append-only file; an eviction policy under a
memory limit; a configuration this user may not read) and where to read more, or under
``strict=True`` a refusal. A policy without a memory limit evicts nothing and is not
mentioned. Against a real ``redis-server`` on 127.0.0.1."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreMisconfiguredError
from agui_chat.stores import RedisApprovalStore
from redis_server import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[Any]:
    """A client of the test's own, and the session Redis's settings put back afterwards."""
    client = redis_asyncio.Redis.from_url(redis_server.url)
    yield client
    await client.config_set("appendonly", "no")
    await client.config_set("maxmemory", "0")
    await client.config_set("maxmemory-policy", "noeviction")
    await client.aclose()


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agui_chat.stores"]


async def test_the_warning_names_every_way_the_redis_may_lose_keys_in_one_sentence(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await raw.config_set("maxmemory", "100mb")
    await raw.config_set("maxmemory-policy", "allkeys-lru")
    store = RedisApprovalStore(redis_server.url)
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        await store.epoch()
    assert warnings_in(caplog) == [
        f"the approval store {store.url} may lose used approvals: appendonly is not yes (a "
        "restart loses the claims since the last snapshot, or all of them); maxmemory-policy "
        "is 'allkeys-lru', not 'noeviction' (evicted claims make used approvals new) (see "
        "docs/stores.md)"
    ]
    await store.aclose()


async def test_an_eviction_policy_without_a_memory_limit_evicts_nothing_and_is_not_warned_about(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """``maxmemory 0`` means no limit: Redis never evicts, whatever the policy says."""
    await raw.config_set("appendonly", "yes")
    await raw.config_set("maxmemory", "0")
    await raw.config_set("maxmemory-policy", "allkeys-lru")
    store = RedisApprovalStore(redis_server.url, strict=True)
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        assert await store.epoch() is not None
    assert caplog.text == ""
    await store.aclose()


async def test_a_redis_user_that_may_not_read_the_configuration_is_warned_about_or_refused(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """An ACL without ``CONFIG`` (as managed Redis services give): the store cannot tell
    whether Redis keeps its keys, so it says so (and ``strict`` refuses), naming what Redis
    answered; everything else works."""
    user = f"agui_noconfig_{uuid.uuid4().hex[:8]}"
    await raw.execute_command(
        "ACL", "SETUSER", user, "on", ">pw-noconfig", "~*", "+@all", "-config"
    )
    url = f"redis://{user}:pw-noconfig@127.0.0.1:{redis_server.port}/0"
    try:
        store = RedisApprovalStore(url)
        with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
            assert await store.epoch() is not None
            assert await store.claim("k", expires_at=None, owner="a")
        (warned,) = warnings_in(caplog)
        prefix = f"the approval store {store.url} may lose used approvals: its configuration "
        assert warned.startswith(prefix + "could not be read (")
        assert "'config|get'" in warned and warned.endswith(") (see docs/stores.md)")
        assert "pw-noconfig" not in warned
        await store.aclose()

        strict = RedisApprovalStore(url, strict=True)
        with pytest.raises(ApprovalStoreMisconfiguredError, match="could not be read"):
            await strict.epoch()
        assert strict.known_epoch is None
        await strict.aclose()
    finally:
        await raw.execute_command("ACL", "DELUSER", user)
