"""Issue 26 item 3: a Redis that may lose keys (no append-only file, an eviction policy that
drops them) is warned about when the store is first used, and refused under
``strict=True``; an ``AGUIServer`` on such a store under ``strict`` fails its startup. A
Redis configured as docs/stores.md says is taken without a word. Against a real
``redis-server``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreError, ApprovalStoreUnavailableError
from agui_chat.agui import AGUIServer
from agui_chat.stores import RedisApprovalStore
from agui_chat.testing import ScriptedChatClient
from redis_server import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[Any]:
    client = redis_asyncio.Redis.from_url(redis_server.url)
    yield client
    await client.config_set("appendonly", "no")
    await client.config_set("maxmemory", "0")
    await client.config_set("maxmemory-policy", "noeviction")
    await client.aclose()


async def test_a_redis_without_the_append_only_file_is_warned_about(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisApprovalStore(redis_server.url)
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        assert await store.epoch() is not None  # it still works
        await store.epoch()
    warned = [r.getMessage() for r in caplog.records if r.name == "agui_chat.stores"]
    assert len(warned) == 1, warned  # once, at first use
    assert "may lose used approvals: appendonly is not yes" in warned[0]
    assert "docs/stores.md" in warned[0]
    await store.aclose()


async def test_an_evicting_redis_is_named_by_its_policy(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await raw.config_set("appendonly", "yes")
    await raw.config_set("maxmemory", "100mb")
    await raw.config_set("maxmemory-policy", "allkeys-lru")
    store = RedisApprovalStore(redis_server.url)
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        await store.epoch()
    assert "maxmemory-policy is 'allkeys-lru', not 'noeviction'" in caplog.text
    assert "appendonly" not in caplog.text
    await store.aclose()


async def test_a_redis_that_keeps_its_keys_is_taken_without_a_word(
    redis_server: RedisServer, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await raw.config_set("appendonly", "yes")
    await raw.config_set("maxmemory", "100mb")
    await raw.config_set("maxmemory-policy", "noeviction")
    store = RedisApprovalStore(redis_server.url, strict=True)
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        assert await store.epoch() is not None
    assert caplog.text == ""
    await store.aclose()


async def test_strict_refuses_a_redis_that_may_lose_keys_and_the_server_does_not_start(
    redis_server: RedisServer, raw: Any
) -> None:
    store = RedisApprovalStore(redis_server.url, strict=True)
    with pytest.raises(ApprovalStoreError, match="appendonly is not yes") as refused:
        await store.epoch()
    assert not isinstance(refused.value, ApprovalStoreUnavailableError)  # not transient
    assert store.known_epoch is None

    server = AGUIServer(
        ScriptedChatClient(lambda messages, options: "hi"),
        signing_key="k" * 32,
        approval_store=store,
    )
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await server({"type": "lifespan"}, receive, send)
    assert sent[0]["type"] == "lifespan.startup.failed"
    assert "may lose used approvals" in sent[0]["message"]
    await store.aclose()


async def test_an_unreachable_redis_is_unavailable_not_misconfigured() -> None:
    store = RedisApprovalStore("redis://127.0.0.1:1/0", timeout=0.5, strict=True)
    with pytest.raises(ApprovalStoreUnavailableError):
        await store.epoch()
    await store.aclose()
