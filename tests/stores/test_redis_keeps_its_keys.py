"""Issue 26 item 3: a Redis that may lose keys (no append-only file, an eviction policy that
drops them) is warned about when the store is first used, and refused under
``strict=True``; an ``AGUIServer`` on such a store under ``strict`` fails its startup. A
Redis configured as docs/stores.md says is taken without a word. The same switch in a store
URL, ``?strict=true`` / ``?strict=false``, taken out before redis-py reads the URL. Against
a real ``redis-server``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreError, ApprovalStoreUnavailableError, ConfigurationError
from agui_chat.agui import AGUIServer
from agui_chat.stores import RedisApprovalStore, store_from_url
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

    started = await startup(serving(store))
    assert started["type"] == "lifespan.startup.failed"
    assert "may lose used approvals" in started["message"]
    await store.aclose()


def serving(store: RedisApprovalStore | str) -> AGUIServer:
    return AGUIServer(
        ScriptedChatClient(lambda messages, options: "hi"),
        signing_key="k" * 32,
        approval_store=store,
    )


async def startup(server: AGUIServer) -> dict[str, Any]:
    """What the server answers to the ASGI lifespan's startup (then its shutdown)."""
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await server({"type": "lifespan"}, receive, send)
    return sent[0]


@pytest.fixture
async def agent_url(redis_server: RedisServer, raw: Any) -> AsyncIterator[str]:
    """The URL of a Redis user with a password (so the tests see it hidden), the server
    without the append-only file."""
    await raw.execute_command("ACL", "SETUSER", "agent", "on", ">s3cret-pw", "~*", "&*", "+@all")
    yield f"redis://agent:s3cret-pw@127.0.0.1:{redis_server.port}/0"
    await raw.execute_command("ACL", "DELUSER", "agent")


async def test_strict_true_in_the_url_fails_the_startup_naming_the_store_hidden(
    redis_server: RedisServer, agent_url: str
) -> None:
    started = await startup(serving(f"{agent_url}?strict=true"))
    assert started["type"] == "lifespan.startup.failed"
    shown = f"redis://agent:***@127.0.0.1:{redis_server.port}/0"
    assert f"the approval store {shown} may lose used approvals" in started["message"]
    assert "appendonly is not yes" in started["message"]
    assert "s3cret-pw" not in started["message"]


@pytest.mark.parametrize("option", ["?strict=false", "?strict=False", ""])
async def test_strict_false_or_absent_in_the_url_starts_and_warns(
    agent_url: str, option: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        started = await startup(serving(agent_url + option))
    assert started["type"] == "lifespan.startup.complete"
    warned = [r.getMessage() for r in caplog.records if r.name == "agui_chat.stores"]
    assert len(warned) == 1 and "may lose used approvals: appendonly is not yes" in warned[0]
    assert "s3cret-pw" not in caplog.text


async def test_the_option_is_taken_out_before_redis_py_reads_the_url(
    agent_url: str, raw: Any
) -> None:
    # redis-py hands an option it does not know to the connection, which refuses it: the
    # store works, so the connection never saw ``strict``; the other options reach Redis.
    store = store_from_url(f"{agent_url}?client_name=agui-agent&%73trict=true")
    assert store.strict  # the name read percent-decoded, as redis-py reads names
    with pytest.raises(ApprovalStoreError, match="appendonly is not yes"):
        await store.epoch()
    assert "agui-agent" in [c["name"] for c in await raw.client_list()]
    assert repr(store).endswith("/0?client_name=agui-agent')")
    await store.aclose()


@pytest.mark.parametrize("option", ["strict=maybe", "strict=", "strict=true&strict=false"])
def test_any_other_strict_is_refused_naming_the_url_hidden(option: str) -> None:
    with pytest.raises(ConfigurationError, match=r"\?strict=true .* or \?strict=false") as refused:
        store_from_url(f"redis://agent:s3cret-pw@127.0.0.1:6379/0?{option}")
    assert "redis://agent:***@127.0.0.1:6379/0" in str(refused.value)
    assert "s3cret-pw" not in str(refused.value)


async def test_an_unreachable_redis_is_unavailable_not_misconfigured() -> None:
    store = RedisApprovalStore("redis://127.0.0.1:1/0", timeout=0.5, strict=True)
    with pytest.raises(ApprovalStoreUnavailableError):
        await store.epoch()
    await store.aclose()
