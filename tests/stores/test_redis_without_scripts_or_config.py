"""A Redis whose operator turned commands off (``rename-command EVALSHA ""``, as some hosted
services do with scripting and ``CONFIG``): the store cannot work there, and says so as a
refusal of this server (``ApprovalStoreMisconfiguredError``, in Redis's words), never as an
outage to retry; a ``CONFIG`` it may not run is said in the warning instead. Against a real
``redis-server`` on 127.0.0.1 started with those commands renamed away."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from agui_chat import ApprovalStoreMisconfiguredError
from agui_chat.stores import RedisApprovalStore
from redis_server import redis_without


@pytest.fixture
def url_of_a_redis_without_scripts_or_config(tmp_path: Path) -> Iterator[str]:
    with redis_without(tmp_path, "EVAL", "EVALSHA", "CONFIG") as url:
        yield url


async def test_every_call_that_needs_a_script_is_refused_as_misconfigured(
    url_of_a_redis_without_scripts_or_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisApprovalStore(url_of_a_redis_without_scripts_or_config)
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "epoch": store.epoch,
        "claim": lambda: store.claim("k", expires_at=None, owner="a"),
        "mark_started": lambda: store.mark_started("k", owner="a"),
        "renew": lambda: store.renew(["k"], owner="a", lease_until=None),
        "release": lambda: store.release("k", owner="a"),
    }
    with caplog.at_level(logging.WARNING, logger="agui_chat.stores"):
        for name, call in calls.items():
            with pytest.raises(ApprovalStoreMisconfiguredError) as refused:
                await call()
            message = str(refused.value)
            assert message.startswith(f"the approval store {store.url} refused: ResponseError: ")
            assert "unknown command 'EVALSHA'" in message, name
    assert await store.record("k") is None  # plain reads still work
    await store.aclose()
    (warned,) = [r.getMessage() for r in caplog.records if r.name == "agui_chat.stores"]
    prefix = f"the approval store {store.url} may lose used approvals: its configuration could "
    assert warned.startswith(prefix + "not be read (unknown command 'CONFIG'")
    assert warned.endswith(") (see docs/stores.md)")
